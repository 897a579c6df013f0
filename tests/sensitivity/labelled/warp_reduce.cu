// Warp-shuffle reduction: each warp reduces in registers, lane 0 adds to the total.
#define FULL_MASK 0xffffffff

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(FULL_MASK, v, offset);
    }
    return v;
}

__global__ void dot_kernel(const float* x, const float* y, float* result, int n) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    float v = 0.0f;
    for (int i = gid; i < n; i += blockDim.x * gridDim.x) {
        v += x[i] * y[i];
    }
    v = warp_sum(v);
    unsigned mask = __ballot_sync(FULL_MASK, v != 0.0f);
    if (lane == 0 && mask != 0) {
        atomicAdd(result, v);
    }
}
