// Grid-stride loop: any grid size covers any n.
__global__ void scale_kernel(float* data, float alpha, size_t n) {
    size_t start = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = start; i < n; i += stride) {
        data[i] = alpha * data[i];
    }
}

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        c[i] = a[i] + b[i];
    }
}
