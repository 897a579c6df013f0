import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The two matmuls go to ATen (cuBLAS on a GPU); the scaled, numerically stable softmax over each
# score row is a custom kernel run in place between them.
sdpa_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cmath>

__global__ void scaled_softmax_inplace_kernel(float* __restrict__ scores, int64_t cols, float scale) {
    extern __shared__ float red[];
    float* row = scores + (int64_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c] * scale);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float e = expf(row[c] * scale - row_max);
        row[c] = e;
        sum += e;
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const float inv = 1.f / red[0];
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) row[c] *= inv;
}

torch::Tensor sdpa_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "expected (batch, heads, seq, dim) tensors");
    const c10::cuda::CUDAGuard guard(q.device());
    auto scores = torch::matmul(q, k.transpose(-2, -1)).contiguous();
    const int64_t cols = scores.size(-1);
    const int64_t rows = scores.numel() / cols;
    const float scale = 1.0f / std::sqrt((float)q.size(-1));
    const int threads = 128;
    scaled_softmax_inplace_kernel<<<rows, threads, threads * sizeof(float), at::cuda::getCurrentCUDAStream()>>>(
        scores.data_ptr<float>(), cols, scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return torch::matmul(scores, v);
}
"""

sdpa_cpp = "torch::Tensor sdpa_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v);"

sdpa = load_inline(name="kb97_sdpa_softmax", cpp_sources=sdpa_cpp, cuda_sources=sdpa_source, functions=["sdpa_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return sdpa.sdpa_forward(Q, K, V)
