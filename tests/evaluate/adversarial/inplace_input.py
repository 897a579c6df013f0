"""Honest but rude: the kernel adds b into a in place and returns a (correct, flagged for changing an input)."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void add_kernel(float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}

void add_inplace(torch::Tensor a, torch::Tensor b) {
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), n);
}
"""

cpp_source = "void add_inplace(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="adv_inplace_in", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=['add_inplace'], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        ext.add_inplace(a, b)
        return a
