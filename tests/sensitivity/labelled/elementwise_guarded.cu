// y = a * x + y, one thread per element, guarded against the tail block.
#include <cuda_runtime.h>

__global__ void saxpy_kernel(int n, float a, const float* __restrict__ x,
                             float* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void relu_kernel(const float* in, float* out, int n) {
    const int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    float v = in[idx];
    out[idx] = v > 0.0f ? v : 0.0f;
}
