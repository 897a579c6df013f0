import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

__global__ void flip_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, int cols) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const int64_t row = i / cols;
        const int col = static_cast<int>(i % cols);
        y[i] = x[row * cols + (cols - 1 - col)];
    }
}

torch::Tensor flip_rows_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.dim() >= 1, "x must be a float32 tensor");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) {
        return y;
    }
    const int cols = static_cast<int>(x.size(-1));
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    flip_rows_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor flip_rows_cuda(torch::Tensor x);"

flip_ext = load_inline(
    name="suite_flip_rows",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["flip_rows_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return flip_ext.flip_rows_cuda(x.contiguous())
