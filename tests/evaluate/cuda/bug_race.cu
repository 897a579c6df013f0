// Planted bug: the tree reduction is missing the __syncthreads() after each step.
#include <cstdio>
__global__ void sum(const int* x, int* out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        // BUG: no __syncthreads() here
    }
    if (t == 0) *out = s[0];
}
int main() {
    int h[128]; for (int i = 0; i < 128; ++i) h[i] = i;
    int *x, *o; cudaMalloc(&x, sizeof h); cudaMalloc(&o, sizeof(int));
    cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
    sum<<<1, 128>>>(x, o);
    int r; cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost);
    printf("sum=%d\n", r);
    return 0;
}
