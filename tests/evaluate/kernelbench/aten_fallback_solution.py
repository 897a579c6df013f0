import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The host code calls torch::matmul, which the CPU backend's torch shim does not have: the
# evaluator builds this one against real torch (path "torch").
cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(float* x, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor matmul_relu_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    auto c = torch::matmul(a, b).contiguous();
    const int64_t n = c.numel();
    const int threads = 128;
    relu_kernel<<<(n + threads - 1) / threads, threads, 0, at::cuda::getCurrentCUDAStream()>>>(c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

cpp_source = "torch::Tensor matmul_relu_cuda(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="matmul_relu_ext", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["matmul_relu_cuda"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return ext.matmul_relu_cuda(a.cuda(), b.cuda())
