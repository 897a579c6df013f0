// Threads that returned early count as arrived at later barriers (as on a GPU).
#include <cstdio>
__global__ void partial_sum(const int* x, int* out, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    if (t >= n) return;
    s[t] = x[t];
    __syncthreads();
    if (t == 0) {
        int acc = 0;
        for (int i = 0; i < n; ++i) acc += s[i];
        *out = acc;
    }
}
int main() {
    int h[256]; for (int i = 0; i < 256; ++i) h[i] = i + 1;
    int *x, *o; cudaMalloc(&x, sizeof h); cudaMalloc(&o, sizeof(int));
    cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
    partial_sum<<<1, 256>>>(x, o, 100);
    int r; cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost);
    printf("sum=%d\n", r);
    return 0;
}
