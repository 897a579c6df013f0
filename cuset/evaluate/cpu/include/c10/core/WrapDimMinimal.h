// c10/core/WrapDimMinimal.h for the CuSeT CPU emulator's torch shim: c10::maybe_wrap_dim (also
// at::maybe_wrap_dim), a negative dimension counted from the end, out of range an IndexError
// with torch's message; a 0-dim tensor takes dims -1 and 0 (wrap_scalar, as torch).
#ifndef CUSET_C10_WRAPDIMMINIMAL_H
#define CUSET_C10_WRAPDIMMINIMAL_H

#include <c10/util/Exception.h>

#include <cstdint>

namespace c10 {

inline int64_t maybe_wrap_dim(int64_t dim, int64_t dim_post_expr, bool wrap_scalar = true) {
  if (dim_post_expr <= 0) {
    TORCH_CHECK_INDEX(wrap_scalar, "Dimension specified as ", dim, " but tensor has no dimensions");
    dim_post_expr = 1;  // a scalar's dims are [-1, 0]
  }
  const int64_t lo = -dim_post_expr, hi = dim_post_expr - 1;
  TORCH_CHECK_INDEX(dim >= lo && dim <= hi, "Dimension out of range (expected to be in range of [", lo, ", ", hi, "], but got ", dim, ")");
  return dim < 0 ? dim + dim_post_expr : dim;
}

}  // namespace c10

#endif  // CUSET_C10_WRAPDIMMINIMAL_H
