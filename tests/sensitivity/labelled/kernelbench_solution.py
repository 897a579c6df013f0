import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused bias + GELU (tanh approximation) — one pass over the output, ≈2x fewer reads.
gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_gelu_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                 float* __restrict__ out, int64_t numel, int64_t features) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numel) {
        float v = x[idx] + bias[idx % features];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        out[idx] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

torch::Tensor bias_gelu_cuda(torch::Tensor x, torch::Tensor bias) {
    auto out = torch::empty_like(x);
    int64_t numel = x.numel();
    const int threads = 256;
    const int blocks = (numel + threads - 1) / threads;
    bias_gelu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(), numel, x.size(-1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

gelu_cpp_source = "torch::Tensor bias_gelu_cuda(torch::Tensor x, torch::Tensor bias);"

bias_gelu = load_inline(
    name="bias_gelu",
    cpp_sources=gelu_cpp_source,
    cuda_sources=gelu_source,
    functions=["bias_gelu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return bias_gelu.bias_gelu_cuda(x.contiguous(), self.bias)
