// CSR sparse matrix-vector product, one thread per row, launched on a stream and timed.
#include <cuda_runtime.h>
#define BLOCK_SIZE 128

__global__ void spmv_csr(int n_rows, const int* row_ptr, const int* col_idx,
                         const float* vals, const float* x, float* y) {
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row < n_rows) {
        float dot = 0.0f;
        int begin = row_ptr[row];
        int end = row_ptr[row + 1];
        for (int j = begin; j < end; ++j) {
            dot += vals[j] * __ldg(&x[col_idx[j]]);
        }
        y[row] = dot;
    }
}

float run_spmv(int n_rows, const int* d_rp, const int* d_ci, const float* d_v,
               const float* h_x, float* d_x, float* d_y, size_t x_bytes) {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cudaStreamCreate(&stream);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaMemcpyAsync(d_x, h_x, x_bytes, cudaMemcpyHostToDevice, stream);
    int grid = (n_rows + BLOCK_SIZE - 1) / BLOCK_SIZE;
    cudaEventRecord(start, stream);
    spmv_csr<<<grid, BLOCK_SIZE, 0, stream>>>(n_rows, d_rp, d_ci, d_v, d_x, d_y);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaStreamDestroy(stream);
    return ms;
}
