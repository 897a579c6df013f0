// c10::ArrayRef / IntArrayRef for the CuSeT CPU emulator's torch shim (see torch/extension.h).
// Non-owning, as in torch: `x.sizes()` points into the tensor, `{M, N}` into the braced list
// (valid until the end of the full expression).
#ifndef CUSET_C10_ARRAYREF_H
#define CUSET_C10_ARRAYREF_H

#include <c10/util/Exception.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <vector>

namespace c10 {

using std::make_optional;
using std::nullopt;
using std::optional;

template <class T>
class ArrayRef {
 public:
  using iterator = const T*;
  using const_iterator = const T*;
  using value_type = T;
  using size_type = size_t;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), len_(1) {}
  constexpr ArrayRef(const T* data, size_t len) : data_(data), len_(len) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), len_(end - begin) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), len_(v.size()) {}
  template <size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), len_(N) {}
  template <size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), len_(N) {}
  constexpr ArrayRef(const std::initializer_list<T>& il) : data_(il.begin() == il.end() ? nullptr : il.begin()), len_(il.size()) {}

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + len_; }
  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return len_; }
  constexpr bool empty() const { return len_ == 0; }
  const T& front() const {
    TORCH_CHECK(!empty(), "ArrayRef: attempted to access front() of empty list");
    return data_[0];
  }
  const T& back() const {
    TORCH_CHECK(!empty(), "ArrayRef: attempted to access back() of empty list");
    return data_[len_ - 1];
  }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    TORCH_CHECK(i < len_, "ArrayRef: invalid index Index = ", i, "; Length = ", len_);
    return data_[i];
  }
  ArrayRef slice(size_t n, size_t m) const {
    TORCH_CHECK(n + m <= size(), "ArrayRef: invalid slice, N = ", n, "; M = ", m, "; size = ", size());
    return ArrayRef(data_ + n, m);
  }
  ArrayRef slice(size_t n) const {
    TORCH_CHECK(n <= size(), "ArrayRef: invalid slice, N = ", n, "; size = ", size());
    return slice(n, size() - n);
  }
  bool equals(ArrayRef other) const {
    if (len_ != other.len_) return false;
    for (size_t i = 0; i < len_; ++i)
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }

  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
  friend bool operator!=(ArrayRef a, ArrayRef b) { return !a.equals(b); }
  friend bool operator==(ArrayRef a, const std::vector<T>& b) { return a.equals(b); }
  friend bool operator!=(ArrayRef a, const std::vector<T>& b) { return !a.equals(b); }
  friend bool operator==(const std::vector<T>& a, ArrayRef b) { return b.equals(a); }
  friend bool operator!=(const std::vector<T>& a, ArrayRef b) { return !b.equals(a); }
  friend std::ostream& operator<<(std::ostream& os, ArrayRef a) {
    os << "[";
    for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
    return os << "]";
  }

 private:
  const T* data_ = nullptr;
  size_t len_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;
using OptionalIntArrayRef = std::optional<IntArrayRef>;
using IntList = IntArrayRef;

}  // namespace c10

#endif  // CUSET_C10_ARRAYREF_H
