// c10::TensorOptions for the CuSeT CPU emulator's torch shim (see torch/extension.h):
// dtype (default float32), device (default CPU, as in torch: `torch::empty({n})` is a host
// tensor, and a kernel launched on it faults), layout, memory format; builders return copies.
#ifndef CUSET_C10_TENSOROPTIONS_H
#define CUSET_C10_TENSOROPTIONS_H

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace c10 {

enum class Layout : int8_t { Strided = 0, Sparse = 1 };
constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::Sparse;

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType s) : dtype_(s) {}
  TensorOptions(TypeMeta m) : dtype_(m.toScalarType()) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(Device(t)) {}
  TensorOptions(Layout l) : layout_(l) {}
  TensorOptions(MemoryFormat f) : memory_format_(f) {}

  TensorOptions dtype(ScalarType s) const { auto o = *this; o.dtype_ = s; return o; }
  TensorOptions dtype(TypeMeta m) const { return dtype(m.toScalarType()); }
  TensorOptions dtype(std::optional<ScalarType> s) const { auto o = *this; o.dtype_ = s; return o; }
  template <class T>
  TensorOptions dtype() const { return dtype(CppTypeToScalarType<T>::value); }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType t, DeviceIndex index = -1) const { return device(Device(t, index)); }
  TensorOptions device_index(DeviceIndex index) const { return device(Device(kCUDA, index)); }
  TensorOptions layout(Layout l) const { auto o = *this; o.layout_ = l; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  TensorOptions pinned_memory(bool) const { return *this; }
  TensorOptions memory_format(MemoryFormat f) const { auto o = *this; o.memory_format_ = f; return o; }

  TypeMeta dtype() const { return TypeMeta(dtype_.value_or(kFloat)); }
  ScalarType scalar_type() const { return dtype_.value_or(kFloat); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool has_device() const { return device_.has_value(); }
  DeviceIndex device_index() const { return device().index(); }
  Layout layout() const { return layout_; }
  bool requires_grad() const { return requires_grad_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  Layout layout_ = kStrided;
  bool requires_grad_ = false;
  std::optional<MemoryFormat> memory_format_;
};

inline TensorOptions dtype(ScalarType s) { return TensorOptions().dtype(s); }
inline TensorOptions dtype(TypeMeta m) { return TensorOptions().dtype(m); }
template <class T>
TensorOptions dtype() { return TensorOptions().dtype<T>(); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace c10

#endif  // CUSET_C10_TENSOROPTIONS_H
