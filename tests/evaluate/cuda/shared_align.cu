// `__shared__ T __align__(N) name[...]` with T a builtin type: the grammar ends that
// declaration at `__align__(8)`; the array must still be one aligned shared array.
#include <cstdint>
#include <cstdio>

__global__ void k(int* out) {
  __shared__ int __align__(16) s_data[64];
  __shared__ unsigned char __align__(8) s_bytes[24];
  s_data[threadIdx.x] = (int)threadIdx.x * 3;
  s_bytes[threadIdx.x % 24] = 1;
  __syncthreads();
  out[threadIdx.x] = s_data[63 - threadIdx.x];
  if (threadIdx.x == 0) out[64] = (int)((uintptr_t)s_data % 16) + (int)((uintptr_t)s_bytes % 8);
}

int main() {
  int* d;
  cudaMalloc(&d, 65 * sizeof(int));
  k<<<1, 64>>>(d);
  int h[65];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d %d\n", h[0], h[63], h[64]);
}
