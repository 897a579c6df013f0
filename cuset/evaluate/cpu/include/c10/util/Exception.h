// c10/util/Exception.h for the CuSeT CPU emulator's torch shim (see torch/extension.h).
//
// TORCH_CHECK and friends throw c10::Error (or a subclass naming the Python exception the
// binding raises); the message is built like torch's c10::str, and a bare TORCH_CHECK(cond)
// gets torch's "Expected cond to be true, but got false." text.
#ifndef CUSET_C10_EXCEPTION_H
#define CUSET_C10_EXCEPTION_H

#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace c10 {

class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const char* what_without_backtrace() const noexcept { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }
  virtual int python_kind() const { return 1; }  // RuntimeError

 private:
  std::string msg_;
};
struct TypeError : Error {
  using Error::Error;
  int python_kind() const override { return 2; }
};
struct ValueError : Error {
  using Error::Error;
  int python_kind() const override { return 3; }
};
struct IndexError : Error {
  using Error::Error;
  int python_kind() const override { return 4; }
};
struct NotImplementedError : Error {
  using Error::Error;
  int python_kind() const override { return 5; }
};
using LinAlgError = Error;
using OutOfMemoryError = Error;

namespace detail {
inline void str_into(std::ostringstream&) {}
template <class T, class... R>
void str_into(std::ostringstream& os, const T& first, const R&... rest) {
  os << first;
  str_into(os, rest...);
}
}  // namespace detail

template <class... A>
std::string str(const A&... args) {
  std::ostringstream os;
  detail::str_into(os, args...);
  return os.str();
}

namespace detail {
template <class E, class... A>
[[noreturn]] void check_fail(const char* cond, const A&... args) {
  if constexpr (sizeof...(A) == 0) {
    throw E(std::string("Expected ") + cond +
            " to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)");
  } else {
    throw E(::c10::str(args...));
  }
}
}  // namespace detail
}  // namespace c10

#define CUSET_TORCH_CHECK_AS(E, cond, ...)                               \
  do {                                                                   \
    if (__builtin_expect(!(cond), 0)) {                                  \
      ::c10::detail::check_fail<E>(#cond __VA_OPT__(, ) __VA_ARGS__);    \
    }                                                                    \
  } while (0)

#define TORCH_CHECK(cond, ...) CUSET_TORCH_CHECK_AS(::c10::Error, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) CUSET_TORCH_CHECK_AS(::c10::ValueError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) CUSET_TORCH_CHECK_AS(::c10::TypeError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) CUSET_TORCH_CHECK_AS(::c10::IndexError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_ARG(cond, argN, ...) CUSET_TORCH_CHECK_AS(::c10::Error, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) CUSET_TORCH_CHECK_AS(::c10::NotImplementedError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_LINALG(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, "INTERNAL ASSERT FAILED: " #cond " " __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) ((void)0)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_CHECK(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ERROR(...) throw ::c10::Error(::c10::str(__VA_ARGS__))
#define TORCH_WARN(...) fprintf(stderr, "Warning: %s\n", ::c10::str(__VA_ARGS__).c_str())
#define TORCH_WARN_ONCE(...)                                                            \
  do {                                                                                  \
    static bool cuset_warned_ = false;                                                  \
    if (!cuset_warned_) {                                                               \
      cuset_warned_ = true;                                                             \
      TORCH_WARN(__VA_ARGS__);                                                          \
    }                                                                                   \
  } while (0)
#define C10_THROW_ERROR(err_type, msg) throw ::c10::err_type(msg)

#endif  // CUSET_C10_EXCEPTION_H
