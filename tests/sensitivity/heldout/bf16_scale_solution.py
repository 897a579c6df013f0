# KernelBench-style solution: bfloat16 row scaling, a 2D launch and a non-raw source string.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
#include <torch/extension.h>
#include <cuda_bf16.h>

__global__ void row_scale_bf16(const __nv_bfloat16* in, const float* scale,
                               __nv_bfloat16* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        float v = __bfloat162float(in[r * cols + c]);
        out[r * cols + c] = __float2bfloat16(v * scale[r]);
    }
}

torch::Tensor row_scale(torch::Tensor in, torch::Tensor scale) {
    TORCH_CHECK(in.is_cuda(), "in must be a CUDA tensor\\n");
    auto out = torch::empty_like(in);
    int rows = in.size(0), cols = in.size(1);
    dim3 block(32, 8);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    row_scale_bf16<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __nv_bfloat16*>(in.data_ptr<at::BFloat16>()),
        scale.data_ptr<float>(),
        reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = "torch::Tensor row_scale(torch::Tensor in, torch::Tensor scale);"

row_scale = load_inline(name="row_scale", cpp_sources=cpp_src, cuda_sources=cuda_src,
                        functions=["row_scale"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return row_scale.row_scale(x, s)
