// Planted bug: only half the shared tile is written, but every thread reads its own slot.
#include <cstdio>
__global__ void k(int* out) {
    __shared__ int tile[64];
    int t = threadIdx.x;
    if (t < 32) tile[t] = t;
    __syncthreads();
    out[t] = tile[t];
}
int main() {
    int* d; cudaMalloc(&d, 64 * sizeof(int));
    k<<<1, 64>>>(d);
    int h[64]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    long long sum = 0; for (int i = 0; i < 64; ++i) sum += h[i];
    printf("sum=%lld\n", sum);
    return 0;
}
