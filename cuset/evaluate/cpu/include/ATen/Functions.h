// ATen/Functions.h for the CuSeT torch shim: the factories (torch::empty, zeros, ones, full,
// *_like, empty_strided, arange, from_blob) and the free forms of Tensor's sum, mean and
// arithmetic with a number. New tensors default to float32 on the CPU, as in torch;
// `x.options()` carries the emulated cuda:0.
#ifndef CUSET_ATEN_FUNCTIONS_H
#define CUSET_ATEN_FUNCTIONS_H

#include <ATen/core/Tensor.h>

namespace at {

// --- factories ----------------------------------------------------------------------------------

inline Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    TORCH_CHECK(sizes[d] >= 0, "Trying to create tensor with negative dimension ", sizes[d], ": ", sizes);
    if (sizes[d] == 0) extent = 0;
  }
  if (extent != 0)
    for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
  auto impl = std::make_shared<cuset_torch::Impl>();
  impl->dtype = options.scalar_type();
  impl->device = options.device();
  if (impl->device.is_cuda() && !impl->device.has_index()) impl->device = Device(kCUDA, 0);
  impl->storage = cuset_torch::allocate((size_t)extent * elementSize(impl->dtype), impl->device);
  impl->data = (char*)impl->storage->base;
  impl->sizes = sizes.vec();
  impl->strides = strides.vec();
  impl->requires_grad = options.requires_grad();
  return Tensor(impl);
}

inline Tensor empty(IntArrayRef sizes, const TensorOptions& options, std::optional<MemoryFormat> memory_format) {
  MemoryFormat f = memory_format.value_or(options.memory_format_opt().value_or(MemoryFormat::Contiguous));
  return empty_strided(sizes, f == MemoryFormat::ChannelsLast ? cuset_torch::channels_last_strides(sizes) : cuset_torch::contiguous_strides(sizes), options);
}
inline Tensor empty(IntArrayRef sizes, ScalarType st) { return empty(sizes, TensorOptions(st)); }
inline Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {}) { return empty(sizes, options).zero_(); }
inline Tensor ones(IntArrayRef sizes, const TensorOptions& options = {}) { return empty(sizes, options).fill_(1); }
inline Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {}) {
  TensorOptions o = options.has_dtype() ? options : options.dtype(value.isFloatingPoint() ? kFloat : value.isBoolean() ? kBool : kLong);
  return empty(sizes, o).fill_(value);
}

inline TensorOptions like_options(const Tensor& t, const TensorOptions& o) { return t.merged(o); }
inline Tensor empty_like(const Tensor& t, const TensorOptions& o = {}, std::optional<MemoryFormat> f = std::nullopt) {
  MemoryFormat fmt = f.value_or(o.memory_format_opt().value_or(MemoryFormat::Preserve));
  if (fmt == MemoryFormat::Preserve) {
    if (t.is_non_overlapping_and_dense()) return empty_strided(t.sizes(), t.strides(), like_options(t, o));
    fmt = t.suggest_memory_format();
  }
  return empty(t.sizes(), like_options(t, o), fmt);
}
inline Tensor empty_like(const Tensor& t, ScalarType st) { return empty_like(t, TensorOptions(st)); }
inline Tensor zeros_like(const Tensor& t, const TensorOptions& o = {}, std::optional<MemoryFormat> f = std::nullopt) { return empty_like(t, o, f).zero_(); }
inline Tensor zeros_like(const Tensor& t, ScalarType st) { return zeros_like(t, TensorOptions(st)); }
inline Tensor ones_like(const Tensor& t, const TensorOptions& o = {}, std::optional<MemoryFormat> f = std::nullopt) { return empty_like(t, o, f).fill_(1); }
inline Tensor full_like(const Tensor& t, const Scalar& v, const TensorOptions& o = {}, std::optional<MemoryFormat> f = std::nullopt) {
  return empty_like(t, o, f).fill_(v);
}
inline Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options = {}) {
  bool floating = start.isFloatingPoint() || end.isFloatingPoint() || step.isFloatingPoint();
  TensorOptions o = options.has_dtype() ? options : options.dtype(floating ? kFloat : kLong);
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  TORCH_CHECK(st != 0, "step must be nonzero");
  int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((e - s) / st));
  Tensor out = empty({n}, o);
  for (int64_t k = 0; k < n; ++k) cuset_torch::store_double((char*)out.data_ptr() + k * out.element_size(), out.scalar_type(), s + k * st);
  return out;
}
inline Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {}) { return arange(start, end, 1, options); }
inline Tensor arange(const Scalar& end, const TensorOptions& options = {}) { return arange(0, end, 1, options); }
inline Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {}) {
  auto impl = std::make_shared<cuset_torch::Impl>();
  impl->storage = std::make_shared<cuset_torch::Storage>();
  impl->storage->base = data;
  impl->data = (char*)data;
  impl->sizes = sizes.vec();
  impl->strides = strides.vec();
  impl->dtype = options.scalar_type();
  impl->device = options.device();
  return Tensor(impl);
}
inline Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {}) {
  return from_blob(data, sizes, cuset_torch::contiguous_strides(sizes), options);
}

// Whole-tensor reductions and arithmetic with a number, as free functions (at::sum(t), torch::mean(t)).
inline Tensor sum(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt) { return t.sum(dtype); }
inline Tensor mean(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt) { return t.mean(dtype); }
inline Tensor add(const Tensor& t, const Scalar& s, const Scalar& alpha = 1) { return t.add(s, alpha); }
inline Tensor sub(const Tensor& t, const Scalar& s, const Scalar& alpha = 1) { return t.sub(s, alpha); }
inline Tensor mul(const Tensor& t, const Scalar& s) { return t.mul(s); }
inline Tensor div(const Tensor& t, const Scalar& s) { return t.div(s); }
inline Tensor neg(const Tensor& t) { return t.neg(); }

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

using DimVector = std::vector<int64_t>;
using TensorList = ArrayRef<Tensor>;

}  // namespace at

#endif  // CUSET_ATEN_FUNCTIONS_H
