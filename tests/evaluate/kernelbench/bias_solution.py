import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# CUDA-device Python code as KernelBench solutions write it: a parameter created on "cuda",
# .to("cuda"), .cuda() on the module, torch.cuda.synchronize(); the bias comes from Model's state.
cuda_source = """
#include <torch/extension.h>

__global__ void bias_kernel(const float* x, const float* bias, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        y[i] = x[i] + bias[i % cols];
    }
}

torch::Tensor bias_add_cuda(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.device() == bias.device(), "x and bias must be on the same device");
    auto y = torch::empty_like(x);
    int rows = x.size(0), cols = x.size(1);
    bias_kernel<<<(rows * cols + 127) / 128, 128>>>(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

ext = load_inline(
    name="bias_ext",
    cpp_sources="torch::Tensor bias_add_cuda(torch::Tensor x, torch::Tensor bias);",
    cuda_sources=cuda_source,
    functions=["bias_add_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(features, device="cuda"))
        self.cuda()

    def forward(self, x):
        y = ext.bias_add_cuda(x.to("cuda").contiguous(), self.bias)
        torch.cuda.synchronize()
        return y
