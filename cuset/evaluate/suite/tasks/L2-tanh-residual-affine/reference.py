import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// a and b broadcast along rows: element i uses feature i % cols.
__global__ void tanh_residual_affine_kernel(const float* __restrict__ x, const float* __restrict__ a, const float* __restrict__ b,
                                            float* __restrict__ y, int64_t n, int cols) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const int c = static_cast<int>(i % cols);
        const float v = x[i];
        y[i] = v + tanhf(v * a[c] + b[c]);
    }
}

torch::Tensor tanh_residual_affine_cuda(torch::Tensor x, torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.numel() == x.size(-1) && b.numel() == x.size(-1), "a and b have one value per feature");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) {
        return y;
    }
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    tanh_residual_affine_kernel<<<blocks, threads>>>(x.data_ptr<float>(), a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
                                                     n, static_cast<int>(x.size(-1)));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor tanh_residual_affine_cuda(torch::Tensor x, torch::Tensor a, torch::Tensor b);"

tanh_residual_ext = load_inline(
    name="suite_tanh_residual_affine",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["tanh_residual_affine_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.a = nn.Parameter(torch.randn(dim))
        self.b = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh_residual_ext.tanh_residual_affine_cuda(x, self.a, self.b)
