// ATen/cuda/CUDAContext.h for the CuSeT CPU emulator: streams, guards, CUDA error checks and
// the emulated device's properties (cuset_runtime_api.h). cuBLAS/cuSPARSE handles are absent:
// the emulator has no CUDA libraries. Shared by the shim and the real-torch fallback.
#ifndef CUSET_ATEN_CUDACONTEXT_H
#define CUSET_ATEN_CUDACONTEXT_H

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace at {
namespace cuda {

inline cudaDeviceProp* getDeviceProperties(c10::DeviceIndex = 0) {
  static cudaDeviceProp prop = [] {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    return p;
  }();
  return &prop;
}
inline cudaDeviceProp* getCurrentDeviceProperties() { return getDeviceProperties(0); }
inline int warp_size() { return 32; }
inline bool is_available() { return true; }
inline int64_t getNumGPUs() { return 1; }

}  // namespace cuda
}  // namespace at

#endif  // CUSET_ATEN_CUDACONTEXT_H
