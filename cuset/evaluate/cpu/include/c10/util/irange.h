// c10/util/irange.h for the CuSeT CPU emulator's torch shim: `for (auto i : c10::irange(n))`.
#ifndef CUSET_C10_IRANGE_H
#define CUSET_C10_IRANGE_H

#include <type_traits>

namespace c10 {

template <class I>
struct integer_range {
  struct iterator {
    I v;
    I operator*() const { return v; }
    iterator& operator++() {
      ++v;
      return *this;
    }
    bool operator!=(const iterator& o) const { return v != o.v; }
    bool operator==(const iterator& o) const { return v == o.v; }
  };
  I b, e;
  iterator begin() const { return {b}; }
  iterator end() const { return {e}; }
};

template <class I1, class I2>
integer_range<I2> irange(I1 begin, I2 end) {
  return {static_cast<I2>(begin), end < static_cast<I2>(begin) ? static_cast<I2>(begin) : end};
}
template <class I>
integer_range<I> irange(I end) {
  return {I(0), end < I(0) ? I(0) : end};
}

}  // namespace c10

#endif  // CUSET_C10_IRANGE_H
