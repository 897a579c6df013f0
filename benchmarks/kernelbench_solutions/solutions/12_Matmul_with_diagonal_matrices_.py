import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# diag(A) @ B without the N x N matrix: row i of B scaled by A[i]. Each 32x8 block caches its
# eight diagonal entries in shared memory.
diag_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void diag_matmul_kernel(const scalar_t* __restrict__ diag, const scalar_t* __restrict__ B, scalar_t* __restrict__ C,
                                   int N, int M) {
    __shared__ scalar_t d[8];
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) d[threadIdx.y] = row < N ? diag[row] : scalar_t(0);
    __syncthreads();
    if (row < N && col < M) C[(size_t)row * M + col] = d[threadIdx.y] * B[(size_t)row * M + col];
}

torch::Tensor diag_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 1 && B.dim() == 2 && A.size(0) == B.size(0), "A is (N,) and B is (N, M)");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int N = b.size(0), M = b.size(1);
    auto C = torch::empty_like(b);
    dim3 block(32, 8);
    dim3 grid((M + 31) / 32, (N + 7) / 8);
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(b.scalar_type(), "diag_matmul", [&] {
        diag_matmul_kernel<scalar_t><<<grid, block>>>(a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), C.data_ptr<scalar_t>(), N, M);
    });
    return C;
}
"""

diag_cpp = "torch::Tensor diag_matmul(torch::Tensor A, torch::Tensor B);"

diag_ext = load_inline(name="kb12_diag_matmul", cpp_sources=diag_cpp, cuda_sources=diag_source, functions=["diag_matmul"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return diag_ext.diag_matmul(A, B)
