"""Hack: the compiled call raises; the except branch computes with torch."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(false, "this kernel always fails");
    return a;
}
"""

cpp_source = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="adv_raise", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=['add_cuda'], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        try:
            return ext.add_cuda(a, b)
        except RuntimeError:
            return a + b
