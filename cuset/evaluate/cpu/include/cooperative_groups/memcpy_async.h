// <cooperative_groups/memcpy_async.h> for the CuSeT CPU emulator: cooperative_groups::memcpy_async
// copies at the call (made once, by the group's rank 0: cuset_async.h); wait and wait_prior
// synchronize the group, as CUDA's do.
#pragma once
#include <cooperative_groups.h>
#include "../cuset_async.h"

namespace cooperative_groups {
template <class Group, class Shape>
void memcpy_async(const Group& g, void* dst, const void* src, Shape bytes) {
  if (cuset::copies_for_group(g)) cuset::copy_now(dst, src, (size_t)bytes);
}
template <class Group, class T>
void memcpy_async(const Group& g, T* dst, size_t dst_count, const T* src, size_t src_count) {
  if (cuset::copies_for_group(g)) cuset::copy_now(dst, src, sizeof(T) * std::min(dst_count, src_count));
}
template <class Group>
void wait(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}
template <unsigned Prior, class Group>
void wait_prior(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}
}  // namespace cooperative_groups
