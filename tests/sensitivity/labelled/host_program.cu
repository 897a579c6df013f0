// A complete program: allocate, copy, launch a 2D kernel, check errors, copy back, free.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                   \
    do {                                                                   \
        cudaError_t err = (call);                                          \
        if (err != cudaSuccess) {                                          \
            fprintf(stderr, "CUDA error %s\n", cudaGetErrorString(err));   \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

__global__ void add2d(const float* a, const float* b, float* c, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) c[y * w + x] = a[y * w + x] + b[y * w + x];
}

int main() {
    const int w = 1024, h = 768;
    size_t bytes = (size_t)w * h * sizeof(float);
    float* h_a = (float*)malloc(bytes);
    float *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_a, bytes, cudaMemcpyHostToDevice));

    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    add2d<<<grid, block>>>(d_a, d_b, d_c, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_a, d_c, bytes, cudaMemcpyDeviceToHost));
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    free(h_a);
    return 0;
}
