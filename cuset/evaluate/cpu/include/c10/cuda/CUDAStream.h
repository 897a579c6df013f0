// c10/cuda/CUDAStream.h for the CuSeT CPU emulator. The emulator runs every launch synchronously,
// so each stream is the default stream; the stream objects exist so that host code written
// for torch (`kernel<<<g, b, 0, at::cuda::getCurrentCUDAStream()>>>`) compiles unchanged.
// Written against the API real torch and the shim share (c10::Device), so the real-torch
// fallback uses it too (include/torch/cuset_fallback/).
#ifndef CUSET_C10_CUDASTREAM_H
#define CUSET_C10_CUDASTREAM_H

#include <c10/core/Device.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace c10 {
namespace cuda {

class CUDAStream {
 public:
  CUDAStream() = default;
  explicit CUDAStream(cudaStream_t s) : s_(s) {}
  cudaStream_t stream() const { return s_; }
  operator cudaStream_t() const { return s_; }
  c10::DeviceIndex device_index() const { return 0; }
  c10::Device device() const { return c10::Device(c10::DeviceType::CUDA, 0); }
  int64_t id() const { return 0; }
  int priority() const { return 0; }
  bool query() const { return true; }
  void synchronize() const {}
  friend bool operator==(const CUDAStream& a, const CUDAStream& b) { return a.s_ == b.s_; }
  friend bool operator!=(const CUDAStream& a, const CUDAStream& b) { return a.s_ != b.s_; }

 private:
  cudaStream_t s_ = nullptr;
};

inline CUDAStream getCurrentCUDAStream(c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getDefaultCUDAStream(c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getStreamFromPool(bool = false, c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getStreamFromPool(int, c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getStreamFromExternal(cudaStream_t s, c10::DeviceIndex) { return CUDAStream(s); }
inline void setCurrentCUDAStream(CUDAStream) {}
inline c10::DeviceIndex device_count() noexcept { return 1; }
inline c10::DeviceIndex current_device() { return 0; }
inline void set_device(c10::DeviceIndex) {}
inline void device_synchronize() {}

}  // namespace cuda
}  // namespace c10

namespace at {
namespace cuda {
using c10::cuda::CUDAStream;
using c10::cuda::current_device;
using c10::cuda::device_count;
using c10::cuda::device_synchronize;
using c10::cuda::getCurrentCUDAStream;
using c10::cuda::getDefaultCUDAStream;
using c10::cuda::getStreamFromExternal;
using c10::cuda::getStreamFromPool;
using c10::cuda::set_device;
using c10::cuda::setCurrentCUDAStream;
}  // namespace cuda
}  // namespace at

#endif  // CUSET_C10_CUDASTREAM_H
