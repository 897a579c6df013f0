// Planted bug: even and odd threads wait at different __syncthreads() calls; on a GPU this
// hangs or corrupts; the emulator must report it, not hang.
#include <cstdio>
__global__ void k(int* out) {
    int t = threadIdx.x;
    if (t % 2 == 0) {
        out[t] = 1;
        __syncthreads();
    } else {
        out[t] = 2;
        __syncthreads();
    }
}
int main() {
    int* d; cudaMalloc(&d, 64 * sizeof(int));
    k<<<1, 64>>>(d);
    cudaDeviceSynchronize();
    printf("finished\n");
    return 0;
}
