import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scan_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define SCAN_THREADS 256

// One block per row: the row is scanned in chunks of SCAN_THREADS; each chunk is a
// Hillis-Steele scan in shared memory (double buffered) plus the running carry.
__global__ void row_cumsum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t len) {
    __shared__ float buf[2][SCAN_THREADS];
    __shared__ float carry;
    const float* in = x + blockIdx.x * len;
    float* out = y + blockIdx.x * len;
    if (threadIdx.x == 0) carry = 0.f;
    __syncthreads();
    for (int64_t base = 0; base < len; base += SCAN_THREADS) {
        const int64_t i = base + threadIdx.x;
        int src = 0;
        buf[src][threadIdx.x] = i < len ? in[i] : 0.f;
        __syncthreads();
        for (int offset = 1; offset < SCAN_THREADS; offset <<= 1) {
            float v = buf[src][threadIdx.x];
            if (threadIdx.x >= offset) v += buf[src][threadIdx.x - offset];
            buf[1 - src][threadIdx.x] = v;
            src = 1 - src;
            __syncthreads();
        }
        const float running = carry;
        if (i < len) out[i] = buf[src][threadIdx.x] + running;
        __syncthreads();
        if (threadIdx.x == SCAN_THREADS - 1) carry = running + buf[src][threadIdx.x];
        __syncthreads();
    }
}

torch::Tensor cumsum_rows(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.dim() == 2 && (dim == 1 || dim == -1), "cumsum_rows scans the last dim of a 2D tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "float32 only");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t rows = input.size(0), len = input.size(1);
    row_cumsum_kernel<<<rows, SCAN_THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(input.data_ptr<float>(), output.data_ptr<float>(), len);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return output;
}
"""

scan_cpp = "torch::Tensor cumsum_rows(torch::Tensor x, int64_t dim);"

scan = load_inline(name="kb89_cumsum_blockscan", cpp_sources=scan_cpp, cuda_sources=scan_source, functions=["cumsum_rows"],
                   verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return scan.cumsum_rows(x, self.dim)
