// Planted bug: the guard is `i <= n`, so thread n writes one element past the allocation;
// n is a multiple of 1024 so the write lands right on the guard page after the allocation.
#include <cstdio>
__global__ void fill(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = 1.0f;
}
int main() {
    const int n = 4096;
    float* y; cudaMalloc(&y, n * sizeof(float));
    fill<<<(n + 256) / 256, 256>>>(y, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("sync: %s\n", cudaGetErrorString(e));
    return 0;
}
