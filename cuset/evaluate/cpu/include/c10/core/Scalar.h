// c10::Scalar for the CuSeT CPU emulator's torch shim: a number that remembers whether it was
// floating, integral or bool (fill values, torch::full).
#ifndef CUSET_C10_SCALAR_H
#define CUSET_C10_SCALAR_H

#include <c10/core/ScalarType.h>

#include <type_traits>

namespace c10 {

class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      tag_ = Tag::Bool;
      i_ = v;
    } else if constexpr (std::is_floating_point_v<T>) {
      tag_ = Tag::Double;
      d_ = v;
    } else {
      tag_ = Tag::Int;
      i_ = (int64_t)v;
    }
  }
  Scalar(c10::Half v) : tag_(Tag::Double), d_(float(v)) {}
  Scalar(c10::BFloat16 v) : tag_(Tag::Double), d_(float(v)) {}
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isIntegral(bool includeBool) const { return tag_ == Tag::Int || (includeBool && tag_ == Tag::Bool); }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  double toDouble() const { return tag_ == Tag::Double ? d_ : (double)i_; }
  float toFloat() const { return (float)toDouble(); }
  int64_t toLong() const { return tag_ == Tag::Double ? (int64_t)d_ : i_; }
  int toInt() const { return (int)toLong(); }
  bool toBool() const { return tag_ == Tag::Double ? d_ != 0 : i_ != 0; }
  c10::Half toHalf() const { return c10::Half(toFloat()); }
  c10::BFloat16 toBFloat16() const { return c10::BFloat16(toFloat()); }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return toBool();
    else if constexpr (std::is_integral_v<T>) return (T)toLong();
    else return static_cast<T>(toDouble());
  }
  ScalarType type() const { return tag_ == Tag::Double ? kDouble : tag_ == Tag::Bool ? kBool : kLong; }
  friend std::ostream& operator<<(std::ostream& os, const Scalar& s) {
    if (s.tag_ == Tag::Double) return os << s.d_;
    if (s.tag_ == Tag::Bool) return os << (s.i_ ? "true" : "false");
    return os << s.i_;
  }

 private:
  enum class Tag { Double, Int, Bool } tag_;
  double d_ = 0;
  int64_t i_ = 0;
};

}  // namespace c10

#endif  // CUSET_C10_SCALAR_H
