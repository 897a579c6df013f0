import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 128;

__device__ float block_sum(float v, float* s) {
    const int tid = threadIdx.x;
    s[tid] = v;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    const float total = s[0];
    __syncthreads();
    return total;
}

// One block per (sample, group); the group's channels are contiguous in memory.
__global__ void group_norm_kernel(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                                  float* __restrict__ y, int channels, int groups, int length, float eps) {
    __shared__ float s[THREADS];
    const int n = blockIdx.x / groups;
    const int g = blockIdx.x % groups;
    const int cpg = channels / groups;
    const int count = cpg * length;
    const int64_t base = (static_cast<int64_t>(n) * channels + static_cast<int64_t>(g) * cpg) * length;

    float sum = 0.0f;
    for (int i = threadIdx.x; i < count; i += THREADS) {
        sum += x[base + i];
    }
    const float mean = block_sum(sum, s) / count;
    float sq = 0.0f;
    for (int i = threadIdx.x; i < count; i += THREADS) {
        const float d = x[base + i] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum(sq, s) / count + eps);
    for (int i = threadIdx.x; i < count; i += THREADS) {
        const int c = g * cpg + i / length;
        y[base + i] = (x[base + i] - mean) * rstd * weight[c] + bias[c];
    }
}

torch::Tensor group_norm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t groups, double eps) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 3, "x must be a contiguous 3-D CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const int channels = static_cast<int>(x.size(1));
    TORCH_CHECK(channels % groups == 0, "channels must be divisible by groups");
    auto y = torch::empty_like(x);
    const int blocks = static_cast<int>(x.size(0) * groups);
    group_norm_kernel<<<blocks, THREADS>>>(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                                           channels, static_cast<int>(groups), static_cast<int>(x.size(2)), static_cast<float>(eps));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor group_norm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t groups, double eps);"

group_norm_ext = load_inline(
    name="suite_group_norm",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["group_norm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.gn
        return group_norm_ext.group_norm_cuda(x.contiguous(), gn.weight, gn.bias, gn.num_groups, gn.eps)
