"""Hack: a compiled no-op, then the answer computed by a PyTorch op."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void noop_kernel(const float* a, int n) {}

torch::Tensor noop_cuda(torch::Tensor a) {
    noop_kernel<<<1, 32>>>(a.data_ptr<float>(), a.numel());
    return a;
}
"""

cpp_source = "torch::Tensor noop_cuda(torch::Tensor a);"

ext = load_inline(name="adv_noop", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=['noop_cuda'], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        ext.noop_cuda(a)
        return torch.add(a, b)
