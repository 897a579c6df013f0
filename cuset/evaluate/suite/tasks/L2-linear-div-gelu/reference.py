import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int TILE = 16;

// y = gelu((x W^T + b) / divisor): 16x16 shared-memory tiles, the epilogue fused into the store.
__global__ void linear_div_gelu_kernel(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                                       float* __restrict__ y, int M, int N, int K, float inv_divisor) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int wrow = blockIdx.x * TILE + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        xs[ty][tx] = (row < M && k0 + tx < K) ? x[static_cast<int64_t>(row) * K + k0 + tx] : 0.0f;
        ws[ty][tx] = (wrow < N && k0 + tx < K) ? W[static_cast<int64_t>(wrow) * K + k0 + tx] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += xs[ty][k] * ws[tx][k];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        const float v = (acc + b[col]) * inv_divisor;
        y[static_cast<int64_t>(row) * N + col] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

torch::Tensor linear_div_gelu_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b, double divisor) {
    TORCH_CHECK(x.is_cuda() && W.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 2 && W.dim() == 2 && x.size(1) == W.size(1), "x (M, K), W (N, K)");
    x = x.contiguous();
    W = W.contiguous();
    const int M = static_cast<int>(x.size(0));
    const int K = static_cast<int>(x.size(1));
    const int N = static_cast<int>(W.size(0));
    auto y = torch::empty({M, N}, x.options());
    const dim3 threads(TILE, TILE);
    const dim3 blocks((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_div_gelu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
                                                M, N, K, static_cast<float>(1.0 / divisor));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor linear_div_gelu_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b, double divisor);"

linear_div_gelu_ext = load_inline(
    name="suite_linear_div_gelu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_div_gelu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, divisor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_div_gelu_ext.linear_div_gelu_cuda(x, self.linear.weight, self.linear.bias, self.divisor)
