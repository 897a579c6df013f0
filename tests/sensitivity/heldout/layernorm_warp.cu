// LayerNorm with one warp per row: float4 loads, butterfly reductions, no shared memory.
#include <cuda_runtime.h>

template <int WARPS_PER_BLOCK>
__global__ void layernorm_warp(const float4* __restrict__ x, const float* __restrict__ gamma,
                               float4* __restrict__ y, int rows, int cols4, float eps) {
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS_PER_BLOCK + warp;
    if (row >= rows) return;

    const float4* xr = x + (long)row * cols4;
    float sum = 0.f, sq = 0.f;
    for (int c = lane; c < cols4; c += 32) {
        float4 v = xr[c];
        sum += v.x + v.y + v.z + v.w;
        sq += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
#pragma unroll
    for (int m = 16; m >= 1; m >>= 1) {
        sum += __shfl_xor_sync(0xffffffff, sum, m);
        sq += __shfl_xor_sync(0xffffffff, sq, m);
    }
    const float n = 4.f * cols4;
    const float mean = sum / n;
    const float rstd = rsqrtf(sq / n - mean * mean + eps);
    for (int c = lane; c < cols4; c += 32) {
        float4 v = xr[c];
        float4 o;
        o.x = (v.x - mean) * rstd * gamma[4 * c];
        o.y = (v.y - mean) * rstd * gamma[4 * c + 1];
        o.z = (v.z - mean) * rstd * gamma[4 * c + 2];
        o.w = (v.w - mean) * rstd * gamma[4 * c + 3];
        y[(long)row * cols4 + c] = o;
    }
}
