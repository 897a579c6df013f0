// Planted bug: a host array is passed to a kernel.
#include <cstdio>
__global__ void k(int* out) { out[threadIdx.x] = 1; }
int main() {
    static int host[32];
    int* heap = new int[32];
    k<<<1, 32>>>(heap);
    cudaDeviceSynchronize();
    printf("%d %d\n", host[0], heap[0]);
    return 0;
}
