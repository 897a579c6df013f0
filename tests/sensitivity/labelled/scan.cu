// Inclusive Hillis-Steele scan of one block (n <= blockDim.x), double-buffered in shared memory.
__global__ void scan_block(const float* in, float* out, int n) {
    extern __shared__ float temp[];
    int tid = threadIdx.x;
    int pout = 0, pin = 1;

    temp[pout * n + tid] = (tid < n) ? in[tid] : 0.0f;
    __syncthreads();

    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            temp[pout * n + tid] = temp[pin * n + tid] + temp[pin * n + tid - offset];
        else
            temp[pout * n + tid] = temp[pin * n + tid];
        __syncthreads();
    }
    if (tid < n) out[tid] = temp[pout * n + tid];
}
