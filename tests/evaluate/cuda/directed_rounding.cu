// Directed-rounding intrinsics and the inline-PTX subset: each value printed as a hex float.
#include <cfloat>
#include <cstdio>
// A program's own timer function by inline PTX (as cudaGraphsPerfScaling has): the asm must not
// turn into a call of this same function.
__device__ __forceinline__ unsigned long long __globaltimer() {
  unsigned long long g;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(g));
  return g;
}
__global__ void k(float* o, double* d, unsigned long long* t) {
  o[0] = __fadd_rd(1.0f, 1e-8f);
  o[1] = __fadd_ru(1.0f, 1e-8f);
  o[2] = __fadd_rn(1.0f, 1e-8f);
  o[3] = __fmul_rd(FLT_MAX, 2.0f);
  o[4] = __fadd_rd(1.0f, -1.0f);
  o[5] = __fdiv_ru(1.0f, 3.0f);
  o[6] = __fdiv_rd(1.0f, 3.0f);
  float r, z;
  asm("add.rp.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(1e-8f));
  o[7] = r;
  asm("mul.rm.f32 %0, %1, %2;" : "=f"(z) : "f"(-3.0f), "f"(0x1.555556p-2f));  // -(1 + 2^-25) exactly
  o[8] = z;
  d[0] = __dadd_rd(1.0, 1e-20);
  d[1] = __dadd_ru(1.0, 1e-20);
  d[2] = __dsqrt_ru(2.0);
  d[3] = __dsqrt_rd(2.0);
  unsigned long long g0 = __globaltimer(), g1 = __globaltimer();
  t[0] = g1 >= g0;
  unsigned sad, lane;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(sad) : "r"(0x01020304u), "r"(0x04030201u), "r"(10u));
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  t[1] = sad;
  t[2] = lane;
}
int main() {
  float* o;
  double* d;
  unsigned long long* t;
  cudaMalloc(&o, 9 * sizeof(float));
  cudaMalloc(&d, 4 * sizeof(double));
  cudaMalloc(&t, 3 * sizeof *t);
  k<<<1, 1>>>(o, d, t);  // one thread: lane 0
  float h[9];
  double hd[4];
  unsigned long long ht[3];
  cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost);
  cudaMemcpy(ht, t, sizeof ht, cudaMemcpyDeviceToHost);
  for (float v : h) printf("%a\n", v);
  for (double v : hd) printf("%a\n", v);
  printf("globaltimer monotonic %llu\n", ht[0]);
  printf("vabsdiff4 %llu laneid %llu\n", ht[1], ht[2]);
  return 0;
}
