// 256-bin byte histogram: private shared-memory bins, then merged with global atomics.
#define NUM_BINS 256

__global__ void histogram256(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    while (i < n) {
        atomicAdd(&local[data[i]], 1u);
        i += stride;
    }
    __syncthreads();

    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
        atomicAdd(&bins[b], local[b]);
    }
}
