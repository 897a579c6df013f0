import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Exact GELU (erf form, what F.gelu computes by default); bindings in a PYBIND11_MODULE.
gelu_cuda = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

__device__ __forceinline__ float gelu_erf(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

__global__ void gelu_kernel(const float* input, float* output, long long size) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        output[idx] = gelu_erf(input[idx]);
    }
}

torch::Tensor gelu_forward(torch::Tensor input) {
    CHECK_INPUT(input);
    auto output = torch::empty(input.sizes(), input.options());
    long long size = input.numel();
    int threads = 512;
    int blocks = (int)((size + threads - 1) / threads);
    gelu_kernel<<<blocks, threads>>>(input.data_ptr<float>(), output.data_ptr<float>(), size);
    return output;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("gelu_forward", &gelu_forward, "GELU forward (CUDA)");
}
"""

gelu_ext = load_inline(name="kb26_gelu_erf", cpp_sources="", cuda_sources=gelu_cuda, verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu_ext.gelu_forward(x.contiguous())
