// at::Tensor for the CuSeT CPU emulator's torch shim (see torch/extension.h).
//
// A handle (shared ownership, as torch's) to {storage, data pointer, sizes, strides, dtype,
// device}. Storage is one of: emulated device memory (cuset::device_alloc, managed so host
// code may read it, filled with the emulator's garbage byte like a fresh cudaMalloc), host
// memory (a CPU tensor: kernels given it fault, as on a GPU), or memory owned by the caller
// (a torch tensor passed in from Python, registered as device memory for the call).
// What runs here runs on the host: metadata, views, copies, dtype conversions, arithmetic with a
// number (x.div_(n), x / n, 1 - x, with torch's result dtypes) and whole-tensor sum and mean
// (what finishes a kernel's partial results: `partial.sum() / n`); tensor-tensor computation
// (x + y, matmul, softmax, reductions over a dim) is left out on purpose, so code that needs it
// is built against real torch instead (cuset.evaluate.cpu.kernelbench falls back, naming it).
#ifndef CUSET_ATEN_TENSOR_H
#define CUSET_ATEN_TENSOR_H

#include <ATen/core/TensorAccessor.h>
#include <ATen/core/cuset_storage.h>
#include <c10/core/Scalar.h>
#include <c10/core/TensorOptions.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/util/ArrayRef.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>


namespace at {

using namespace c10;

// What the deprecated Tensor::type() returns (old code dispatches on it).
struct DeprecatedTypeProperties {
  ScalarType scalar_type;
  Device device;
  ScalarType scalarType() const { return scalar_type; }
  bool is_cuda() const { return device.is_cuda(); }
  TypeMeta typeMeta() const { return TypeMeta(scalar_type); }
  TensorOptions options() const { return TensorOptions().dtype(scalar_type).device(device); }
};

class Tensor;
Tensor empty(IntArrayRef sizes, const TensorOptions& options = {}, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<cuset_torch::Impl> impl) : impl_(std::move(impl)) {}

  // --- metadata ---------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  void reset() { impl_.reset(); }
  const std::shared_ptr<cuset_torch::Impl>& unsafeGetTensorImpl() const { return impl_; }
  int64_t dim() const { return (int64_t)impl().sizes.size(); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return impl().sizes; }
  IntArrayRef strides() const { return impl().strides; }
  int64_t size(int64_t d) const { return impl().sizes[cuset_torch::wrap_dim(d, dim())]; }
  int64_t stride(int64_t d) const { return impl().strides[cuset_torch::wrap_dim(d, dim())]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : impl().sizes) n *= s;
    return n;
  }
  ScalarType scalar_type() const { return impl().dtype; }
  TypeMeta dtype() const { return TypeMeta(impl().dtype); }
  DeprecatedTypeProperties type() const { return {impl().dtype, impl().device}; }
  int64_t element_size() const { return (int64_t)elementSize(impl().dtype); }
  int64_t itemsize() const { return element_size(); }
  size_t nbytes() const { return (size_t)numel() * elementSize(impl().dtype); }
  int64_t storage_offset() const {
    const auto& i = impl();
    return i.storage ? (int64_t)((i.data - (char*)i.storage->base) / (int64_t)elementSize(i.dtype)) : 0;
  }
  Device device() const { return impl().device; }
  int64_t get_device() const { return impl().device.is_cuda() ? 0 : -1; }
  bool is_cuda() const { return impl().device.is_cuda(); }
  bool is_cpu() const { return impl().device.is_cpu(); }
  bool is_sparse() const { return false; }
  bool is_quantized() const { return false; }
  bool is_meta() const { return false; }
  bool is_floating_point() const { return isFloatingType(impl().dtype); }
  bool is_complex() const { return isComplexType(impl().dtype); }
  bool is_signed() const { return isSignedType(impl().dtype); }
  Layout layout() const { return kStrided; }
  TensorOptions options() const { return TensorOptions().dtype(impl().dtype).device(impl().device); }
  bool requires_grad() const { return impl().requires_grad; }
  Tensor& requires_grad_(bool r = true) { impl().requires_grad = r; return *this; }
  void set_requires_grad(bool r) { impl().requires_grad = r; }
  Tensor detach() const { return *this; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  bool is_same_size(const Tensor& o) const { return sizes() == o.sizes(); }
  long use_count() const { return impl_.use_count(); }

  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const {
    const auto& i = impl();
    if (numel() == 0) return true;
    std::vector<int64_t> want = format == MemoryFormat::ChannelsLast ? (dim() == 4 ? cuset_torch::channels_last_strides(i.sizes) : std::vector<int64_t>())
                                                                     : cuset_torch::contiguous_strides(i.sizes);
    if (want.size() != i.sizes.size()) return false;
    for (size_t d = 0; d < want.size(); ++d)
      if (i.sizes[d] != 1 && i.strides[d] != want[d]) return false;
    return true;
  }
  bool is_non_overlapping_and_dense() const {
    const auto& i = impl();
    std::vector<size_t> order(i.sizes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return i.strides[a] < i.strides[b]; });
    int64_t expect = 1;
    for (size_t d : order) {
      if (i.sizes[d] == 1) continue;
      if (i.strides[d] != expect) return false;
      expect *= i.sizes[d];
    }
    return true;
  }
  MemoryFormat suggest_memory_format() const {
    return dim() == 4 && !is_contiguous() && is_contiguous(MemoryFormat::ChannelsLast) ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  }

  // --- data -------------------------------------------------------------------------------
  void* data_ptr() const { return impl().data; }
  const void* const_data_ptr() const { return impl().data; }
  void* mutable_data_ptr() const { return impl().data; }
  template <class T>
  T* data_ptr() const {
    using U = std::remove_cv_t<T>;
    static_assert(CppTypeToScalarType<U>::known,
                  "Tensor::data_ptr<T>(): torch defines it only for its scalar types (float, double, at::Half, at::BFloat16, "
                  "int8_t/int16_t/int32_t/int64_t, uint8_t, bool); reinterpret_cast the pointer for other types");
    TORCH_CHECK(impl().dtype == CppTypeToScalarType<U>::value, "expected scalar type ", CppTypeToScalarType<U>::value, " but found ", impl().dtype);
    return reinterpret_cast<T*>(impl().data);
  }
  template <class T>
  T* data() const { return data_ptr<T>(); }
  template <class T>
  const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T>
  T* mutable_data_ptr() const { return data_ptr<T>(); }

  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const {
    TORCH_CHECK(dim() == (int64_t)N, "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return TensorAccessor<T, N>(data_ptr<T>(), impl().sizes.data(), impl().strides.data());
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const {
    TORCH_CHECK(dim() == (int64_t)N, "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(static_cast<typename PtrTraits<T>::PtrType>(data_ptr<T>()), impl().sizes.data(),
                                                                 impl().strides.data());
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const {
    TORCH_CHECK(numel() <= (int64_t)INT32_MAX, "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
    return generic_packed_accessor<T, N, PtrTraits, int32_t>();
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const {
    return generic_packed_accessor<T, N, PtrTraits, int64_t>();
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() const {
    return generic_packed_accessor<T, N, PtrTraits, index_t>();
  }

  template <class T>
  T item() const {
    TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
    cuset::Unprotect open;
    if constexpr (std::is_integral_v<T>) return (T)cuset_torch::load_int(impl().data, impl().dtype);
    else return static_cast<T>(cuset_torch::load_double(impl().data, impl().dtype));
  }
  Scalar item() const {
    if (isFloatingType(impl().dtype)) return Scalar(item<double>());
    if (impl().dtype == kBool) return Scalar(item<bool>());
    return Scalar(item<int64_t>());
  }

  // --- views (no data moves) ----------------------------------------------------------------
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset = std::nullopt) const {
    TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
    auto v = view_impl();
    if (storage_offset) v->data = (char*)impl().storage->base + *storage_offset * element_size();
    v->sizes = sizes.vec();
    v->strides = strides.vec();
    return Tensor(v);
  }
  Tensor view(IntArrayRef sizes) const {
    std::vector<int64_t> shape = infer_size(sizes);
    TORCH_CHECK(is_contiguous(),
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous "
                "subspaces). Use .reshape(...) instead.");
    return as_strided(shape, cuset_torch::contiguous_strides(shape));
  }
  Tensor reshape(IntArrayRef sizes) const { return is_contiguous() ? view(sizes) : contiguous().view(sizes); }
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor flatten(int64_t start = 0, int64_t end = -1) const {
    if (dim() == 0) return reshape({1});
    start = cuset_torch::wrap_dim(start, dim());
    end = cuset_torch::wrap_dim(end, dim());
    std::vector<int64_t> shape(impl().sizes.begin(), impl().sizes.begin() + start);
    int64_t n = 1;
    for (int64_t d = start; d <= end; ++d) n *= impl().sizes[d];
    shape.push_back(n);
    shape.insert(shape.end(), impl().sizes.begin() + end + 1, impl().sizes.end());
    return reshape(shape);
  }
  Tensor unsqueeze(int64_t d) const {
    d = cuset_torch::wrap_dim(d, dim() + 1);
    auto sizes = impl().sizes, strides = impl().strides;
    int64_t st = d < dim() ? sizes[d] * strides[d] : 1;
    sizes.insert(sizes.begin() + d, 1);
    strides.insert(strides.begin() + d, st);
    return as_strided(sizes, strides);
  }
  Tensor squeeze() const {
    std::vector<int64_t> sizes, strides;
    for (int64_t d = 0; d < dim(); ++d)
      if (impl().sizes[d] != 1) {
        sizes.push_back(impl().sizes[d]);
        strides.push_back(impl().strides[d]);
      }
    return as_strided(sizes, strides);
  }
  Tensor squeeze(int64_t d) const {
    d = cuset_torch::wrap_dim(d, dim());
    if (dim() == 0 || impl().sizes[d] != 1) return as_strided(sizes(), strides());
    auto sizes = impl().sizes, strides = impl().strides;
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
    return as_strided(sizes, strides);
  }
  Tensor transpose(int64_t a, int64_t b) const {
    a = cuset_torch::wrap_dim(a, dim());
    b = cuset_torch::wrap_dim(b, dim());
    auto sizes = impl().sizes, strides = impl().strides;
    if (dim() > 0) {
      std::swap(sizes[a], sizes[b]);
      std::swap(strides[a], strides[b]);
    }
    return as_strided(sizes, strides);
  }
  Tensor t() const {
    TORCH_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
    return dim() < 2 ? as_strided(sizes(), strides()) : transpose(0, 1);
  }
  Tensor permute(IntArrayRef dims) const {
    TORCH_CHECK((int64_t)dims.size() == dim(), "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = ",
                dim(), " is not equal to len(dims) = ", dims.size());
    std::vector<int64_t> sizes(dims.size()), strides(dims.size());
    std::vector<bool> seen(dims.size(), false);
    for (size_t k = 0; k < dims.size(); ++k) {
      int64_t d = cuset_torch::wrap_dim(dims[k], dim());
      TORCH_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
      seen[d] = true;
      sizes[k] = impl().sizes[d];
      strides[k] = impl().strides[d];
    }
    return as_strided(sizes, strides);
  }
  Tensor expand(IntArrayRef sizes, bool = false) const {
    TORCH_CHECK((int64_t)sizes.size() >= dim(), "expand: the number of sizes provided (", sizes.size(), ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
    std::vector<int64_t> out(sizes.size()), st(sizes.size());
    int64_t lead = (int64_t)sizes.size() - dim();
    for (int64_t k = 0; k < (int64_t)sizes.size(); ++k) {
      int64_t d = k - lead;
      int64_t have = d >= 0 ? impl().sizes[d] : 1;
      int64_t want = sizes[k] == -1 ? have : sizes[k];
      TORCH_CHECK(have == want || have == 1, "The expanded size of the tensor (", want, ") must match the existing size (", have, ") at non-singleton dimension ", k,
                  ".  Target sizes: ", sizes, ".  Tensor sizes: ", this->sizes());
      out[k] = want;
      st[k] = d >= 0 && have == want ? impl().strides[d] : 0;
    }
    return as_strided(out, st);
  }
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor narrow(int64_t d, int64_t start, int64_t length) const {
    d = cuset_torch::wrap_dim(d, dim());
    if (start < 0) start += impl().sizes[d];
    TORCH_CHECK(start >= 0 && length >= 0 && start + length <= impl().sizes[d], "start (", start, ") + length (", length, ") exceeds dimension size (", impl().sizes[d], ").");
    auto v = view_impl();
    v->data += start * impl().strides[d] * element_size();
    v->sizes[d] = length;
    return Tensor(v);
  }
  Tensor slice(int64_t d = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt, int64_t step = 1) const {
    d = cuset_torch::wrap_dim(d, dim());
    TORCH_CHECK(step > 0, "slice step must be positive");
    int64_t n = impl().sizes[d];
    int64_t s = start.value_or(0), e = end.value_or(n);
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, s, n);
    auto v = view_impl();
    v->data += s * impl().strides[d] * element_size();
    v->sizes[d] = (e - s + step - 1) / step;
    v->strides[d] *= step;
    return Tensor(v);
  }
  Tensor select(int64_t d, int64_t index) const {
    d = cuset_torch::wrap_dim(d, dim());
    int64_t n = impl().sizes[d];
    TORCH_CHECK_INDEX(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ", sizes(), " at dimension ", d);
    if (index < 0) index += n;
    auto v = view_impl();
    v->data += index * impl().strides[d] * element_size();
    v->sizes.erase(v->sizes.begin() + d);
    v->strides.erase(v->strides.begin() + d);
    return Tensor(v);
  }
  Tensor operator[](int64_t index) const { return select(0, index); }

  // --- copies and conversions (host loops) -----------------------------------------------------
  Tensor& copy_(const Tensor& src, bool = false) {
    Tensor s = src.sizes() == sizes() ? src : src.expand(sizes());
    cuset::Unprotect open;
    auto& di = impl();
    const auto& si = s.impl();
    size_t es = elementSize(di.dtype), ss = elementSize(si.dtype);
    bool ints = isIntegralType(di.dtype, true) && isIntegralType(si.dtype, true);
    std::vector<int64_t> src_off;
    src_off.reserve(numel());
    cuset_torch::for_each_offset(si.sizes, si.strides, [&](int64_t off, int64_t) { src_off.push_back(off); });
    cuset_torch::for_each_offset(di.sizes, di.strides, [&](int64_t off, int64_t k) {
      char* d = di.data + off * (int64_t)es;
      const char* p = si.data + src_off[k] * (int64_t)ss;
      if (di.dtype == si.dtype) std::memcpy(d, p, es);
      else if (ints) cuset_torch::store_int(d, di.dtype, cuset_torch::load_int(p, si.dtype));
      else cuset_torch::store_double(d, di.dtype, cuset_torch::load_double(p, si.dtype));
    });
    return *this;
  }
  Tensor& fill_(const Scalar& value) {
    cuset::Unprotect open;
    auto& i = impl();
    size_t es = elementSize(i.dtype);
    std::vector<char> one(es);
    if (value.isFloatingPoint()) cuset_torch::store_double(one.data(), i.dtype, value.toDouble());
    else cuset_torch::store_int(one.data(), i.dtype, value.toLong());
    cuset_torch::for_each_offset(i.sizes, i.strides, [&](int64_t off, int64_t) { std::memcpy(i.data + off * (int64_t)es, one.data(), es); });
    return *this;
  }
  Tensor& zero_() {
    if (is_contiguous()) {
      cuset::Unprotect open;
      std::memset(impl().data, 0, nbytes());
      return *this;
    }
    return fill_(0);
  }
  // Scalar arithmetic in place (host loops), as torch's add_/sub_/mul_/div_ with a number.
  Tensor& add_(const Scalar& v, const Scalar& alpha = 1) { return scalar_op_(v, alpha, '+'); }
  Tensor& sub_(const Scalar& v, const Scalar& alpha = 1) { return scalar_op_(v, alpha, '-'); }
  Tensor& mul_(const Scalar& v) { return scalar_op_(v, 1, '*'); }
  Tensor& div_(const Scalar& v) {
    TORCH_CHECK(is_floating_point(), "result type Float can't be cast to the desired output type ", scalar_type());
    return scalar_op_(v, 1, '/');
  }
  Tensor add(const Scalar& v, const Scalar& alpha = 1) const { return scalar_binary(scaled(v, alpha), '+'); }
  Tensor sub(const Scalar& v, const Scalar& alpha = 1) const { return scalar_binary(scaled(v, alpha), '-'); }
  Tensor mul(const Scalar& v) const { return scalar_binary(v, '*'); }
  Tensor div(const Scalar& v) const { return scalar_binary(v, '/'); }
  Tensor neg() const { return scalar_binary(0, 'n'); }

  // A new contiguous tensor: each element `x op s` (`s op x` when `reversed`; op 'n': -x), in
  // torch's result dtype: a floating tensor keeps its dtype; an integral one becomes float32
  // for a floating number or true division, int64 when it is bool and the number an integer.
  Tensor scalar_binary(const Scalar& s, char op, bool reversed = false) const {
    const auto& i = impl();
    ScalarType rt = i.dtype;
    if (!isFloatingType(rt)) {
      if (s.isFloatingPoint() || op == '/') rt = kFloat;
      else if (rt == kBool && !s.isBoolean()) rt = kLong;
    }
    Tensor out = empty(sizes(), options().dtype(rt));
    cuset::Unprotect open;
    char* o = (char*)out.data_ptr();
    size_t es = elementSize(i.dtype), os = elementSize(rt);
    bool ints = isIntegralType(rt, true);
    cuset_torch::for_each_offset(i.sizes, i.strides, [&](int64_t off, int64_t k) {
      const char* p = i.data + off * (int64_t)es;
      if (ints) {
        int64_t a = cuset_torch::load_int(p, i.dtype), b = s.toLong();
        if (reversed) std::swap(a, b);
        cuset_torch::store_int(o + k * (int64_t)os, rt, op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : -(reversed ? b : a));
      } else {
        double a = cuset_torch::load_double(p, i.dtype), b = s.toDouble();
        if (reversed) std::swap(a, b);
        double r = op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : op == '/' ? a / b : -(reversed ? b : a);
        cuset_torch::store_double(o + k * (int64_t)os, rt, r);
      }
    });
    return out;
  }

  // --- whole-tensor reductions (host loops, double accumulator), a 0-dim tensor on this device --
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const {
    return reduce_all(dtype.value_or(isIntegralType(scalar_type(), true) ? kLong : scalar_type()), false);
  }
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const {
    ScalarType rt = dtype.value_or(scalar_type());
    TORCH_CHECK(isFloatingType(rt), "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ",
                scalar_type());
    return reduce_all(rt, true);
  }

  Tensor clone(std::optional<MemoryFormat> format = std::nullopt) const {
    Tensor out = format == MemoryFormat::ChannelsLast || (!format && is_non_overlapping_and_dense())
                     ? (format ? empty(sizes(), options(), format) : empty_strided(sizes(), strides(), options()))
                     : empty(sizes(), options());
    out.copy_(*this);
    return out;
  }
  Tensor contiguous(MemoryFormat format = MemoryFormat::Contiguous) const {
    if (is_contiguous(format)) return *this;
    Tensor out = empty(sizes(), options(), format);
    out.copy_(*this);
    return out;
  }
  Tensor to(const TensorOptions& o, bool = false, bool copy = false, std::optional<MemoryFormat> = std::nullopt) const {
    ScalarType st = o.has_dtype() ? o.scalar_type() : scalar_type();
    Device dev = o.has_device() ? o.device() : device();
    if (!copy && st == scalar_type() && dev.type() == device().type()) return *this;
    Tensor out = empty(sizes(), options().dtype(st).device(dev));
    out.copy_(*this);
    return out;
  }
  Tensor to(ScalarType st, bool non_blocking = false, bool copy = false, std::optional<MemoryFormat> f = std::nullopt) const {
    return to(TensorOptions().dtype(st), non_blocking, copy, f);
  }
  Tensor to(Device d, ScalarType st, bool non_blocking = false, bool copy = false) const {
    return to(TensorOptions().dtype(st).device(d), non_blocking, copy);
  }
  Tensor to(Device d, bool non_blocking = false, bool copy = false) const { return to(TensorOptions().device(d), non_blocking, copy); }
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const { return to(other.options(), non_blocking, copy); }
  Tensor to(DeviceType t, bool non_blocking = false, bool copy = false) const { return to(Device(t), non_blocking, copy); }
  Tensor cuda() const { return to(Device(kCUDA, 0)); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor toType(ScalarType st) const { return to(st); }
  Tensor type_as(const Tensor& o) const { return to(o.scalar_type()); }
  Tensor float_() const { return to(kFloat); }
  Tensor new_empty(IntArrayRef sizes, const TensorOptions& o = {}) const { return empty(sizes, merged(o)); }
  Tensor new_zeros(IntArrayRef sizes, const TensorOptions& o = {}) const { return empty(sizes, merged(o)).zero_(); }
  Tensor new_ones(IntArrayRef sizes, const TensorOptions& o = {}) const { return empty(sizes, merged(o)).fill_(1); }
  Tensor new_full(IntArrayRef sizes, const Scalar& v, const TensorOptions& o = {}) const { return empty(sizes, merged(o)).fill_(v); }

  TensorOptions merged(const TensorOptions& o) const {
    return options().dtype(o.has_dtype() ? o.scalar_type() : scalar_type()).device(o.has_device() ? o.device() : device());
  }

 private:
  cuset_torch::Impl& impl() const {
    TORCH_CHECK(impl_ != nullptr, "Tensor is undefined (default-constructed or reset); it has no data or shape");
    return *impl_;
  }
  Tensor& scalar_op_(const Scalar& v, const Scalar& alpha, char op) {
    cuset::Unprotect open;
    auto& i = impl();
    size_t es = elementSize(i.dtype);
    bool ints = isIntegralType(i.dtype, true) && !v.isFloatingPoint() && !alpha.isFloatingPoint();
    cuset_torch::for_each_offset(i.sizes, i.strides, [&](int64_t off, int64_t) {
      char* p = i.data + off * (int64_t)es;
      if (ints) {
        int64_t a = cuset_torch::load_int(p, i.dtype), b = v.toLong() * (op == '+' || op == '-' ? alpha.toLong() : 1);
        cuset_torch::store_int(p, i.dtype, op == '+' ? a + b : op == '-' ? a - b : a * b);
      } else {
        double a = cuset_torch::load_double(p, i.dtype), b = v.toDouble() * (op == '+' || op == '-' ? alpha.toDouble() : 1.0);
        cuset_torch::store_double(p, i.dtype, op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : a / b);
      }
    });
    return *this;
  }
  static Scalar scaled(const Scalar& v, const Scalar& alpha) {
    if (v.isFloatingPoint() || alpha.isFloatingPoint()) return Scalar(v.toDouble() * alpha.toDouble());
    return Scalar(v.toLong() * alpha.toLong());
  }
  Tensor reduce_all(ScalarType rt, bool mean) const {
    Tensor out = empty({}, options().dtype(rt));
    cuset::Unprotect open;
    const auto& i = impl();
    size_t es = elementSize(i.dtype);
    if (isIntegralType(rt, true)) {
      int64_t acc = 0;
      cuset_torch::for_each_offset(i.sizes, i.strides, [&](int64_t off, int64_t) { acc += cuset_torch::load_int(i.data + off * (int64_t)es, i.dtype); });
      cuset_torch::store_int((char*)out.data_ptr(), rt, acc);
    } else {
      double acc = 0;
      cuset_torch::for_each_offset(i.sizes, i.strides, [&](int64_t off, int64_t) { acc += cuset_torch::load_double(i.data + off * (int64_t)es, i.dtype); });
      cuset_torch::store_double((char*)out.data_ptr(), rt, mean ? acc / (double)numel() : acc);
    }
    return out;
  }
  std::shared_ptr<cuset_torch::Impl> view_impl() const { return std::make_shared<cuset_torch::Impl>(impl()); }
  std::vector<int64_t> infer_size(IntArrayRef sizes) const {
    std::vector<int64_t> shape = sizes.vec();
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == -1) {
        TORCH_CHECK(infer < 0, "only one dimension can be inferred");
        infer = (int64_t)d;
      } else {
        TORCH_CHECK(shape[d] >= 0, "invalid shape dimension ", shape[d]);
        known *= shape[d];
      }
    }
    if (infer >= 0 && known != 0 && numel() % known == 0) shape[infer] = numel() / known;
    int64_t total = 1;
    for (int64_t s : shape) total *= s;
    TORCH_CHECK(total == numel(), "shape '", sizes, "' is invalid for input of size ", numel());
    return shape;
  }
  std::shared_ptr<cuset_torch::Impl> impl_;
};

// Arithmetic with a number, both ways round (torch's Tensor-Scalar operators).
inline Tensor operator+(const Tensor& t, const Scalar& s) { return t.scalar_binary(s, '+'); }
inline Tensor operator-(const Tensor& t, const Scalar& s) { return t.scalar_binary(s, '-'); }
inline Tensor operator*(const Tensor& t, const Scalar& s) { return t.scalar_binary(s, '*'); }
inline Tensor operator/(const Tensor& t, const Scalar& s) { return t.scalar_binary(s, '/'); }
inline Tensor operator+(const Scalar& s, const Tensor& t) { return t.scalar_binary(s, '+', true); }
inline Tensor operator-(const Scalar& s, const Tensor& t) { return t.scalar_binary(s, '-', true); }
inline Tensor operator*(const Scalar& s, const Tensor& t) { return t.scalar_binary(s, '*', true); }
inline Tensor operator/(const Scalar& s, const Tensor& t) { return t.scalar_binary(s, '/', true); }
inline Tensor operator-(const Tensor& t) { return t.neg(); }
inline Tensor& operator+=(Tensor& t, const Scalar& s) { return t.add_(s); }
inline Tensor& operator-=(Tensor& t, const Scalar& s) { return t.sub_(s); }
inline Tensor& operator*=(Tensor& t, const Scalar& s) { return t.mul_(s); }
inline Tensor& operator/=(Tensor& t, const Scalar& s) { return t.div_(s); }

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  return os << "[ " << (t.is_cuda() ? "CUDA" : "CPU") << t.scalar_type() << "Type{" << t.sizes() << "} ]";
}

}  // namespace at

#include <ATen/Functions.h>  // the factories Tensor's methods call

#endif  // CUSET_ATEN_TENSOR_H
