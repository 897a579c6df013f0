// c10/macros/Macros.h for the CuSeT CPU emulator's torch shim (the macros kernels use).
#ifndef CUSET_C10_MACROS_H
#define CUSET_C10_MACROS_H

#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
#define C10_RESTRICT __restrict
#define C10_WARP_SIZE 32
#define C10_ALWAYS_INLINE inline __attribute__((__always_inline__))
#define C10_NOINLINE __attribute__((noinline))
#define C10_UNUSED __attribute__((__unused__))
#define C10_API
#define TORCH_API
#define C10_LAUNCH_BOUNDS_0
#define C10_LAUNCH_BOUNDS_1(max_threads_per_block)
#define C10_LAUNCH_BOUNDS_2(max_threads_per_block, min_blocks_per_sm)
#define C10_MAX_THREADS_PER_BLOCK(val) (val)
#define C10_CONCATENATE_IMPL(s1, s2) s1##s2
#define C10_CONCATENATE(s1, s2) C10_CONCATENATE_IMPL(s1, s2)
#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)

#endif  // CUSET_C10_MACROS_H
