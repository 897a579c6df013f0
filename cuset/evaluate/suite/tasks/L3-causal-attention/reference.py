import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

constexpr int WARPS = 4;
constexpr int MAX_T = 1024;

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
    }
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, offset);
    }
    return v;
}

// One warp per (batch*head, query i): lanes take keys j = lane, lane + 32, ... up to i (causal)
// for a warp max and a warp sum; the scores are recomputed in each pass instead of stored.
__global__ void causal_attention_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                        float* __restrict__ out, int64_t rows, int T, int D, float scale) {
    const int lane = threadIdx.x % 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * WARPS + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    const int i = static_cast<int>(r % T);
    const int64_t head = r / T;
    const float* qi = q + r * D;
    const float* kh = k + head * T * D;
    const float* vh = v + head * T * D;
    float m = -INFINITY;
    for (int j = lane; j <= i; j += 32) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) {
            s += qi[d] * kh[static_cast<int64_t>(j) * D + d];
        }
        m = fmaxf(m, s * scale);
    }
    m = warp_max(m);
    float sum = 0.0f;
    for (int j = lane; j <= i; j += 32) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) {
            s += qi[d] * kh[static_cast<int64_t>(j) * D + d];
        }
        sum += expf(s * scale - m);
    }
    sum = warp_sum(sum);
    // Output: lane d accumulates component d over the visible keys.
    for (int d = lane; d < D; d += 32) {
        float acc = 0.0f;
        for (int j = 0; j <= i; ++j) {
            float s = 0.0f;
            for (int e = 0; e < D; ++e) {
                s += qi[e] * kh[static_cast<int64_t>(j) * D + e];
            }
            acc += expf(s * scale - m) * vh[static_cast<int64_t>(j) * D + d];
        }
        out[r * D + d] = acc / sum;
    }
}

torch::Tensor causal_attention_cuda(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale) {
    TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(), "q, k, v are (B, H, T, D) of one shape");
    TORCH_CHECK(q.size(2) <= MAX_T, "sequence too long");
    q = q.contiguous();
    k = k.contiguous();
    v = v.contiguous();
    auto out = torch::empty_like(q);
    const int T = static_cast<int>(q.size(2));
    const int D = static_cast<int>(q.size(3));
    const int64_t rows = q.size(0) * q.size(1) * T;
    const int blocks = static_cast<int>((rows + WARPS - 1) / WARPS);
    causal_attention_kernel<<<blocks, WARPS * 32>>>(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(),
                                                    rows, T, D, static_cast<float>(scale));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor causal_attention_cuda(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale);"

causal_attention_ext = load_inline(
    name="suite_causal_attention",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["causal_attention_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return causal_attention_ext.causal_attention_cuda(q, k, v, 1.0 / math.sqrt(q.size(-1)))
