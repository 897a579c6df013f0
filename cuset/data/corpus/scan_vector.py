"""Scan of one long vector (scan family): the classic three-kernel, multi-block prefix sum.

1. every block scans its tile with warp shuffles and records the tile total;
2. one block turns the tile totals into exclusive tile offsets (in chunks, with a carry);
3. every block adds its tile's offset to its elements.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, unary_model_new
from cuset.data.corpus.scan import FAMILY, OPS, scan_task


def vector_spec(n: int, threads: int, variant: int) -> Spec:
    """Cumsum of one long vector with three kernels: block scans, scan of block sums, offsets."""
    kernel = fill(
        """
        __device__ __forceinline__ float warp_scan(float v, int lane) {
        #pragma unroll
            for (int offset = 1; offset < 32; offset <<= 1) {
                const float up = __shfl_up_sync(0xffffffffu, v, offset);
                if (lane >= offset) {
                    v += up;
                }
            }
            return v;
        }

        // Inclusive scan of one blockDim.x-element tile; returns the tile's value at this thread.
        __device__ float block_scan(float v) {
            __shared__ float warp_totals[32];
            const int lane = threadIdx.x & 31;
            const int warp = threadIdx.x >> 5;
            v = warp_scan(v, lane);
            if (lane == 31) {
                warp_totals[warp] = v;
            }
            __syncthreads();
            if (warp == 0) {
                const float t = lane < static_cast<int>(blockDim.x >> 5) ? warp_totals[lane] : 0.0f;
                warp_totals[lane] = warp_scan(t, lane);
            }
            __syncthreads();
            return warp > 0 ? v + warp_totals[warp - 1] : v;
        }

        // Pass 1: scan each tile independently and record the tile's total.
        __global__ void __launch_bounds__($threads) tile_scan_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                     float* __restrict__ tile_sums, int64_t n) {
            const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
            const float v = block_scan(i < n ? x[i] : 0.0f);
            if (i < n) {
                y[i] = v;
            }
            if (threadIdx.x == blockDim.x - 1) {
                tile_sums[blockIdx.x] = v;
            }
        }

        // Pass 2: one block turns the tile totals into exclusive tile offsets, in chunks.
        __global__ void __launch_bounds__($threads) offsets_scan_kernel(float* __restrict__ tile_sums, int num_tiles) {
            __shared__ float carry;
            if (threadIdx.x == 0) {
                carry = 0.0f;
            }
            __syncthreads();
            for (int base = 0; base < num_tiles; base += blockDim.x) {
                const int t = base + threadIdx.x;
                const float v = t < num_tiles ? tile_sums[t] : 0.0f;
                const float incl = block_scan(v);
                const float prefix = carry;
                if (t < num_tiles) {
                    tile_sums[t] = prefix + incl - v;
                }
                __syncthreads();
                if (threadIdx.x == blockDim.x - 1) {
                    carry = prefix + incl;
                }
                __syncthreads();
            }
        }

        // Pass 3: add each tile's offset to its elements.
        __global__ void __launch_bounds__($threads) add_offsets_kernel(float* __restrict__ y, const float* __restrict__ tile_sums, int64_t n) {
            const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
            if (i < n) {
                y[i] += tile_sums[blockIdx.x];
            }
        }
        """,
        threads=threads,
    )
    host_fn = fill(
        """
        torch::Tensor cumsum_1d_cuda(torch::Tensor x, int64_t dim) {
        $checks
            TORCH_CHECK(x.dim() == 1 && (dim == 0 || dim == -1), "this kernel scans a 1-D tensor");
            auto y = torch::empty_like(x);
            const int64_t n = x.numel();
            if (n == 0) {
                return y;
            }
            constexpr int threads = $threads;
            const int num_tiles = static_cast<int>((n + threads - 1) / threads);
            auto tile_sums = torch::empty({num_tiles}, x.options());
            tile_scan_kernel<<<num_tiles, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), tile_sums.data_ptr<float>(), n);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
            offsets_scan_kernel<<<1, threads>>>(tile_sums.data_ptr<float>(), num_tiles);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
            add_offsets_kernel<<<num_tiles, threads>>>(y.data_ptr<float>(), tile_sums.data_ptr<float>(), n);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
            return y;
        }
        """,
        checks=host.input_checks(variant, "x"), threads=threads,
    )
    op = OPS["cumsum"]
    ext = "cumsum_1d_ext"
    return Spec(
        family=FAMILY, op="cumsum_1d", styles=("tiled", "warp-shuffle"), task=scan_task(op, (n,), 0),
        cuda_source="\n\n".join([host.preamble(variant), kernel, host_fn]),
        cpp_source="torch::Tensor cumsum_1d_cuda(torch::Tensor x, int64_t dim);", functions=("cumsum_1d_cuda",),
        ext_name=ext, model_new=unary_model_new(ext, "cumsum_1d_cuda", with_dim=True),
        hint=f"A three-kernel scan: scan {threads}-element tiles with warp shuffles, scan the tile totals in one block, then add the offsets.",
        template="scan.vector", params={"n": n, "threads": threads},
    )


def specs() -> list[Spec]:
    """The vector-scan samples (after `scan.specs()` in the corpus)."""
    return [vector_spec(10007, 256, variant=1), vector_spec(30001, 512, variant=2)]
