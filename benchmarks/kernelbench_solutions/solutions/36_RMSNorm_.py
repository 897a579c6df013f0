import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rms_norm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

// x is (B, F, S) viewed flat over the spatial dims; each thread owns one (b, s) column and walks
// the F features twice (sum of squares, then scale). Neighbouring threads read neighbouring s.
template <typename scalar_t>
__global__ void rms_norm_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int F, int64_t S, float eps,
                                int64_t columns) {
    int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (col >= columns) return;
    int64_t b = col / S, s = col % S;
    const scalar_t* xp = x + b * F * S + s;
    scalar_t* yp = y + b * F * S + s;
    float sq = 0.f;
    for (int f = 0; f < F; ++f) {
        float v = static_cast<float>(xp[f * S]);
        sq += v * v;
    }
    float inv = rsqrtf(sq / F + eps);
    for (int f = 0; f < F; ++f) yp[f * S] = static_cast<scalar_t>(static_cast<float>(xp[f * S]) * inv);
}

torch::Tensor rms_norm_cuda(torch::Tensor x, double eps) {
    TORCH_CHECK(x.dim() >= 2, "RMSNorm expects (batch, features, ...)");
    auto xc = x.contiguous();
    const int64_t B = xc.size(0);
    const int F = xc.size(1);
    const int64_t S = xc.numel() / (B * F);
    auto y = torch::empty_like(xc);
    const int64_t columns = B * S;
    const int threads = 256;
    const int blocks = (int)((columns + threads - 1) / threads);
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "rms_norm_cuda", [&] {
        rms_norm_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), F, S, (float)eps, columns);
    });
    return y;
}
"""

rms_norm_cpp = "torch::Tensor rms_norm_cuda(torch::Tensor x, double eps);"

rms_norm = load_inline(name="kb36_rms_norm_columns", cpp_sources=rms_norm_cpp, cuda_sources=rms_norm_source,
                       functions=["rms_norm_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm.rms_norm_cuda(x, self.eps)
