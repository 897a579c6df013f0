import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

constexpr int WARPS = 4;

// One warp per (batch, query) row; key j is visible to query i when j <= i.
__global__ void causal_softmax_kernel(const float* __restrict__ scores, float* __restrict__ out, int64_t rows, int T) {
    const int lane = threadIdx.x % 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * WARPS + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    const int i = static_cast<int>(r % T);
    const float* s = scores + r * T;
    float* o = out + r * T;
    float m = -INFINITY;
    for (int j = lane; j < T; j += 32) {
        if (j <= i) {
            m = fmaxf(m, s[j]);
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
    }
    float sum = 0.0f;
    for (int j = lane; j < T; j += 32) {
        if (j <= i) {
            sum += expf(s[j] - m);
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(0xffffffff, sum, offset);
    }
    for (int j = lane; j < T; j += 32) {
        o[j] = (j <= i) ? expf(s[j] - m) / sum : 0.0f;
    }
}

torch::Tensor causal_softmax_cuda(torch::Tensor scores) {
    TORCH_CHECK(scores.is_cuda() && scores.dim() == 3 && scores.size(1) == scores.size(2), "scores must be a (B, T, T) CUDA tensor");
    TORCH_CHECK(scores.scalar_type() == torch::kFloat32, "scores must be float32");
    scores = scores.contiguous();
    auto out = torch::empty_like(scores);
    const int T = static_cast<int>(scores.size(2));
    const int64_t rows = scores.size(0) * T;
    const int blocks = static_cast<int>((rows + WARPS - 1) / WARPS);
    causal_softmax_kernel<<<blocks, WARPS * 32>>>(scores.data_ptr<float>(), out.data_ptr<float>(), rows, T);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor causal_softmax_cuda(torch::Tensor scores);"

causal_softmax_ext = load_inline(
    name="suite_causal_softmax",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["causal_softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return causal_softmax_ext.causal_softmax_cuda(scores)
