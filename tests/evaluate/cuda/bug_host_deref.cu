// Planted bug: host code reads a device pointer directly instead of copying it back.
#include <cstdio>
__global__ void k(int* out) { out[threadIdx.x] = threadIdx.x; }
int main() {
    int* d; cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    printf("d[5]=%d\n", d[5]);
    return 0;
}
