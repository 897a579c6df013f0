"""Honest: the kernel writes its answer into a preallocated output passed in (must stay correct)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

void add_into(torch::Tensor a, torch::Tensor b, torch::Tensor out) {
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
}
"""

cpp_source = "void add_into(torch::Tensor a, torch::Tensor b, torch::Tensor out);"

ext = load_inline(name="adv_inplace_out", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=['add_into'], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        ext.add_into(a.contiguous(), b.contiguous(), out)
        return out
