// cuset_rounding.h: CUDA's directed-rounding arithmetic intrinsics for the CPU emulator
// (included by cuset_runtime_api.h; the round-to-nearest forms are in cuset_cuda.h), and the
// helpers the inline-PTX subset (cpu/ptx.py) translates special registers and vabsdiff4 to.
//
//   __fadd_rz/_rd/_ru  __fsub_  __fmul_  __fdiv_  __fmaf_  __fsqrt_  __frcp_     (float)
//   __dadd_rz/_rd/_ru  __dsub_  __dmul_  __ddiv_  __fma_   __dsqrt_  __drcp_     (double)
//
// rz rounds toward zero, rd toward -infinity, ru toward +infinity. Each is one IEEE operation
// computed by the CPU under that rounding mode (the SSE control register on x86-64, fesetround
// elsewhere), which IEEE 754 makes exact: the
// result is the representable neighbour of the exact value on the named side (the exact value
// itself when representable), overflow and signed zeros included. The operands and result go
// through volatile locals so the compiler can neither fold the operation at compile time nor
// move it across the mode switch (g++ assumes round-to-nearest without -frounding-math). The
// inline-PTX subset (cpu/ptx.py) maps add.rm.f32 and friends onto these. Float operations use
// SSE, not x87, so precision is the type's own; the fiber switch saves MXCSR per thread, and the
// previous mode is restored before returning.
#pragma once
#include <cfenv>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace cuset {
template <class T, class Op>
inline T rounded(int mode, Op op) {
#if defined(__x86_64__)
  // float and double arithmetic is SSE here (glibc's fma and sqrt too), so the SSE control
  // register alone sets the mode: its rounding field (bits 13-14) holds fenv's FE_* values >> 10,
  // i.e. mode << 3. A few cycles, against fesetround's x87 environment save and restore.
  const unsigned old = _mm_getcsr();
  _mm_setcsr((old & ~0x6000u) | ((unsigned)mode << 3));
  volatile T r = op();
  _mm_setcsr(old);
#else
  const int old = fegetround();
  fesetround(mode);
  volatile T r = op();
  fesetround(old);
#endif
  return r;
}
}  // namespace cuset

#define CUSET_ROUNDED(S, MODE)                                                                                                  \
  inline float __fadd_##S(float a, float b) { volatile float x = a, y = b; return cuset::rounded<float>(MODE, [&] { return x + y; }); } \
  inline float __fsub_##S(float a, float b) { volatile float x = a, y = b; return cuset::rounded<float>(MODE, [&] { return x - y; }); } \
  inline float __fmul_##S(float a, float b) { volatile float x = a, y = b; return cuset::rounded<float>(MODE, [&] { return x * y; }); } \
  inline float __fdiv_##S(float a, float b) { volatile float x = a, y = b; return cuset::rounded<float>(MODE, [&] { return x / y; }); } \
  inline float __fmaf_##S(float a, float b, float c) {                                                                           \
    volatile float x = a, y = b, z = c;                                                                                        \
    return cuset::rounded<float>(MODE, [&] { return fmaf(x, y, z); });                                                         \
  }                                                                                                                            \
  inline float __fsqrt_##S(float a) { volatile float x = a; return cuset::rounded<float>(MODE, [&] { return sqrtf(x); }); }     \
  inline float __frcp_##S(float a) { volatile float x = a; return cuset::rounded<float>(MODE, [&] { return 1.0f / x; }); }      \
  inline double __dadd_##S(double a, double b) { volatile double x = a, y = b; return cuset::rounded<double>(MODE, [&] { return x + y; }); } \
  inline double __dsub_##S(double a, double b) { volatile double x = a, y = b; return cuset::rounded<double>(MODE, [&] { return x - y; }); } \
  inline double __dmul_##S(double a, double b) { volatile double x = a, y = b; return cuset::rounded<double>(MODE, [&] { return x * y; }); } \
  inline double __ddiv_##S(double a, double b) { volatile double x = a, y = b; return cuset::rounded<double>(MODE, [&] { return x / y; }); } \
  inline double __fma_##S(double a, double b, double c) {                                                                        \
    volatile double x = a, y = b, z = c;                                                                                       \
    return cuset::rounded<double>(MODE, [&] { return fma(x, y, z); });                                                         \
  }                                                                                                                            \
  inline double __dsqrt_##S(double a) { volatile double x = a; return cuset::rounded<double>(MODE, [&] { return sqrt(x); }); }  \
  inline double __drcp_##S(double a) { volatile double x = a; return cuset::rounded<double>(MODE, [&] { return 1.0 / x; }); }
CUSET_ROUNDED(rz, FE_TOWARDZERO)
CUSET_ROUNDED(rd, FE_DOWNWARD)
CUSET_ROUNDED(ru, FE_UPWARD)
#undef CUSET_ROUNDED

// %laneid, %warpid, %smid, %nsmid of the inline-PTX subset (cpu/ptx.py): the calling thread's
// lane and warp in its block; blocks run on pool workers, reported as multiprocessor 0 of
// options().workers.
inline unsigned cuset_ptx_laneid() { return cuset::cur_thread ? cuset::cur_thread->lane : (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32; }
inline unsigned cuset_ptx_warpid() { return cuset::cur_thread ? cuset::cur_thread->warp : (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32; }
inline unsigned cuset_ptx_lanemask_lt() { return (1u << cuset_ptx_laneid()) - 1; }
inline unsigned cuset_ptx_smid() { return 0; }
inline unsigned cuset_ptx_nsmid() { return cuset::options().workers; }
// vabsdiff4.u32.u32.u32.add d, a, b, c: c plus the absolute differences of a's and b's 4 bytes.
inline unsigned cuset_ptx_vabsdiff4_add(unsigned a, unsigned b, unsigned c) {
  for (int k = 0; k < 32; k += 8) {
    unsigned x = (a >> k) & 0xFF, y = (b >> k) & 0xFF;
    c += x > y ? x - y : y - x;
  }
  return c;
}
