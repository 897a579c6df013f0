// Row-wise softmax: one block per row, block-stride loops, shared-memory max and sum.
#include <cfloat>

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float red[];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;

    float m = -FLT_MAX;
    for (int c = tid; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    red[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) sum += __expf(xr[c] - m);
    red[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = __fdividef(1.0f, red[0]);
    for (int c = tid; c < cols; c += blockDim.x) yr[c] = __expf(xr[c] - m) * inv;
}
