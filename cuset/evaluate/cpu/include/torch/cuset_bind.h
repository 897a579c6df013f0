// cuset_bind.h: C-ABI calls into torch-shim functions, for cuset.evaluate.cpu.kernelbench.
//
// For each function a load_inline call names, the evaluator appends
//
//   extern "C" int cuset_call_NAME(const cuset_value* args, int nargs, cuset_value* out, int max_out, int* shape)
//   { return cuset_bind::call(&NAME, "NAME", args, nargs, out, max_out, shape); }
//
// and one CUSET_BIND_RUNTIME() (error text, release of returned tensors). Parameter and return
// types are deduced from the function itself, as pybind11 does for torch: Tensor (by value or
// reference), optional<Tensor>, vector<Tensor>, integers, floating point, bool, vector<int64_t>,
// IntArrayRef, Scalar, string, ScalarType; returns Tensor, tuple/pair/vector of Tensors, scalars
// or void. Tensors from Python are borrowed, zero copy, with their strides, and their storage
// is registered as device memory for the call; returned tensors are handed out by handle until
// cuset_release. Exceptions become a nonzero return plus a message and a Python exception kind.
#ifndef CUSET_TORCH_BIND_H
#define CUSET_TORCH_BIND_H

#include <torch/extension.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" {
// Mirrored by ctypes in cuset/evaluate/cpu/shim.py: keep the two in step.
struct cuset_value {
  int32_t kind;      // cuset_bind::Kind
  int32_t dtype;     // tensor: c10::ScalarType; dtype values too
  int64_t i;         // int, bool; tensor: ndim; lists: length
  double d;          // float
  void* data;        // tensor: element 0; int list: int64_t*; float list: double*; tensor list: cuset_value*; str: char*
  int64_t* sizes;    // tensor
  int64_t* strides;  // tensor
  void* storage;     // tensor in: allocation base to register; tensor out: handle for cuset_release
  int64_t storage_bytes;
  int32_t device;    // tensor: 0 CPU, 1 CUDA
  int32_t pad;
};
}

namespace cuset_bind {

enum Kind : int32_t { None = 0, Tensor = 1, Int = 2, Float = 3, Bool = 4, IntList = 5, FloatList = 6, TensorList = 7, Str = 8, DType = 9 };
enum Shape : int32_t { Single = 0, Tuple = 1, List = 2, Nothing = 3 };

struct ArgError : c10::TypeError {
  using c10::TypeError::TypeError;
};

inline const char* kind_name(int32_t k) {
  static const char* names[] = {"None", "Tensor", "int", "float", "bool", "list of int", "list of float", "list of Tensor", "str", "torch.dtype"};
  return k >= 0 && k <= 9 ? names[k] : "?";
}

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_tuple : std::false_type {};
template <class... T> struct is_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B> struct is_tuple<std::pair<A, B>> : std::true_type {};
template <class T> inline constexpr bool always_false = false;

// What a parameter of type P is stored as between conversion and the call.
template <class P> struct Stored { using type = P; };
template <> struct Stored<c10::IntArrayRef> { using type = std::vector<int64_t>; };
template <> struct Stored<c10::ArrayRef<double>> { using type = std::vector<double>; };
template <> struct Stored<c10::ArrayRef<at::Tensor>> { using type = std::vector<at::Tensor>; };
template <> struct Stored<std::optional<c10::IntArrayRef>> { using type = std::optional<std::vector<int64_t>>; };

inline at::Tensor borrow(const cuset_value& v) {
  auto impl = std::make_shared<cuset_torch::Impl>();
  impl->storage = std::make_shared<cuset_torch::Storage>();  // borrowed: never freed here
  impl->storage->base = v.storage;
  impl->storage->bytes = (size_t)v.storage_bytes;
  impl->data = (char*)v.data;
  impl->sizes.assign(v.sizes, v.sizes + v.i);
  impl->strides.assign(v.strides, v.strides + v.i);
  impl->dtype = (c10::ScalarType)v.dtype;
  impl->device = v.device ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  return at::Tensor(impl);
}

[[noreturn]] inline void mismatch(int index, const char* want, const cuset_value& v) {
  throw ArgError(c10::str("incompatible function arguments: argument ", index + 1, " must be ", want, ", not ", kind_name(v.kind)));
}

template <class T>
T convert(const cuset_value& v, int index) {
  if constexpr (std::is_same_v<T, at::Tensor>) {
    if (v.kind == None) return at::Tensor();
    if (v.kind != Tensor) mismatch(index, "Tensor", v);
    return borrow(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.kind != Bool) mismatch(index, "bool", v);
    return v.i != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (v.kind != Int && v.kind != Bool) mismatch(index, "int", v);
    return (T)v.i;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (v.kind == Int || v.kind == Bool) return (T)v.i;
    if (v.kind != Float) mismatch(index, "float", v);
    return (T)v.d;
  } else if constexpr (std::is_same_v<T, c10::Scalar>) {
    if (v.kind == Float) return c10::Scalar(v.d);
    if (v.kind == Bool) return c10::Scalar(v.i != 0);
    if (v.kind != Int) mismatch(index, "number", v);
    return c10::Scalar(v.i);
  } else if constexpr (std::is_same_v<T, c10::ScalarType>) {
    if (v.kind != DType) mismatch(index, "torch.dtype", v);
    return (c10::ScalarType)v.dtype;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.kind != Str) mismatch(index, "str", v);
    return std::string((const char*)v.data, (size_t)v.i);
  } else if constexpr (std::is_same_v<T, std::vector<at::Tensor>>) {
    if (v.kind != TensorList && !(v.kind == IntList && v.i == 0)) mismatch(index, "list of Tensor", v);
    std::vector<at::Tensor> out;
    for (int64_t k = 0; k < (v.kind == TensorList ? v.i : 0); ++k) out.push_back(convert<at::Tensor>(((const cuset_value*)v.data)[k], index));
    return out;
  } else if constexpr (is_vector<T>::value && std::is_integral_v<typename T::value_type>) {
    if (v.kind == Int) return T{(typename T::value_type)v.i};
    if (v.kind != IntList) mismatch(index, "list of int", v);
    const int64_t* p = (const int64_t*)v.data;
    return T(p, p + v.i);
  } else if constexpr (is_vector<T>::value && std::is_floating_point_v<typename T::value_type>) {
    if (v.kind == IntList) {
      const int64_t* p = (const int64_t*)v.data;
      return T(p, p + v.i);
    }
    if (v.kind != FloatList) mismatch(index, "list of float", v);
    const double* p = (const double*)v.data;
    return T(p, p + v.i);
  } else if constexpr (is_optional<T>::value) {
    if (v.kind == None) return std::nullopt;
    return convert<typename T::value_type>(v, index);
  } else {
    static_assert(always_false<T>, "cuset-kernelbench: a parameter type of a bound function is not supported by the CPU backend's bindings");
  }
}

// Registers the storage of every tensor argument as device memory while the call runs.
struct Registration {
  std::vector<const void*> bases;
  void add(const cuset_value& v) {
    if (v.kind == Tensor && v.storage && v.device) {
      cuset::register_external(v.storage, (size_t)v.storage_bytes);
      bases.push_back(v.storage);
    } else if (v.kind == TensorList) {
      for (int64_t k = 0; k < v.i; ++k) add(((const cuset_value*)v.data)[k]);
    }
  }
  ~Registration() {
    for (const void* b : bases) cuset::unregister_external(b);
  }
};

inline void put_tensor(const at::Tensor& t, cuset_value& out) {
  if (!t.defined()) {
    out.kind = None;
    return;
  }
  auto* held = new at::Tensor(t);
  const auto& impl = held->unsafeGetTensorImpl();
  out.kind = Tensor;
  out.dtype = (int32_t)t.scalar_type();
  out.i = t.dim();
  out.data = t.data_ptr();
  out.sizes = impl->sizes.data();
  out.strides = impl->strides.data();
  out.storage = held;
  out.device = t.is_cuda() ? 1 : 0;
}

template <class R>
void put(const R& r, cuset_value* out, int max_out, int& n) {
  if (n >= max_out) throw c10::Error("cuset-kernelbench: too many return values");
  cuset_value& v = out[n++];
  v = cuset_value{};
  if constexpr (std::is_same_v<R, at::Tensor>) {
    put_tensor(r, v);
  } else if constexpr (std::is_same_v<R, bool>) {
    v.kind = Bool;
    v.i = r;
  } else if constexpr (std::is_integral_v<R>) {
    v.kind = Int;
    v.i = (int64_t)r;
  } else if constexpr (std::is_floating_point_v<R>) {
    v.kind = Float;
    v.d = (double)r;
  } else if constexpr (std::is_same_v<R, c10::Half> || std::is_same_v<R, c10::BFloat16>) {
    v.kind = Float;
    v.d = (double)static_cast<float>(r);
  } else if constexpr (std::is_same_v<R, c10::Scalar>) {
    if (r.isFloatingPoint()) {
      v.kind = Float;
      v.d = r.toDouble();
    } else {
      v.kind = r.isBoolean() ? Bool : Int;
      v.i = r.toLong();
    }
  } else {
    static_assert(always_false<R>, "cuset-kernelbench: a return type of a bound function is not supported by the CPU backend's bindings");
  }
}

template <class R>
int put_result(const R& r, cuset_value* out, int max_out, int* shape) {
  int n = 0;
  if constexpr (is_tuple<R>::value) {
    *shape = Tuple;
    std::apply([&](const auto&... x) { (put(x, out, max_out, n), ...); }, r);
  } else if constexpr (is_vector<R>::value) {
    *shape = List;
    for (const auto& x : r) put(x, out, max_out, n);
  } else {
    *shape = Single;
    put(r, out, max_out, n);
  }
  return n;
}

inline thread_local std::string error_text;
inline thread_local int error_kind = 0;

template <class R, class... P, size_t... I>
int call_impl(R (*fn)(P...), const char* name, const cuset_value* args, cuset_value* out, int max_out, int* shape, std::index_sequence<I...>) {
  std::tuple<typename Stored<std::decay_t<P>>::type...> stored(
      convert<typename Stored<std::decay_t<P>>::type>(args[I], (int)I)...);
  (void)name;
  if constexpr (std::is_void_v<R>) {
    fn(std::get<I>(stored)...);
    *shape = Nothing;
    return 0;
  } else {
    return put_result(fn(std::get<I>(stored)...), out, max_out, shape);
  }
}

template <class R, class... P>
int call(R (*fn)(P...), const char* name, const cuset_value* args, int nargs, cuset_value* out, int max_out, int* shape) {
  try {
    if (nargs != (int)sizeof...(P))
      throw ArgError(c10::str(name, "(): incompatible function arguments: takes ", sizeof...(P), " arguments, ", nargs, " given"));
    Registration reg;
    for (int k = 0; k < nargs; ++k) reg.add(args[k]);
    return call_impl(fn, name, args, out, max_out, shape, std::index_sequence_for<P...>{});
  } catch (const c10::Error& e) {
    error_text = e.what();
    error_kind = e.python_kind();
  } catch (const std::exception& e) {
    error_text = e.what();
    error_kind = 1;
  } catch (...) {
    error_text = "unknown C++ exception";
    error_kind = 1;
  }
  return -1;
}

}  // namespace cuset_bind

#define CUSET_BIND_RUNTIME()                                                                         \
  extern "C" const char* cuset_error_text(void) { return cuset_bind::error_text.c_str(); }          \
  extern "C" int cuset_error_kind(void) { return cuset_bind::error_kind; }                          \
  extern "C" void cuset_release(void* handle) { delete static_cast<at::Tensor*>(handle); }          \
  extern "C" int cuset_value_size(void) { return (int)sizeof(cuset_value); }

#endif  // CUSET_TORCH_BIND_H
