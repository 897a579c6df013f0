import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>
#include <vector>

constexpr int MAX_EXPERTS = 32;

// One thread per token: k rounds of "largest not yet taken" (experts <= 32, a bit mask marks the
// taken ones), in descending order like torch.topk, then a softmax over the k values.
__global__ void topk_softmax_kernel(const float* __restrict__ logits, float* __restrict__ weights, int64_t* __restrict__ indices,
                                    int tokens, int experts, int k) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tokens) {
        return;
    }
    const float* row = logits + static_cast<int64_t>(t) * experts;
    float* w = weights + static_cast<int64_t>(t) * k;
    int64_t* idx = indices + static_cast<int64_t>(t) * k;
    unsigned int taken = 0u;
    for (int r = 0; r < k; ++r) {
        float best = -INFINITY;
        int best_i = 0;
        for (int e = 0; e < experts; ++e) {
            if (!(taken & (1u << e)) && row[e] > best) {
                best = row[e];
                best_i = e;
            }
        }
        taken |= 1u << best_i;
        w[r] = best;
        idx[r] = best_i;
    }
    const float m = w[0];
    float sum = 0.0f;
    for (int r = 0; r < k; ++r) {
        w[r] = expf(w[r] - m);
        sum += w[r];
    }
    for (int r = 0; r < k; ++r) {
        w[r] /= sum;
    }
}

std::vector<torch::Tensor> topk_softmax_cuda(torch::Tensor logits, int64_t k) {
    TORCH_CHECK(logits.is_cuda() && logits.dim() == 2 && logits.scalar_type() == torch::kFloat32, "logits must be a float32 (T, E) CUDA tensor");
    TORCH_CHECK(logits.size(1) <= MAX_EXPERTS && k >= 1 && k <= logits.size(1), "at most 32 experts and 1 <= k <= experts");
    logits = logits.contiguous();
    const int tokens = static_cast<int>(logits.size(0));
    auto weights = torch::empty({tokens, k}, logits.options());
    auto indices = torch::empty({tokens, k}, logits.options().dtype(torch::kInt64));
    const int threads = 64;
    const int blocks = (tokens + threads - 1) / threads;
    topk_softmax_kernel<<<blocks, threads>>>(logits.data_ptr<float>(), weights.data_ptr<float>(), indices.data_ptr<int64_t>(), tokens,
                                             static_cast<int>(logits.size(1)), static_cast<int>(k));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {weights, indices};
}
"""

cpp_source = "std::vector<torch::Tensor> topk_softmax_cuda(torch::Tensor logits, int64_t k);"

topk_ext = load_inline(
    name="suite_topk_softmax",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["topk_softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, logits: torch.Tensor):
        weights, indices = topk_ext.topk_softmax_cuda(logits, self.k)
        return weights, indices
