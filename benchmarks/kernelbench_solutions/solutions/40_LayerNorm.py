import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layer_norm_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/AccumulateType.h>
#include <c10/cuda/CUDAGuard.h>

// Welford per thread, merged across the block in shared memory; one block per normalized row.
struct Welford {
    float mean, m2, count;
};

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
    float n = a.count + b.count;
    if (n == 0.f) return a;
    float delta = b.mean - a.mean;
    Welford r;
    r.count = n;
    r.mean = a.mean + delta * (b.count / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (a.count * b.count / n);
    return r;
}

template <typename scalar_t>
__global__ void layer_norm_stats_kernel(const scalar_t* __restrict__ x, float* __restrict__ mean, float* __restrict__ rstd,
                                        int64_t N, float eps) {
    __shared__ Welford shared[256];
    const scalar_t* row = x + blockIdx.x * N;
    Welford w = {0.f, 0.f, 0.f};
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        float v = static_cast<float>(row[i]);
        w.count += 1.f;
        float d = v - w.mean;
        w.mean += d / w.count;
        w.m2 += d * (v - w.mean);
    }
    shared[threadIdx.x] = w;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = welford_merge(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = shared[0].mean;
        rstd[blockIdx.x] = rsqrtf(shared[0].m2 / shared[0].count + eps);
    }
}

template <typename scalar_t>
__global__ void layer_norm_apply_kernel(const scalar_t* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ rstd,
                                        const scalar_t* __restrict__ gamma, const scalar_t* __restrict__ beta, scalar_t* __restrict__ y,
                                        int64_t N, int64_t total) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= total) return;
    int64_t r = i / N, j = i % N;
    float v = (static_cast<float>(x[i]) - mean[r]) * rstd[r];
    y[i] = static_cast<scalar_t>(v * static_cast<float>(gamma[j]) + static_cast<float>(beta[j]));
}

torch::Tensor layer_norm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    const at::cuda::CUDAGuard guard(x.device());
    TORCH_CHECK(weight.numel() == bias.numel(), "weight and bias differ in size");
    const int64_t N = weight.numel();
    TORCH_CHECK(x.numel() % N == 0, "input does not end with the normalized shape");
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t rows = xc.numel() / N;
    auto stat_opts = xc.options().dtype(at::kFloat);
    auto mean = at::empty({rows}, stat_opts);
    auto rstd = at::empty({rows}, stat_opts);
    auto y = at::empty_like(xc);
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "layer_norm_cuda", [&] {
        layer_norm_stats_kernel<scalar_t><<<rows, 256, 0, stream>>>(xc.data_ptr<scalar_t>(), mean.data_ptr<float>(),
                                                                    rstd.data_ptr<float>(), N, (float)eps);
        const int64_t total = xc.numel();
        layer_norm_apply_kernel<scalar_t><<<(total + 255) / 256, 256, 0, stream>>>(
            xc.data_ptr<scalar_t>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), w.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
            y.data_ptr<scalar_t>(), N, total);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

layer_norm_cpp = "torch::Tensor layer_norm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

layer_norm_ext = load_inline(name="kb40_layer_norm_welford", cpp_sources=layer_norm_cpp, cuda_sources=layer_norm_source,
                             functions=["layer_norm_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm_ext.layer_norm_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
