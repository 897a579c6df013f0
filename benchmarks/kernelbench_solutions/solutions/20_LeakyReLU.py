import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

// Four elements per thread through float4 loads, then a scalar kernel for the tail.
__global__ void leaky_relu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4, float slope) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        v.x = v.x > 0.f ? v.x : v.x * slope;
        v.y = v.y > 0.f ? v.y : v.y * slope;
        v.z = v.z > 0.f ? v.z : v.z * slope;
        v.w = v.w > 0.f ? v.w : v.w * slope;
        y[i] = v;
    }
}

__global__ void leaky_relu_tail_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n, float slope) {
    int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.f ? v : v * slope;
    }
}

torch::Tensor leaky_relu_cuda(torch::Tensor x, double negative_slope) {
    TORCH_CHECK(x.device().is_cuda(), "x must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "leaky_relu_cuda only supports float32, got ", x.scalar_type());
    x = x.contiguous();
    auto y = torch::empty(x.sizes(), x.options());
    int64_t n = x.numel();
    int64_t n4 = n / 4;
    const int block = 256;
    float slope = static_cast<float>(negative_slope);
    if (n4 > 0) {
        int grid = (int)((n4 + block - 1) / block);
        leaky_relu_vec4_kernel<<<grid, block>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()),
                                                reinterpret_cast<float4*>(y.data_ptr<float>()), n4, slope);
    }
    int64_t rest = n - n4 * 4;
    if (rest > 0) {
        leaky_relu_tail_kernel<<<1, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), n4 * 4, n, slope);
    }
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "leaky_relu launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_src = "torch::Tensor leaky_relu_cuda(torch::Tensor x, double negative_slope);"

leaky = load_inline(name="kb20_leaky_relu_vec4", cpp_sources=[cpp_src], cuda_sources=[cuda_src],
                    functions=["leaky_relu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return leaky.leaky_relu_cuda(x, self.negative_slope)
