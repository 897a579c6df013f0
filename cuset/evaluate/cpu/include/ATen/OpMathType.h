// ATen/OpMathType.h for the CuSeT CPU emulator's torch shim: at::opmath_type, the type torch
// computes a scalar_t in (float for half and bfloat16).
#ifndef CUSET_ATEN_OPMATHTYPE_H
#define CUSET_ATEN_OPMATHTYPE_H

#include <c10/core/ScalarType.h>

namespace at {

template <typename T>
struct OpMathType {
  using type = T;
};
template <> struct OpMathType<c10::Half> { using type = float; };
template <> struct OpMathType<c10::BFloat16> { using type = float; };

template <typename T>
using opmath_type = typename OpMathType<T>::type;

}  // namespace at

#endif  // CUSET_ATEN_OPMATHTYPE_H
