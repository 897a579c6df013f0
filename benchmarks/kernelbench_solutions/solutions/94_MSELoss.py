import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Block partial sums of (p - t)^2 with atomicAdd into one float, then the mean on the host side
# of ATen (a 0-dim result, as torch.mean gives).
mse_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void squared_diff_sum_kernel(const float* __restrict__ p, const float* __restrict__ t, float* __restrict__ total, int64_t n) {
    __shared__ float cache[256];
    float local = 0.f;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
        float d = p[i] - t[i];
        local += d * d;
    }
    cache[threadIdx.x] = local;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, cache[0]);
}

torch::Tensor mse_loss_cuda(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "predictions and targets must have the same shape");
    auto p = predictions.contiguous();
    auto t = targets.contiguous();
    const int64_t n = p.numel();
    auto total = torch::zeros({1}, p.options());
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 256);
    squared_diff_sum_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(p.data_ptr<float>(), t.data_ptr<float>(),
                                                                                       total.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return (total / static_cast<double>(n)).squeeze();
}
"""

mse_cpp = "torch::Tensor mse_loss_cuda(torch::Tensor predictions, torch::Tensor targets);"

mse = load_inline(name="kb94_mse_atomic", cpp_sources=mse_cpp, cuda_sources=mse_source, functions=["mse_loss_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return mse.mse_loss_cuda(predictions, targets)
