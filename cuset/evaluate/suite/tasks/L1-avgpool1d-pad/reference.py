import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// One thread per output position; padded taps add nothing but still count (count_include_pad).
__global__ void avgpool1d_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int L, int LO, int k, int stride, int pad) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * LO) {
        return;
    }
    const int o = static_cast<int>(i % LO);
    const float* xr = x + (i / LO) * L;
    const int start = o * stride - pad;
    float sum = 0.0f;
    for (int j = start; j < start + k; ++j) {
        if (j >= 0 && j < L) {
            sum += xr[j];
        }
    }
    y[i] = sum / k;
}

torch::Tensor avgpool1d_cuda(torch::Tensor x, int64_t k, int64_t stride, int64_t pad) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 3, "x must be a contiguous (B, C, L) CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const int L = static_cast<int>(x.size(2));
    const int LO = static_cast<int>((L + 2 * pad - k) / stride + 1);
    auto y = torch::empty({x.size(0), x.size(1), LO}, x.options());
    const int64_t rows = x.size(0) * x.size(1);
    const int threads = 128;
    const int blocks = static_cast<int>((rows * LO + threads - 1) / threads);
    avgpool1d_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, L, LO, static_cast<int>(k),
                                          static_cast<int>(stride), static_cast<int>(pad));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor avgpool1d_cuda(torch::Tensor x, int64_t k, int64_t stride, int64_t pad);"

avgpool_ext = load_inline(
    name="suite_avgpool1d",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["avgpool1d_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return avgpool_ext.avgpool1d_cuda(x.contiguous(), 3, 2, 1)
