// __CUDA_ARCH__ as nvcc's two passes see it: defined (800) in device-only code, undefined in
// host code and in __host__ __device__ functions (the emulator runs those as host code).
#include <cstdio>

#if __CUDA_ARCH__ >= 700
__device__ int arch_only(int x) { return x + 700; }
#endif

__host__ __device__ int both() {
#ifdef __CUDA_ARCH__
  return 1;
#else
  return 0;
#endif
}

__global__ void k(int* o) {
  o[0] = -1;
#if __CUDA_ARCH__ >= 700
  o[0] = arch_only(__CUDA_ARCH__ / 100);
#endif
#ifndef __CUDA_ARCH__
  o[1] = 5;
#else
  o[1] = 6;
#endif
  o[2] = both();
}

int main() {
  int* d;
  cudaMalloc(&d, 3 * sizeof(int));
  k<<<1, 1>>>(d);
  int h[3];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
#ifdef __CUDA_ARCH__
  printf("host sees __CUDA_ARCH__\n");
#endif
  printf("%d %d %d\n", h[0], h[1], h[2]);
}
