// ATen/Dispatch.h for the CuSeT CPU emulator's torch shim: the AT_DISPATCH_* macros, built the
// way torch builds them (a switch over the scalar type inside an immediately-called lambda,
// `scalar_t` bound in each case, "NAME" not implemented for 'Type' otherwise).
#ifndef CUSET_ATEN_DISPATCH_H
#define CUSET_ATEN_DISPATCH_H

#include <ATen/core/Tensor.h>

namespace cuset_torch {
inline c10::ScalarType dispatch_type(c10::ScalarType s) { return s; }
inline c10::ScalarType dispatch_type(c10::TypeMeta m) { return m.toScalarType(); }
inline c10::ScalarType dispatch_type(const at::DeprecatedTypeProperties& t) { return t.scalarType(); }
}  // namespace cuset_torch

#define AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, HINT, ...)         \
  case enum_type: {                                                    \
    using HINT [[maybe_unused]] = ::c10::impl::ScalarTypeToCPPTypeT<enum_type>; \
    return __VA_ARGS__();                                              \
  }
#define AT_DISPATCH_CASE(enum_type, ...) AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, scalar_t, __VA_ARGS__)

#define AT_DISPATCH_SWITCH(TYPE, NAME, ...)                                                                        \
  [&] {                                                                                                            \
    const auto& the_type = TYPE;                                                                                   \
    constexpr const char* at_dispatch_name = NAME;                                                                 \
    ::c10::ScalarType _st = ::cuset_torch::dispatch_type(the_type);                                                \
    switch (_st) {                                                                                                 \
      __VA_ARGS__                                                                                                  \
      default:                                                                                                     \
        TORCH_CHECK_NOT_IMPLEMENTED(false, '"', at_dispatch_name, "\" not implemented for '", ::c10::toString(_st), "'"); \
    }                                                                                                              \
  }()

#define AT_DISPATCH_CASE_FLOATING_TYPES(...)          \
  AT_DISPATCH_CASE(::c10::ScalarType::Double, __VA_ARGS__) \
  AT_DISPATCH_CASE(::c10::ScalarType::Float, __VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...)               \
  AT_DISPATCH_CASE(::c10::ScalarType::Byte, __VA_ARGS__)  \
  AT_DISPATCH_CASE(::c10::ScalarType::Char, __VA_ARGS__)  \
  AT_DISPATCH_CASE(::c10::ScalarType::Int, __VA_ARGS__)   \
  AT_DISPATCH_CASE(::c10::ScalarType::Long, __VA_ARGS__)  \
  AT_DISPATCH_CASE(::c10::ScalarType::Short, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES(...) AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)
#define AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(...)         \
  AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)    \
  AT_DISPATCH_CASE(::c10::ScalarType::BFloat16, __VA_ARGS__)

#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(S1, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND2(S1, S2, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__) AT_DISPATCH_CASE(S2, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND3(S1, S2, S3, TYPE, NAME, ...)                                                       \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__) \
                                     AT_DISPATCH_CASE(S2, __VA_ARGS__) AT_DISPATCH_CASE(S3, __VA_ARGS__))
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES_AND(S1, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND(S1, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(S1, S2, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__) AT_DISPATCH_CASE(S2, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND3(S1, S2, S3, TYPE, NAME, ...)                                                       \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(S1, __VA_ARGS__) \
                                     AT_DISPATCH_CASE(S2, __VA_ARGS__) AT_DISPATCH_CASE(S3, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND_HALF(TYPE, NAME, ...) AT_DISPATCH_ALL_TYPES_AND(::c10::ScalarType::Half, TYPE, NAME, __VA_ARGS__)

#endif  // CUSET_ATEN_DISPATCH_H
