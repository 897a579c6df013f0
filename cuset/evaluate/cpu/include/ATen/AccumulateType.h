// ATen/AccumulateType.h for the CuSeT CPU emulator's torch shim: at::acc_type, the type torch
// accumulates a scalar_t in (float for half and bfloat16, int64_t for integers).
#ifndef CUSET_ATEN_ACCUMULATETYPE_H
#define CUSET_ATEN_ACCUMULATETYPE_H

#include <c10/core/ScalarType.h>

#include <cstdint>

namespace at {

template <typename T, bool is_cuda>
struct AccumulateType {
  using type = T;
};
template <bool c> struct AccumulateType<c10::Half, c> { using type = float; };
template <bool c> struct AccumulateType<c10::BFloat16, c> { using type = float; };
template <bool c> struct AccumulateType<float, c> { using type = float; };
template <> struct AccumulateType<float, false> { using type = double; };
template <bool c> struct AccumulateType<double, c> { using type = double; };
template <bool c> struct AccumulateType<int8_t, c> { using type = int64_t; };
template <bool c> struct AccumulateType<uint8_t, c> { using type = int64_t; };
template <bool c> struct AccumulateType<int16_t, c> { using type = int64_t; };
template <bool c> struct AccumulateType<int32_t, c> { using type = int64_t; };
template <bool c> struct AccumulateType<int64_t, c> { using type = int64_t; };
template <bool c> struct AccumulateType<bool, c> { using type = bool; };

template <typename T, bool is_cuda>
using acc_type = typename AccumulateType<T, is_cuda>::type;

}  // namespace at

#endif  // CUSET_ATEN_ACCUMULATETYPE_H
