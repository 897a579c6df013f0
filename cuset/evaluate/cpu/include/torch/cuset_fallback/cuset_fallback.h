// cuset_fallback.h: the CuSeT CPU emulator's real-torch fallback, for KernelBench solutions whose
// host code needs more of ATen than the shim (torch/extension.h next door) has.
//
// cuset.evaluate.cpu.kernelbench builds such a solution with torch's own load_inline as a CPU
// extension: the CUDA source translated to C++ (as for every emulator build), cuset_cuda.h
// forced in first (-include), this folder ahead of torch's headers (its c10/cuda and ATen/cuda
// headers forward to the emulator's streams, guards and CUDA checks, since a CPU build of
// torch has none), and this header after <torch/extension.h>. It makes the CPU tensors the
// evaluator passes in look like CUDA tensors to the host code, and gives the extension hooks
// the evaluator calls around each call:
//
//   _cuset_enter()   CPU allocations come from an allocator that fills them with the
//                    emulator's garbage byte and registers them as device memory (so a
//                    kernel may use torch::empty's output, and an unwritten one shows)
//   _cuset_exit()    torch's allocator again
//   _cuset_register(ptr, bytes) / _cuset_unregister(ptr)   the caller's tensors, as device memory
#ifndef CUSET_TORCH_FALLBACK_H
#define CUSET_TORCH_FALLBACK_H

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/extension.h>

#include <cstring>

namespace cuset_fallback {

class GarbageAllocator final : public c10::Allocator {
 public:
  c10::Allocator* base = nullptr;

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = base->allocate(n);
    void* p = inner.get();
    if (p && n) {
      cuset::fill_garbage(p, n);
      cuset::register_external(p, n);
    }
    auto* held = new c10::DataPtr(std::move(inner));
    return c10::DataPtr(p, held, &GarbageAllocator::release, c10::Device(c10::DeviceType::CPU));
  }
  static void release(void* ctx) {
    auto* held = static_cast<c10::DataPtr*>(ctx);
    if (held->get()) cuset::unregister_external(held->get());
    delete held;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

inline GarbageAllocator& garbage_allocator() {
  static GarbageAllocator a;
  return a;
}

}  // namespace cuset_fallback

inline void _cuset_enter() {
  auto& g = cuset_fallback::garbage_allocator();
  c10::Allocator* current = c10::GetCPUAllocator();
  if (current != &g) g.base = current;
  c10::SetCPUAllocator(&g, 0);
}
inline void _cuset_exit() {
  auto& g = cuset_fallback::garbage_allocator();
  if (g.base) c10::SetCPUAllocator(g.base, 0);
}
inline void _cuset_register(int64_t ptr, int64_t bytes) { cuset::register_external((const void*)ptr, (size_t)bytes); }
inline void _cuset_unregister(int64_t ptr) { cuset::unregister_external((const void*)ptr); }

// The evaluator's tensors are CPU tensors standing for CUDA ones.
#define is_cuda() is_cpu()
#define kCUDA kCPU

#endif  // CUSET_TORCH_FALLBACK_H
