// cuda_pipeline_primitives.h for the CuSeT CPU emulator: the __pipeline_* copy primitives.
// A copy is made when issued (see cuset_async.h), so commit and wait_prior have nothing left
// to wait for; the size and zero-fill rules of cp.async are checked.
#pragma once
#include "cuset_async.h"

inline void __pipeline_memcpy_async(void* dst, const void* src, size_t size_and_align, size_t zfill = 0) {
  if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16)
    cuset::fault("__pipeline_memcpy_async of " + std::to_string(size_and_align) + " bytes in " + cuset::where() + " (4, 8 or 16 bytes)");
  if (zfill > size_and_align) cuset::fault("__pipeline_memcpy_async with zfill larger than its size in " + cuset::where());
  cuset::copy_now(dst, src, size_and_align - zfill);
  memset((char*)dst + (size_and_align - zfill), 0, zfill);
}
inline void __pipeline_commit() {}
inline void __pipeline_wait_prior(size_t) {}
