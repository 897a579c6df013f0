import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

// One block per row of A: the row is staged in shared memory, thread j computes (A B)[row][j],
// and a tree over the block (a power of two >= N) keeps the maximum.
__global__ void matmul_rowmax_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out, int N, int K) {
    extern __shared__ float smem[];
    float* a_row = smem;
    float* red = smem + K;
    const int j = threadIdx.x;
    const float* a = A + static_cast<int64_t>(blockIdx.x) * K;
    for (int k = j; k < K; k += blockDim.x) {
        a_row[k] = a[k];
    }
    __syncthreads();
    float v = -INFINITY;
    if (j < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += a_row[k] * B[static_cast<int64_t>(k) * N + j];
        }
        v = acc;
    }
    red[j] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (j < stride) {
            red[j] = fmaxf(red[j], red[j + stride]);
        }
        __syncthreads();
    }
    if (j == 0) {
        out[blockIdx.x] = red[0];
    }
}

torch::Tensor matmul_rowmax_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.dim() == 2 && B.dim() == 2, "A (M, K) and B (K, N) must be CUDA matrices");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions differ");
    TORCH_CHECK(B.size(1) <= 1024, "one thread per output column: N <= 1024");
    A = A.contiguous();
    B = B.contiguous();
    const int M = static_cast<int>(A.size(0));
    const int K = static_cast<int>(A.size(1));
    const int N = static_cast<int>(B.size(1));
    auto out = torch::empty({M}, A.options());
    int threads = 32;
    while (threads < N) {
        threads <<= 1;
    }
    const size_t smem = (K + threads) * sizeof(float);
    matmul_rowmax_kernel<<<M, threads, smem>>>(A.data_ptr<float>(), B.data_ptr<float>(), out.data_ptr<float>(), N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor matmul_rowmax_cuda(torch::Tensor A, torch::Tensor B);"

matmul_rowmax_ext = load_inline(
    name="suite_matmul_rowmax",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_rowmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_rowmax_ext.matmul_rowmax_cuda(A, B)
