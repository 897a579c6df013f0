import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 64;

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

// One block per row.
__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                                 float* __restrict__ y, int cols, float eps) {
    __shared__ float s[THREADS];
    const float* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
    float* yr = y + static_cast<int64_t>(blockIdx.x) * cols;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        sum += xr[c];
    }
    const float mean = block_sum(sum, s) / cols;
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        const float d = xr[c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum(sq, s) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

// y = act(x W^T + b) (+ residual), one thread per output element.
__global__ void linear_kernel(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                              const float* __restrict__ residual, float* __restrict__ y, int M, int N, int K, int relu) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) {
        return;
    }
    float acc = b[col];
    for (int k = 0; k < K; ++k) {
        acc += x[static_cast<int64_t>(row) * K + k] * W[static_cast<int64_t>(col) * K + k];
    }
    if (relu) {
        acc = fmaxf(acc, 0.0f);
    }
    if (residual != nullptr) {
        acc += residual[static_cast<int64_t>(row) * N + col];
    }
    y[static_cast<int64_t>(row) * N + col] = acc;
}

static torch::Tensor linear(torch::Tensor x, torch::Tensor W, torch::Tensor b, const float* residual, bool relu) {
    const int M = static_cast<int>(x.size(0));
    const int K = static_cast<int>(x.size(1));
    const int N = static_cast<int>(W.size(0));
    auto y = torch::empty({M, N}, x.options());
    const dim3 threads(16, 16);
    const dim3 grid((N + 15) / 16, (M + 15) / 16);
    linear_kernel<<<grid, threads>>>(x.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(), residual, y.data_ptr<float>(), M, N, K,
                                     relu ? 1 : 0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor residual_mlp_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps, torch::Tensor W1, torch::Tensor b1,
                                torch::Tensor W2, torch::Tensor b2) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x must be a float32 (M, D) CUDA tensor");
    x = x.contiguous();
    auto n = torch::empty_like(x);
    layernorm_kernel<<<static_cast<int>(x.size(0)), THREADS>>>(x.data_ptr<float>(), gamma.data_ptr<float>(), beta.data_ptr<float>(),
                                                               n.data_ptr<float>(), static_cast<int>(x.size(1)), static_cast<float>(eps));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    auto h = linear(n, W1.contiguous(), b1, nullptr, true);
    return linear(h, W2.contiguous(), b2, x.data_ptr<float>(), false);
}
"""

cpp_source = """
torch::Tensor residual_mlp_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps, torch::Tensor W1, torch::Tensor b1,
                                torch::Tensor W2, torch::Tensor b2);
"""

residual_mlp_ext = load_inline(
    name="suite_residual_mlp",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["residual_mlp_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return residual_mlp_ext.residual_mlp_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps, self.fc1.weight, self.fc1.bias,
                                                  self.fc2.weight, self.fc2.bias)
