import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_reduce_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

// One warp per output element: lanes stride over the reduced axis, then a shuffle max.
__global__ void max_over_dim_kernel(const float* __restrict__ x, float* __restrict__ out, int outer, int reduce, int inner) {
    const int warp_id = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp_id >= outer * inner) return;
    const int o = warp_id / inner;
    const int i = warp_id % inner;
    float m = -FLT_MAX;
    for (int r = lane; r < reduce; r += 32) m = fmaxf(m, x[((size_t)o * reduce + r) * inner + i]);
    for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffff, m, offset));
    if (lane == 0) out[warp_id] = m;
}

torch::Tensor max_over_dim(torch::Tensor x, int64_t dim) {
    dim = dim < 0 ? dim + x.dim() : dim;
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 input expected");
    auto input = x.contiguous();
    auto sizes = input.sizes();
    int outer = 1, inner = 1;
    std::vector<int64_t> out_sizes;
    for (int64_t d = 0; d < input.dim(); ++d) {
        if (d < dim) outer *= sizes[d];
        if (d > dim) inner *= sizes[d];
        if (d != dim) out_sizes.push_back(sizes[d]);
    }
    auto out = torch::empty(out_sizes, input.options());
    const int outputs = outer * inner;
    const int threads = 256;
    const int blocks = (outputs * 32 + threads - 1) / threads;
    max_over_dim_kernel<<<blocks, threads>>>(input.data_ptr<float>(), out.data_ptr<float>(), outer, (int)sizes[dim], inner);
    return out;
}
"""

max_reduce_cpp = "torch::Tensor max_over_dim(torch::Tensor x, int64_t dim);"

max_reduce = load_inline(name="kb49_max_over_dim_warp", cpp_sources=max_reduce_cpp, cuda_sources=max_reduce_source,
                         functions=["max_over_dim"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_reduce.max_over_dim(x, self.dim)
