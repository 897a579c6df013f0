import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_dim_source = r"""
#include <torch/extension.h>
#include <ATen/AccumulateType.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>

// The tensor as (outer, reduce, inner): one thread per (outer, inner) output, summing the
// reduced axis; consecutive threads take consecutive inner indices (coalesced).
template <typename scalar_t, typename acc_t>
__global__ void sum_dim_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t outer, int64_t reduce, int64_t inner) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    int64_t o = idx / inner, i = idx % inner;
    const scalar_t* p = x + o * reduce * inner + i;
    acc_t acc = 0;
    for (int64_t r = 0; r < reduce; ++r) acc += static_cast<acc_t>(p[r * inner]);
    y[idx] = static_cast<scalar_t>(acc);
}

torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim) {
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim ", dim, " out of range for a ", nd, "D tensor");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
    const int64_t reduce = xc.size(dim);
    std::vector<int64_t> out_shape = xc.sizes().vec();
    out_shape[dim] = 1;
    auto y = torch::empty(out_shape, xc.options());
    const int threads = 256;
    const int64_t blocks = (outer * inner + threads - 1) / threads;
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(xc.scalar_type(), "sum_dim_keepdim", [&] {
        using acc_t = at::acc_type<scalar_t, true>;
        sum_dim_kernel<scalar_t, acc_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), outer, reduce, inner);
    });
    return y;
}
"""

sum_dim_cpp = "torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim);"

sum_dim = load_inline(name="kb47_sum_dim", cpp_sources=sum_dim_cpp, cuda_sources=sum_dim_source,
                      functions=["sum_dim_keepdim"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_dim.sum_dim_keepdim(x, self.dim)
