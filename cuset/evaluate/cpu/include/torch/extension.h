// torch/extension.h for the CuSeT CPU emulator: a small stand-in for torch's C++ API, enough for
// KernelBench-style `load_inline` host code (tensor metadata, factories, views, dtype and
// device checks, TORCH_CHECK, AT_DISPATCH_*, accessors, streams and guards), compiled in
// about a second instead of torch's headers' twenty. cuset.evaluate.cpu.kernelbench builds
// with it first and falls back to real torch when host code needs more of ATen.
//
//   at::Tensor / torch::Tensor   ATen/core/Tensor.h       (tensors live in emulated device memory)
//   TORCH_CHECK & co.            c10/util/Exception.h     (-> Python RuntimeError/ValueError/...)
//   AT_DISPATCH_*                ATen/Dispatch.h
//   c10::Half, c10::BFloat16     c10/util/Half.h
//   streams, guards, CUDA checks c10/cuda/*, ATen/cuda/* (included explicitly, as with torch)
//   at::acc_type, opmath_type    ATen/AccumulateType.h, ATen/OpMathType.h (likewise)
//
// PYBIND11_MODULE bodies compile against a do-nothing pybind11::module_: the bindings the
// evaluator uses are C-ABI wrappers it generates (torch/cuset_bind.h).
#ifndef CUSET_TORCH_EXTENSION_H
#define CUSET_TORCH_EXTENSION_H

#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/macros/Macros.h>
#include <c10/util/irange.h>

#include <string>
#include <tuple>
#include <vector>

namespace at {
inline std::optional<Device> device_of(const Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return t.device();
}
struct NoGradGuard {};
struct AutoDispatchBelowAutograd {};
}  // namespace at

namespace c10 {
struct InferenceMode {
  explicit InferenceMode(bool = true) {}
};
}  // namespace c10

namespace torch {
using namespace at;
using at::Tensor;
using Dtype = at::ScalarType;
using NoGradGuard = at::NoGradGuard;
template <class F>
F wrap_pybind_function(F f) {
  return f;
}
namespace autograd {
using at::NoGradGuard;
}
}  // namespace torch

namespace pybind11 {
class module_ {
 public:
  template <class... A>
  module_& def(A&&...) {
    return *this;
  }
  template <class... A>
  module_ def_submodule(A&&...) {
    return *this;
  }
  module_& doc() { return *this; }
  template <class T>
  module_& attr(T&&) {
    return *this;
  }
  template <class T>
  module_& operator=(T&&) {
    return *this;
  }
};
using module = module_;
struct arg {
  explicit arg(const char*) {}
  template <class T>
  arg& operator=(T&&) {
    return *this;
  }
  arg& noconvert(bool = true) { return *this; }
  arg& none(bool = true) { return *this; }
};
struct return_value_policy {
  static constexpr int reference = 0, move = 1, copy = 2, automatic = 3;
};
struct call_guard_base {};
template <class... T>
struct call_guard : call_guard_base {};
struct gil_scoped_release {};
struct gil_scoped_acquire {};
}  // namespace pybind11
namespace py = pybind11;

#define CUSET_PYBIND_CAT2(a, b) a##b
#define CUSET_PYBIND_CAT(a, b) CUSET_PYBIND_CAT2(a, b)
#define PYBIND11_MODULE(name, variable) \
  [[maybe_unused]] static void CUSET_PYBIND_CAT(cuset_pybind_module_, __LINE__)([[maybe_unused]] ::pybind11::module_ & variable)
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME cuset_extension
#endif

#endif  // CUSET_TORCH_EXTENSION_H
