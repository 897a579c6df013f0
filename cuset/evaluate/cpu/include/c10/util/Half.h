// c10::Half and c10::BFloat16 for the CuSeT CPU emulator's torch shim (see torch/extension.h).
//
// As in torch: 16-bit storage classes with implicit conversions to and from float (and from/to
// CUDA's __half / __nv_bfloat16, which torch enables under nvcc), arithmetic done in float,
// Half op Half -> Half, Half op float -> float, Half op double -> double, Half op int -> Half.
// load_inline compiles with __CUDA_NO_HALF_OPERATORS__ / __CUDA_NO_HALF_CONVERSIONS__, so
// arithmetic on raw __half needs the intrinsics (__hadd, __half2float, ...), as on a GPU.
#ifndef CUSET_C10_HALF_H
#define CUSET_C10_HALF_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>

namespace c10 {

#define CUSET_16BIT_FLOAT(Name, Cuda, ToFloat, FromFloat)                                           \
  struct alignas(2) Name {                                                                          \
    unsigned short x;                                                                               \
    struct from_bits_t {};                                                                          \
    static constexpr from_bits_t from_bits() { return from_bits_t(); }                              \
    Name() = default;                                                                               \
    constexpr Name(unsigned short bits, from_bits_t) : x(bits) {}                                   \
    Name(float value) {                                                                             \
      Cuda h = FromFloat(value);                                                                    \
      std::memcpy(&x, &h, 2);                                                                       \
    }                                                                                               \
    Name(const Cuda& h) { std::memcpy(&x, &h, 2); }                                                 \
    operator float() const {                                                                        \
      Cuda h;                                                                                       \
      std::memcpy(&h, &x, 2);                                                                       \
      return ToFloat(h);                                                                            \
    }                                                                                               \
    operator Cuda() const {                                                                         \
      Cuda h;                                                                                       \
      std::memcpy(&h, &x, 2);                                                                       \
      return h;                                                                                     \
    }                                                                                               \
  };                                                                                                \
  inline Name operator+(const Name& a, const Name& b) { return float(a) + float(b); }               \
  inline Name operator-(const Name& a, const Name& b) { return float(a) - float(b); }               \
  inline Name operator*(const Name& a, const Name& b) { return float(a) * float(b); }               \
  inline Name operator/(const Name& a, const Name& b) { return float(a) / float(b); }               \
  inline Name operator-(const Name& a) { return -float(a); }                                        \
  inline Name& operator+=(Name& a, const Name& b) { return a = a + b; }                             \
  inline Name& operator-=(Name& a, const Name& b) { return a = a - b; }                             \
  inline Name& operator*=(Name& a, const Name& b) { return a = a * b; }                             \
  inline Name& operator/=(Name& a, const Name& b) { return a = a / b; }                             \
  inline float operator+(Name a, float b) { return float(a) + b; }                                  \
  inline float operator-(Name a, float b) { return float(a) - b; }                                  \
  inline float operator*(Name a, float b) { return float(a) * b; }                                  \
  inline float operator/(Name a, float b) { return float(a) / b; }                                  \
  inline float operator+(float a, Name b) { return a + float(b); }                                  \
  inline float operator-(float a, Name b) { return a - float(b); }                                  \
  inline float operator*(float a, Name b) { return a * float(b); }                                  \
  inline float operator/(float a, Name b) { return a / float(b); }                                  \
  inline float& operator+=(float& a, const Name& b) { return a += float(b); }                       \
  inline float& operator-=(float& a, const Name& b) { return a -= float(b); }                       \
  inline float& operator*=(float& a, const Name& b) { return a *= float(b); }                       \
  inline float& operator/=(float& a, const Name& b) { return a /= float(b); }                       \
  inline double operator+(Name a, double b) { return double(float(a)) + b; }                        \
  inline double operator-(Name a, double b) { return double(float(a)) - b; }                        \
  inline double operator*(Name a, double b) { return double(float(a)) * b; }                        \
  inline double operator/(Name a, double b) { return double(float(a)) / b; }                        \
  inline double operator+(double a, Name b) { return a + double(float(b)); }                        \
  inline double operator-(double a, Name b) { return a - double(float(b)); }                        \
  inline double operator*(double a, Name b) { return a * double(float(b)); }                        \
  inline double operator/(double a, Name b) { return a / double(float(b)); }                        \
  inline Name operator+(Name a, int b) { return a + Name(float(b)); }                               \
  inline Name operator-(Name a, int b) { return a - Name(float(b)); }                               \
  inline Name operator*(Name a, int b) { return a * Name(float(b)); }                               \
  inline Name operator/(Name a, int b) { return a / Name(float(b)); }                               \
  inline Name operator+(int a, Name b) { return Name(float(a)) + b; }                               \
  inline Name operator-(int a, Name b) { return Name(float(a)) - b; }                               \
  inline Name operator*(int a, Name b) { return Name(float(a)) * b; }                               \
  inline Name operator/(int a, Name b) { return Name(float(a)) / b; }                               \
  inline Name operator+(Name a, int64_t b) { return a + Name(float(b)); }                           \
  inline Name operator-(Name a, int64_t b) { return a - Name(float(b)); }                           \
  inline Name operator*(Name a, int64_t b) { return a * Name(float(b)); }                           \
  inline Name operator/(Name a, int64_t b) { return a / Name(float(b)); }                           \
  inline Name operator+(int64_t a, Name b) { return Name(float(a)) + b; }                           \
  inline Name operator-(int64_t a, Name b) { return Name(float(a)) - b; }                           \
  inline Name operator*(int64_t a, Name b) { return Name(float(a)) * b; }                           \
  inline Name operator/(int64_t a, Name b) { return Name(float(a)) / b; }                           \
  inline std::ostream& operator<<(std::ostream& os, const Name& v) { return os << float(v); }

CUSET_16BIT_FLOAT(Half, __half, __half2float, __float2half_rn)
CUSET_16BIT_FLOAT(BFloat16, __nv_bfloat16, __bfloat162float, __float2bfloat16_rn)
#undef CUSET_16BIT_FLOAT

}  // namespace c10

namespace std {
template <>
class numeric_limits<c10::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr c10::Half min() { return c10::Half(0x0400, c10::Half::from_bits()); }
  static constexpr c10::Half lowest() { return c10::Half(0xFBFF, c10::Half::from_bits()); }
  static constexpr c10::Half max() { return c10::Half(0x7BFF, c10::Half::from_bits()); }
  static constexpr c10::Half epsilon() { return c10::Half(0x1400, c10::Half::from_bits()); }
  static constexpr c10::Half infinity() { return c10::Half(0x7C00, c10::Half::from_bits()); }
  static constexpr c10::Half quiet_NaN() { return c10::Half(0x7E00, c10::Half::from_bits()); }
};
template <>
class numeric_limits<c10::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr c10::BFloat16 min() { return c10::BFloat16(0x0080, c10::BFloat16::from_bits()); }
  static constexpr c10::BFloat16 lowest() { return c10::BFloat16(0xFF7F, c10::BFloat16::from_bits()); }
  static constexpr c10::BFloat16 max() { return c10::BFloat16(0x7F7F, c10::BFloat16::from_bits()); }
  static constexpr c10::BFloat16 epsilon() { return c10::BFloat16(0x3C00, c10::BFloat16::from_bits()); }
  static constexpr c10::BFloat16 infinity() { return c10::BFloat16(0x7F80, c10::BFloat16::from_bits()); }
  static constexpr c10::BFloat16 quiet_NaN() { return c10::BFloat16(0x7FC0, c10::BFloat16::from_bits()); }
};
}  // namespace std

#endif  // CUSET_C10_HALF_H
