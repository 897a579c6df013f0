// Planted bug: writes one element past the end of a shared array (s[t + 1] for t = 63).
#include <cstdio>
__global__ void shift(const float* x, float* y) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t + 1] = x[t];
    __syncthreads();
    y[t] = s[t];
}
int main() {
    float h[64] = {0};
    float *x, *y; cudaMalloc(&x, sizeof h); cudaMalloc(&y, sizeof h);
    cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
    shift<<<1, 64>>>(x, y);
    cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
    printf("y[1]=%f\n", h[1]);
    return 0;
}
