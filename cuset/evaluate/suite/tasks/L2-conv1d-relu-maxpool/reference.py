import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

__device__ float conv_at(const float* __restrict__ x, const float* __restrict__ w, float bias, int cin, int length, int ksize, int pos) {
    float acc = bias;
    for (int ic = 0; ic < cin; ++ic) {
        for (int k = 0; k < ksize; ++k) {
            acc += x[ic * length + pos + k] * w[ic * ksize + k];
        }
    }
    return acc;
}

// One thread per pooled output (b, oc, p): max over conv positions 2p and 2p + 1, then ReLU
// (ReLU commutes with max, so it is applied once).
__global__ void conv1d_relu_maxpool_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                                           float* __restrict__ y, int batch, int cin, int cout, int length, int ksize, int pooled) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<int64_t>(batch) * cout * pooled) {
        return;
    }
    const int p = static_cast<int>(i % pooled);
    const int oc = static_cast<int>((i / pooled) % cout);
    const int b = static_cast<int>(i / (static_cast<int64_t>(pooled) * cout));
    const float* xb = x + static_cast<int64_t>(b) * cin * length;
    const float* wo = w + static_cast<int64_t>(oc) * cin * ksize;
    float best = conv_at(xb, wo, bias[oc], cin, length, ksize, 2 * p);
    best = fmaxf(best, conv_at(xb, wo, bias[oc], cin, length, ksize, 2 * p + 1));
    y[i] = fmaxf(best, 0.0f);
}

torch::Tensor conv1d_relu_maxpool_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 3 && w.dim() == 3 && x.size(1) == w.size(1), "x (B, Cin, L), w (Cout, Cin, K)");
    x = x.contiguous();
    w = w.contiguous();
    const int batch = static_cast<int>(x.size(0));
    const int cin = static_cast<int>(x.size(1));
    const int length = static_cast<int>(x.size(2));
    const int cout = static_cast<int>(w.size(0));
    const int ksize = static_cast<int>(w.size(2));
    const int pooled = (length - ksize + 1) / 2;
    auto y = torch::empty({batch, cout, pooled}, x.options());
    const int64_t total = y.numel();
    const int threads = 128;
    const int blocks = static_cast<int>((total + threads - 1) / threads);
    conv1d_relu_maxpool_kernel<<<blocks, threads>>>(x.data_ptr<float>(), w.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                                                    batch, cin, cout, length, ksize, pooled);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor conv1d_relu_maxpool_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor bias);"

conv_pool_ext = load_inline(
    name="suite_conv1d_relu_maxpool",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv1d_relu_maxpool_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv_pool_ext.conv1d_relu_maxpool_cuda(x, self.conv.weight, self.conv.bias)
