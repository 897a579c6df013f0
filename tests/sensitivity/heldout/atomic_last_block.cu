// Global max with an atomicCAS loop, then the last block to finish resets the counter.
__device__ unsigned int blocks_done = 0;

__device__ float atomic_max_float(float* addr, float value) {
    int* p = (int*)addr;
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(p, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void global_max(const float* in, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : -INFINITY;
    unsigned active = __activemask();
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_down_sync(active, v, off));
    if ((threadIdx.x & 31) == 0) atomic_max_float(result, v);
    __threadfence();
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        unsigned ticket = atomicInc(&blocks_done, gridDim.x);
        is_last = (ticket == gridDim.x - 1);
    }
    if (__syncthreads_or(is_last) && threadIdx.x == 0) blocks_done = 0;
}
