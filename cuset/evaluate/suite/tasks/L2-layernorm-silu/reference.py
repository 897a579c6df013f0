import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int WARPS = 4;

// Tree sum down to lane 0, then lane 0's total broadcast to the whole warp.
__device__ __forceinline__ float warp_total(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    return __shfl_sync(0xffffffff, v, 0);
}

// One warp per row: mean, variance (two passes), normalise, affine, SiLU.
__global__ void layernorm_silu_kernel(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                                      float* __restrict__ y, int rows, int cols, float eps) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    const float* xr = x + static_cast<int64_t>(r) * cols;
    float* yr = y + static_cast<int64_t>(r) * cols;
    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        sum += xr[c];
    }
    const float mean = warp_total(sum) / cols;
    float sq = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float d = xr[c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(warp_total(sq) / cols + eps);
    for (int c = lane; c < cols; c += 32) {
        const float v = (xr[c] - mean) * rstd * gamma[c] + beta[c];
        yr[c] = v / (1.0f + expf(-v));
    }
}

torch::Tensor layernorm_silu_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x must be a 2-D float32 CUDA tensor");
    TORCH_CHECK(gamma.numel() == x.size(1) && beta.numel() == x.size(1), "gamma and beta have one value per column");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int rows = static_cast<int>(x.size(0));
    const int blocks = (rows + WARPS - 1) / WARPS;
    layernorm_silu_kernel<<<blocks, WARPS * 32>>>(x.data_ptr<float>(), gamma.data_ptr<float>(), beta.data_ptr<float>(), y.data_ptr<float>(),
                                                  rows, static_cast<int>(x.size(1)), static_cast<float>(eps));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_silu_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);"

layernorm_silu_ext = load_inline(
    name="suite_layernorm_silu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm_silu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm_silu_ext.layernorm_silu_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
