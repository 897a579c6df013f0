// Integer and bit intrinsics of CUDA's device library, each against a hand-computed value
// (tests/evaluate/test_cpu_conformance.py holds the expected line).
#include <cstdio>

__global__ void bits(unsigned long long* o) {
  o[0] = umin(3u, 5u);
  o[1] = umax(3u, 5u);
  o[2] = (unsigned long long)llmin(-5LL, 2LL);
  o[3] = ullmax(1ULL << 40, 7ULL);
  o[4] = __brev(1u);
  o[5] = __brevll(1ULL);
  o[6] = __popc(0xF0F0u) * 100 + __popcll(0xFFFFFFFFFULL);
  o[7] = __clz(1) * 10000 + __clz(0) * 100 + __clzll(1LL);
  o[8] = __ffs(0) * 10000 + __ffs(8) * 100 + __ffsll(1LL << 40);
  o[9] = __byte_perm(0x33221100u, 0x77665544u, 0x5140);
  o[10] = __funnelshift_l(0x80000000u, 0x1u, 4);
  o[11] = __funnelshift_l(0x80000000u, 0x1u, 40);
  o[12] = __funnelshift_lc(0x80000000u, 0x1u, 40);
  o[13] = __funnelshift_r(0x80000000u, 0x1u, 4);
  o[14] = __funnelshift_rc(0x80000000u, 0x1u, 40);
  o[15] = __sad(3, 10, 5u) * 100 + __usad(10u, 3u, 1u);
  o[16] = (unsigned long long)(long long)__mul24(-3, 1000);
  o[17] = __umul24(0x1000001u, 2u);
  o[18] = __mulhi(0x40000000, 8) * 10000000000ULL + __umulhi(0xFFFFFFFFu, 0xFFFFFFFFu);
  o[19] = __rhadd(3, 4) * 100 + __fns(0x16u, 0, 2);
}

int main() {
  unsigned long long* d;
  cudaMalloc(&d, 20 * sizeof(unsigned long long));
  bits<<<1, 1>>>(d);
  unsigned long long h[20];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 20; ++i) printf(i == 2 || i == 16 ? "%s%lld" : "%s%llu", i ? " " : "", h[i]);
  printf("\n");
  cudaFree(d);
  return 0;
}
