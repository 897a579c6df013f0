// Planted bug: lane 0 waits in a full-warp shuffle while lanes 1-31 wait at __syncthreads:
// neither can complete. The emulator must report the deadlock, not hang.
#include <cstdio>
__global__ void k(int* out) {
    int t = threadIdx.x;
    int v = t;
    if (t == 0) v = __shfl_sync(0xffffffff, v, 1);
    else __syncthreads();
    out[t] = v;
}
int main() {
    int* d; cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    printf("finished\n");
    return 0;
}
