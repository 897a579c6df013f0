import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// One thread per output pixel (b, oc, oh, ow); taps outside the image read the zero padding.
__global__ void conv2d_pad_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                                  float* __restrict__ y, int batch, int cin, int cout, int H, int W, int ksize, int pad) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t total = static_cast<int64_t>(batch) * cout * H * W;
    if (i >= total) {
        return;
    }
    const int ow = static_cast<int>(i % W);
    const int oh = static_cast<int>((i / W) % H);
    const int oc = static_cast<int>((i / (static_cast<int64_t>(W) * H)) % cout);
    const int b = static_cast<int>(i / (static_cast<int64_t>(W) * H * cout));
    float acc = bias[oc];
    for (int ic = 0; ic < cin; ++ic) {
        const float* xp = x + (static_cast<int64_t>(b) * cin + ic) * H * W;
        const float* wp = w + (static_cast<int64_t>(oc) * cin + ic) * ksize * ksize;
        for (int kh = 0; kh < ksize; ++kh) {
            for (int kw = 0; kw < ksize; ++kw) {
                const int ih = oh + kh - pad;
                const int iw = ow + kw - pad;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                    acc += xp[ih * W + iw] * wp[kh * ksize + kw];
                }
            }
        }
    }
    y[i] = acc;
}

torch::Tensor conv2d_pad_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor bias, int64_t pad) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && w.size(2) == w.size(3), "x (B, Cin, H, W), square kernel w (Cout, Cin, K, K)");
    TORCH_CHECK(w.size(2) == 2 * pad + 1, "same-size output needs kernel_size == 2 * padding + 1");
    x = x.contiguous();
    w = w.contiguous();
    const int batch = static_cast<int>(x.size(0));
    const int cin = static_cast<int>(x.size(1));
    const int H = static_cast<int>(x.size(2));
    const int W = static_cast<int>(x.size(3));
    const int cout = static_cast<int>(w.size(0));
    auto y = torch::empty({batch, cout, H, W}, x.options());
    const int64_t total = y.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((total + threads - 1) / threads);
    conv2d_pad_kernel<<<blocks, threads>>>(x.data_ptr<float>(), w.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                                           batch, cin, cout, H, W, static_cast<int>(w.size(2)), static_cast<int>(pad));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor conv2d_pad_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor bias, int64_t pad);"

conv2d_ext = load_inline(
    name="suite_conv2d_pad",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv2d_pad_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv2d_ext.conv2d_pad_cuda(x, self.conv.weight, self.conv.bias, 1)
