import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// One block per row, one thread per element (row length a power of two): softmax through two
// shared-memory trees, then an inclusive Hillis-Steele scan of the probabilities.
__global__ void softmax_cumsum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float s[];
    const int t = threadIdx.x;
    const int64_t base = static_cast<int64_t>(blockIdx.x) * cols;
    const float v = x[base + t];

    s[t] = v;
    __syncthreads();
    for (int stride = cols / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            s[t] = fmaxf(s[t], s[t + stride]);
        }
        __syncthreads();
    }
    const float m = s[0];
    __syncthreads();

    const float e = expf(v - m);
    s[t] = e;
    __syncthreads();
    for (int stride = cols / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            s[t] += s[t + stride];
        }
        __syncthreads();
    }
    const float total = s[0];
    __syncthreads();

    s[t] = e / total;
    __syncthreads();
    for (int offset = 1; offset < cols; offset <<= 1) {
        const float left = (t >= offset) ? s[t - offset] : 0.0f;
        __syncthreads();
        s[t] += left;
        __syncthreads();
    }
    y[base + t] = s[t];
}

torch::Tensor softmax_cumsum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x must be a 2-D float32 CUDA tensor");
    const int cols = static_cast<int>(x.size(1));
    TORCH_CHECK(cols > 0 && cols <= 1024 && (cols & (cols - 1)) == 0, "rows of a power of two up to 1024 elements");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    softmax_cumsum_kernel<<<static_cast<int>(x.size(0)), cols, cols * sizeof(float)>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_cumsum_cuda(torch::Tensor x);"

softmax_cumsum_ext = load_inline(
    name="suite_softmax_cumsum",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_cumsum_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_cumsum_ext.softmax_cumsum_cuda(x)
