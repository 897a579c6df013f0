import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int WARPS = 4;

__device__ __forceinline__ float warp_allsum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, offset);
    }
    return v;
}

// h = gelu(layernorm(x)), one warp per row; the butterfly leaves the sum in every lane.
__global__ void layernorm_gelu_kernel(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                                      float* __restrict__ h, int rows, int cols, float eps) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    const float* xr = x + static_cast<int64_t>(r) * cols;
    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        sum += xr[c];
    }
    const float mean = warp_allsum(sum) / cols;
    float sq = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float d = xr[c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(warp_allsum(sq) / cols + eps);
    for (int c = lane; c < cols; c += 32) {
        const float v = (xr[c] - mean) * rstd * gamma[c] + beta[c];
        h[static_cast<int64_t>(r) * cols + c] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

// y = h W^T + b, one thread per output element.
__global__ void linear_kernel(const float* __restrict__ h, const float* __restrict__ W, const float* __restrict__ b, float* __restrict__ y,
                              int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) {
        return;
    }
    float acc = b[col];
    for (int k = 0; k < K; ++k) {
        acc += h[static_cast<int64_t>(row) * K + k] * W[static_cast<int64_t>(col) * K + k];
    }
    y[static_cast<int64_t>(row) * N + col] = acc;
}

torch::Tensor ln_gelu_linear_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps, torch::Tensor W, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x must be a float32 (M, K) CUDA tensor");
    TORCH_CHECK(W.size(1) == x.size(1), "W is (N, K)");
    x = x.contiguous();
    W = W.contiguous();
    const int M = static_cast<int>(x.size(0));
    const int K = static_cast<int>(x.size(1));
    const int N = static_cast<int>(W.size(0));
    auto h = torch::empty_like(x);
    const int ln_blocks = (M + WARPS - 1) / WARPS;
    layernorm_gelu_kernel<<<ln_blocks, WARPS * 32>>>(x.data_ptr<float>(), gamma.data_ptr<float>(), beta.data_ptr<float>(), h.data_ptr<float>(),
                                                     M, K, static_cast<float>(eps));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    auto y = torch::empty({M, N}, x.options());
    const dim3 threads(16, 16);
    const dim3 grid((N + 15) / 16, (M + 15) / 16);
    linear_kernel<<<grid, threads>>>(h.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor ln_gelu_linear_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps, torch::Tensor W, torch::Tensor b);"

ln_gelu_linear_ext = load_inline(
    name="suite_ln_gelu_linear",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["ln_gelu_linear_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int, out_features: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ln_gelu_linear_ext.ln_gelu_linear_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps, self.proj.weight, self.proj.bias)
