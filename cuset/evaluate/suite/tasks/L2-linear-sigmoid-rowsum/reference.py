import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// One warp per row: lane j computes output feature j (out_features <= 32), then a shuffle sum.
__global__ void linear_sigmoid_rowsum_kernel(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                                             float* __restrict__ out, int N, int K) {
    const int row = blockIdx.x;
    const int j = threadIdx.x;
    const float* xr = x + static_cast<int64_t>(row) * K;
    float acc = 0.0f;
    if (j < N) {
        acc = b[j];
        for (int k = 0; k < K; ++k) {
            acc += xr[k] * W[static_cast<int64_t>(j) * K + k];
        }
    }
    float v = (j < N) ? 1.0f / (1.0f + expf(-acc)) : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (j == 0) {
        out[row] = v;
    }
}

torch::Tensor linear_sigmoid_rowsum_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && W.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 2 && W.dim() == 2 && x.size(1) == W.size(1), "x (M, K), W (N, K)");
    TORCH_CHECK(W.size(0) <= 32, "one warp per row: at most 32 output features");
    x = x.contiguous();
    W = W.contiguous();
    const int M = static_cast<int>(x.size(0));
    auto out = torch::empty({M}, x.options());
    linear_sigmoid_rowsum_kernel<<<M, 32>>>(x.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
                                            static_cast<int>(W.size(0)), static_cast<int>(x.size(1)));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor linear_sigmoid_rowsum_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b);"

linear_sigmoid_rowsum_ext = load_inline(
    name="suite_linear_sigmoid_rowsum",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_sigmoid_rowsum_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_sigmoid_rowsum_ext.linear_sigmoid_rowsum_cuda(x, self.linear.weight, self.linear.bias)
