import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 64;
constexpr int POOL = 2;

// One block per (batch, channel) plane: each thread pools and squashes some output positions,
// then a shared-memory tree sums the plane.
__global__ void avgpool_sigmoid_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int H, int W) {
    __shared__ float s[THREADS];
    const int tid = threadIdx.x;
    const int OH = H / POOL, OW = W / POOL;
    const float* plane = x + static_cast<int64_t>(blockIdx.x) * H * W;
    float acc = 0.0f;
    for (int o = tid; o < OH * OW; o += THREADS) {
        const int oh = o / OW, ow = o % OW;
        float sum = 0.0f;
        for (int kh = 0; kh < POOL; ++kh) {
            for (int kw = 0; kw < POOL; ++kw) {
                sum += plane[(oh * POOL + kh) * W + ow * POOL + kw];
            }
        }
        const float avg = sum / (POOL * POOL);
        acc += 1.0f / (1.0f + expf(-avg));
    }
    s[tid] = acc;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = s[0];
    }
}

torch::Tensor avgpool_sigmoid_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "x must be a float32 (B, C, H, W) CUDA tensor");
    x = x.contiguous();
    auto out = torch::empty({x.size(0), x.size(1)}, x.options());
    const int planes = static_cast<int>(x.size(0) * x.size(1));
    avgpool_sigmoid_sum_kernel<<<planes, THREADS>>>(x.data_ptr<float>(), out.data_ptr<float>(), static_cast<int>(x.size(2)),
                                                    static_cast<int>(x.size(3)));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor avgpool_sigmoid_sum_cuda(torch::Tensor x);"

pool_sum_ext = load_inline(
    name="suite_avgpool_sigmoid_sum",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["avgpool_sigmoid_sum_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pool_sum_ext.avgpool_sigmoid_sum_cuda(x)
