// c10/core/ScalarType.h for the CuSeT CPU emulator's torch shim (see torch/extension.h).
//
// The enum values are torch's own (kFloat = 6, kHalf = 5, ...): cuset.evaluate.cpu.kernelbench
// passes dtypes across the C ABI by these numbers.
#ifndef CUSET_C10_SCALARTYPE_H
#define CUSET_C10_SCALARTYPE_H

#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

namespace c10 {

enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  BFloat16 = 15,
  Undefined = 127,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kUInt8 = kByte;
constexpr ScalarType kInt8 = kChar;
constexpr ScalarType kInt16 = kShort;
constexpr ScalarType kInt32 = kInt;
constexpr ScalarType kInt64 = kLong;
constexpr ScalarType kFloat16 = kHalf;
constexpr ScalarType kFloat32 = kFloat;
constexpr ScalarType kFloat64 = kDouble;

inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::ComplexHalf: return "ComplexHalf";
    case ScalarType::ComplexFloat: return "ComplexFloat";
    case ScalarType::ComplexDouble: return "ComplexDouble";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    default: return "UNKNOWN_SCALAR";
  }
}
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

inline size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::ComplexHalf: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
    case ScalarType::ComplexDouble: return 16;
    default: TORCH_CHECK(false, "elementSize: unknown scalar type ", (int)t);
  }
}
inline bool isFloatingType(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16;
}
inline bool isReducedFloatingType(ScalarType t) { return t == kHalf || t == kBFloat16; }
inline bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}
inline bool isIntegralType(ScalarType t, bool includeBool) {
  bool integral = t == kByte || t == kChar || t == kShort || t == kInt || t == kLong;
  return integral || (includeBool && t == kBool);
}
inline bool isSignedType(ScalarType t) { return t != kByte && t != kBool; }

// C++ type <-> ScalarType (what data_ptr<T>() accepts).
template <class T> struct CppTypeToScalarType { static constexpr bool known = false; };
#define CUSET_SCALAR_PAIR(T, S)                                   \
  template <> struct CppTypeToScalarType<T> {                     \
    static constexpr bool known = true;                           \
    static constexpr ScalarType value = ScalarType::S;            \
  };
CUSET_SCALAR_PAIR(uint8_t, Byte)
CUSET_SCALAR_PAIR(int8_t, Char)
CUSET_SCALAR_PAIR(int16_t, Short)
CUSET_SCALAR_PAIR(int32_t, Int)
CUSET_SCALAR_PAIR(int64_t, Long)
CUSET_SCALAR_PAIR(c10::Half, Half)
CUSET_SCALAR_PAIR(float, Float)
CUSET_SCALAR_PAIR(double, Double)
CUSET_SCALAR_PAIR(bool, Bool)
CUSET_SCALAR_PAIR(c10::BFloat16, BFloat16)
#undef CUSET_SCALAR_PAIR

namespace impl {
template <ScalarType S> struct ScalarTypeToCPPType;
#define CUSET_CPP_PAIR(T, S) template <> struct ScalarTypeToCPPType<ScalarType::S> { using type = T; };
CUSET_CPP_PAIR(uint8_t, Byte)
CUSET_CPP_PAIR(int8_t, Char)
CUSET_CPP_PAIR(int16_t, Short)
CUSET_CPP_PAIR(int32_t, Int)
CUSET_CPP_PAIR(int64_t, Long)
CUSET_CPP_PAIR(c10::Half, Half)
CUSET_CPP_PAIR(float, Float)
CUSET_CPP_PAIR(double, Double)
CUSET_CPP_PAIR(bool, Bool)
CUSET_CPP_PAIR(c10::BFloat16, BFloat16)
#undef CUSET_CPP_PAIR
template <ScalarType S> using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<S>::type;
}  // namespace impl

// caffe2::TypeMeta: what Tensor::dtype() returns; compares equal to ScalarTypes.
class TypeMeta {
 public:
  constexpr TypeMeta() = default;
  constexpr explicit TypeMeta(ScalarType s) : s_(s) {}
  template <class T>
  static TypeMeta Make() { return TypeMeta(CppTypeToScalarType<T>::value); }
  static TypeMeta fromScalarType(ScalarType s) { return TypeMeta(s); }
  constexpr ScalarType toScalarType() const { return s_; }
  size_t itemsize() const { return elementSize(s_); }
  const char* name() const { return toString(s_); }
  friend bool operator==(TypeMeta a, TypeMeta b) { return a.s_ == b.s_; }
  friend bool operator!=(TypeMeta a, TypeMeta b) { return a.s_ != b.s_; }
  friend bool operator==(TypeMeta a, ScalarType b) { return a.s_ == b; }
  friend bool operator!=(TypeMeta a, ScalarType b) { return a.s_ != b; }
  friend bool operator==(ScalarType a, TypeMeta b) { return a == b.s_; }
  friend bool operator!=(ScalarType a, TypeMeta b) { return a != b.s_; }
  friend std::ostream& operator<<(std::ostream& os, TypeMeta m) { return os << m.s_; }

 private:
  ScalarType s_ = ScalarType::Undefined;
};
inline ScalarType typeMetaToScalarType(TypeMeta m) { return m.toScalarType(); }
inline TypeMeta scalarTypeToTypeMeta(ScalarType s) { return TypeMeta(s); }

}  // namespace c10

namespace caffe2 {
using c10::TypeMeta;
}

#endif  // CUSET_C10_SCALARTYPE_H
