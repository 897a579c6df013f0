// c10/cuda/CUDAGuard.h for the CuSeT CPU emulator: one device, so device and stream guards
// change nothing. Shared by the shim and the real-torch fallback (see CUDAStream.h).
#ifndef CUSET_C10_CUDAGUARD_H
#define CUSET_C10_CUDAGUARD_H

#include <c10/cuda/CUDAStream.h>

#include <optional>

namespace c10 {
namespace cuda {

struct CUDAGuard {
  explicit CUDAGuard(c10::DeviceIndex) {}
  explicit CUDAGuard(c10::Device) {}
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  void set_device(c10::Device) {}
  void reset_device(c10::Device) {}
  void set_index(c10::DeviceIndex) {}
  c10::Device original_device() const { return c10::Device(c10::DeviceType::CUDA, 0); }
  c10::Device current_device() const { return c10::Device(c10::DeviceType::CUDA, 0); }
};

struct OptionalCUDAGuard {
  OptionalCUDAGuard() = default;
  explicit OptionalCUDAGuard(std::optional<c10::Device>) {}
  explicit OptionalCUDAGuard(c10::Device) {}
  explicit OptionalCUDAGuard(std::optional<c10::DeviceIndex>) {}
  OptionalCUDAGuard(const OptionalCUDAGuard&) = delete;
  OptionalCUDAGuard& operator=(const OptionalCUDAGuard&) = delete;
  void set_device(c10::Device) {}
  void reset_device(c10::Device) {}
  void set_index(c10::DeviceIndex) {}
  void reset() {}
  std::optional<c10::Device> original_device() const { return c10::Device(c10::DeviceType::CUDA, 0); }
  std::optional<c10::Device> current_device() const { return c10::Device(c10::DeviceType::CUDA, 0); }
};

struct CUDAStreamGuard {
  explicit CUDAStreamGuard(CUDAStream) {}
  void reset_stream(CUDAStream) {}
  CUDAStream original_stream() const { return CUDAStream(); }
  CUDAStream current_stream() const { return CUDAStream(); }
};

struct OptionalCUDAStreamGuard {
  OptionalCUDAStreamGuard() = default;
  explicit OptionalCUDAStreamGuard(CUDAStream) {}
  explicit OptionalCUDAStreamGuard(std::optional<CUDAStream>) {}
  void reset_stream(CUDAStream) {}
  void reset() {}
};

}  // namespace cuda
}  // namespace c10

namespace at {
namespace cuda {
using c10::cuda::CUDAGuard;
using c10::cuda::CUDAStreamGuard;
using c10::cuda::OptionalCUDAGuard;
using c10::cuda::OptionalCUDAStreamGuard;
}  // namespace cuda
}  // namespace at

#endif  // CUSET_C10_CUDAGUARD_H
