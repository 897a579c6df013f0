// A failing device assert(): the launch reports cudaErrorAssert at the next synchronizing call
// (the device stays in that error state), the failing thread ends there (the store after the
// assert never happens) and host code is unaffected. One kernel runs as a plain loop (no
// barrier), one as fibers (a __syncthreads after the assert must not deadlock).
#include <cassert>
#include <cstdio>

__global__ void plain(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
  out[i] = 1;
}

__global__ void barrier(int* out, int n) {
  __shared__ int s[64];
  int i = threadIdx.x;
  s[i] = i;
  assert(i != 5 || n > 100);
  __syncthreads();
  out[i] = s[63 - i];
}

int main() {
  int* d;
  cudaMalloc(&d, 128 * sizeof(int));
  cudaMemset(d, 0, 128 * sizeof(int));
  plain<<<1, 64>>>(d, 64);  // every thread passes
  printf("ok launch: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  barrier<<<1, 64>>>(d, 1);  // thread 5 fails
  cudaError_t e = cudaDeviceSynchronize();
  printf("barrier launch: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e));
  printf("sticky: %s %s\n", cudaGetErrorName(cudaGetLastError()), cudaGetErrorName(cudaDeviceSynchronize()));
  cudaDeviceReset();
  cudaMalloc(&d, 128 * sizeof(int));
  cudaMemset(d, 0, 128 * sizeof(int));
  plain<<<4, 32>>>(d, 40);  // threads 40..127 fail
  e = cudaDeviceSynchronize();
  cudaDeviceReset();
  cudaMalloc(&d, 128 * sizeof(int));
  printf("plain launch: %s\n", cudaGetErrorName(e));
  assert(e == cudaErrorAssert);  // host assert passes
  printf("done\n");
  return 0;
}
