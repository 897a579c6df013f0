// c10/cuda/CUDAException.h for the CuSeT CPU emulator: C10_CUDA_CHECK and
// C10_CUDA_KERNEL_LAUNCH_CHECK raise torch's "CUDA error: ..." through TORCH_CHECK (the
// emulator records a refused launch, e.g. 2048 threads per block, as cudaGetLastError does).
// Shared by the shim and the real-torch fallback (see CUDAStream.h).
#ifndef CUSET_C10_CUDAEXCEPTION_H
#define CUSET_C10_CUDAEXCEPTION_H

#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#define C10_CUDA_CHECK(EXPR)                                                                                   \
  do {                                                                                                         \
    const cudaError_t cuset_err_ = (EXPR);                                                                     \
    TORCH_CHECK(cuset_err_ == cudaSuccess, "CUDA error: ", cudaGetErrorString(cuset_err_),                     \
                "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace " \
                "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1");             \
  } while (0)
#define C10_CUDA_CHECK_WARN(EXPR)                                                             \
  do {                                                                                        \
    const cudaError_t cuset_err_ = (EXPR);                                                    \
    if (cuset_err_ != cudaSuccess) TORCH_WARN("CUDA warning: ", cudaGetErrorString(cuset_err_)); \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define C10_CUDA_IGNORE_ERROR(EXPR) (void)(EXPR)
#define C10_CUDA_CLEAR_ERROR() (void)cudaGetLastError()
#define C10_CUDA_ERROR_HANDLED(EXPR) EXPR
#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
#define TORCH_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)

#endif  // CUSET_C10_CUDAEXCEPTION_H
