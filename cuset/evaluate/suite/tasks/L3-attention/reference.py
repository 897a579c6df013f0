import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

constexpr int THREADS = 32;

// One block per (batch, query). The block writes the query's T scores to shared memory; after a
// barrier every thread reads all of them (max and sum are cheap for small T) and computes some
// output components.
__global__ void attention_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                 float* __restrict__ out, int T, int D, float scale) {
    extern __shared__ float p[];
    const int tid = threadIdx.x;
    const int64_t bi = blockIdx.x;
    const int64_t b = bi / T;
    const float* qi = q + bi * D;
    const float* kb = k + b * T * D;
    const float* vb = v + b * T * D;
    for (int j = tid; j < T; j += THREADS) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) {
            s += qi[d] * kb[static_cast<int64_t>(j) * D + d];
        }
        p[j] = s * scale;
    }
    __syncthreads();
    float m = -INFINITY;
    for (int j = 0; j < T; ++j) {
        m = fmaxf(m, p[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < T; ++j) {
        sum += expf(p[j] - m);
    }
    for (int d = tid; d < D; d += THREADS) {
        float acc = 0.0f;
        for (int j = 0; j < T; ++j) {
            acc += expf(p[j] - m) * vb[static_cast<int64_t>(j) * D + d];
        }
        out[bi * D + d] = acc / sum;
    }
}

torch::Tensor attention_cuda(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale) {
    TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(q.dim() == 3 && q.sizes() == k.sizes() && q.sizes() == v.sizes(), "q, k, v are (B, T, D) of one shape");
    q = q.contiguous();
    k = k.contiguous();
    v = v.contiguous();
    const int T = static_cast<int>(q.size(1));
    const int D = static_cast<int>(q.size(2));
    TORCH_CHECK(T * sizeof(float) <= 48 * 1024, "the scores of one query must fit in shared memory");
    auto out = torch::empty_like(q);
    const int blocks = static_cast<int>(q.size(0) * T);
    attention_kernel<<<blocks, THREADS, T * sizeof(float)>>>(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                                                             out.data_ptr<float>(), T, D, static_cast<float>(scale));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor attention_cuda(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale);"

attention_ext = load_inline(
    name="suite_attention",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["attention_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return attention_ext.attention_cuda(q, k, v, 1.0 / math.sqrt(q.size(-1)))
