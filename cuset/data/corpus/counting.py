"""Atomic-counting templates (histogram family): how many elements pass a predicate.

- warp-aggregated atomics: the warp votes with `__ballot_sync` and one lane adds `__popc` of
  the vote, 32x fewer atomics than one per element;
- block reduction: per-thread counts summed with `__shfl_down_sync`, one atomic per block;
- `__syncthreads_count`: the block-wide vote count, one atomic per block per row.

Counts are accumulated as integers and returned as float32 like the reference's `.float()`.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.histogram import FAMILY, model_new_source, shape_constants
from cuset.data.corpus.kernelbench import Spec, fill, task_module


def count_spec(shape: tuple[int, ...], method: str, threads: int, cap: int, variant: int,
               lo: float | None = None, hi: float | None = None) -> Spec:
    """Count of elements above a threshold (or inside [lo, hi)) as a 0-dim float. method: ballot | block."""
    consts, dims = shape_constants(shape)
    if hi is None:
        pred = "x[i] > threshold"
        params = "float threshold"
        doc = "Counts the elements greater than a threshold."
        init, init_body, expr = "threshold: float", "self.threshold = threshold", "(x > self.threshold).sum().float()"
        call_py, init_inputs, host_args, host_call = "x.contiguous(), self.threshold", f"[{lo!r}]", "double threshold", "static_cast<float>(threshold)"
        op = "count_above"
    else:
        pred = "x[i] >= lo && x[i] < hi"
        params = "float lo, float hi"
        doc = "Counts the elements inside the half-open range [lo, hi)."
        init, init_body, expr = "lo: float, hi: float", "self.lo = lo\nself.hi = hi", "((x >= self.lo) & (x < self.hi)).sum().float()"
        call_py, init_inputs, host_args, host_call = "x.contiguous(), self.lo, self.hi", f"[{lo!r}, {hi!r}]", "double lo, double hi", "static_cast<float>(lo), static_cast<float>(hi)"
        op = "count_range"
    if method == "ballot":
        kernel = fill(
            """
            // Warp-aggregated atomics: the warp votes with __ballot_sync and one lane adds the
            // popcount, 32x fewer atomics than one per element. The loop bound is uniform across
            // the block so every lane reaches the ballot on every iteration.
            __global__ void __launch_bounds__($threads) count_kernel(const float* __restrict__ x, unsigned int* __restrict__ count,
                                                                     int64_t n, $params) {
                const int lane = threadIdx.x & 31;
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x; base < n; base += stride) {
                    const int64_t i = base + threadIdx.x;
                    const bool hit = i < n && ($pred);
                    const unsigned int votes = __ballot_sync(0xffffffffu, hit);
                    if (lane == 0 && votes != 0u) {
                        atomicAdd(count, static_cast<unsigned int>(__popc(votes)));
                    }
                }
            }
            """, threads=threads, params=params, pred=pred,
        )
        styles: tuple[str, ...] = ("atomics", "grid-stride")
        hint = "Grid-stride loop with warp-aggregated atomics (__ballot_sync and __popc, one atomicAdd per warp)."
    else:
        kernel = fill(
            """
            __device__ __forceinline__ unsigned int warp_sum(unsigned int v) {
            #pragma unroll
                for (int offset = 16; offset > 0; offset >>= 1) {
                    v += __shfl_down_sync(0xffffffffu, v, offset);
                }
                return v;
            }

            // Each thread counts its grid-stride slice; the block sums the counts with shuffles and
            // issues a single atomicAdd.
            __global__ void __launch_bounds__($threads) count_kernel(const float* __restrict__ x, unsigned int* __restrict__ count,
                                                                     int64_t n, $params) {
                __shared__ unsigned int warp_counts[32];
                unsigned int local = 0u;
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    local += ($pred) ? 1u : 0u;
                }
                const int lane = threadIdx.x & 31;
                const int warp = threadIdx.x >> 5;
                local = warp_sum(local);
                if (lane == 0) {
                    warp_counts[warp] = local;
                }
                __syncthreads();
                if (warp == 0) {
                    local = lane < static_cast<int>(blockDim.x >> 5) ? warp_counts[lane] : 0u;
                    local = warp_sum(local);
                    if (lane == 0) {
                        atomicAdd(count, local);
                    }
                }
            }
            """, threads=threads, params=params, pred=pred.replace("x[i]", "x[i]"),
        )
        styles = ("warp-shuffle", "atomics", "grid-stride")
        hint = "Per-thread counts over a grid-stride loop, a __shfl_down_sync block reduction, one atomicAdd per block."
    host_fn = fill(
        """
        torch::Tensor ${op}_cuda(torch::Tensor x, $host_args) {
        $checks
            auto count = torch::zeros({}, x.options().dtype(torch::kInt32));
            const int64_t n = x.numel();
            if (n > 0) {
                constexpr int threads = $threads;
                const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, $cap));
                count_kernel<<<blocks, threads>>>(x.data_ptr<float>(), reinterpret_cast<unsigned int*>(count.data_ptr<int>()), n, $host_call);
            $check
            }
            return count.to(torch::kFloat32);
        }
        """, op=op, host_args=host_args, checks=host.input_checks(variant, "x"), threads=threads, cap=cap,
        host_call=host_call, check=host.launch_check(variant, "count_kernel"),
    )
    task = task_module(
        doc=doc, init_args=init, init_body=init_body,
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {expr}",
        constants=consts, inputs=f"x = torch.randn({dims})\nreturn [x]", init_inputs=init_inputs,
    )
    fn = f"{op}_cuda"
    return Spec(
        family=FAMILY, op=op, styles=styles, task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<algorithm>"), kernel, host_fn]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, {host_args});", functions=(fn,), ext_name=f"{op}_ext",
        model_new=model_new_source(f"{op}_ext", fn, init, call_py), hint=hint, template=f"histogram.count.{method}",
        params={"shape": list(shape), "threads": threads, "cap": cap, "lo": lo, "hi": hi},
    )


def row_count_spec(rows: int, cols: int, threads: int, variant: int) -> Spec:
    """Positives per row, (rows,): each block counts its chunk with __syncthreads_count."""
    kernel = fill(
        """
        // blockIdx.y is the row, blockIdx.x a chunk of it. __syncthreads_count returns the number
        // of threads whose predicate is true, so each block needs only one atomicAdd.
        __global__ void __launch_bounds__($threads) row_count_kernel(const float* __restrict__ x, int* __restrict__ counts, int cols) {
            const int col = blockIdx.x * blockDim.x + threadIdx.x;
            const int row = blockIdx.y;
            const bool positive = col < cols && x[static_cast<int64_t>(row) * cols + col] > 0.0f;
            const int block_count = __syncthreads_count(positive);
            if (threadIdx.x == 0 && block_count > 0) {
                atomicAdd(&counts[row], block_count);
            }
        }
        """, threads=threads,
    )
    host_fn = fill(
        """
        torch::Tensor row_count_cuda(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() == 2, "x must be (rows, cols)");
            const int rows = static_cast<int>(x.size(0));
            const int cols = static_cast<int>(x.size(1));
            auto counts = torch::zeros({rows}, x.options().dtype(torch::kInt32));
            if (rows > 0 && cols > 0) {
                const dim3 blocks((cols + $threads - 1) / $threads, rows);
                row_count_kernel<<<blocks, $threads>>>(x.data_ptr<float>(), counts.data_ptr<int>(), cols);
            $check
            }
            return counts.to(torch::kFloat32);
        }
        """, checks=host.input_checks(variant, "x"), threads=threads, check=host.launch_check(variant, "row_count_kernel"),
    )
    task = task_module(
        doc="Counts the positive elements of each row.",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return (x > 0).sum(dim=1).float()",
        constants=f"batch_size = {rows}\ndim = {cols}", inputs="x = torch.randn(batch_size, dim)\nreturn [x]",
    )
    return Spec(
        family=FAMILY, op="row_count", styles=("guarded", "atomics"), task=task,
        cuda_source="\n\n".join([host.preamble(variant), kernel, host_fn]),
        cpp_source="torch::Tensor row_count_cuda(torch::Tensor x);", functions=("row_count_cuda",), ext_name="row_count_ext",
        model_new=model_new_source("row_count_ext", "row_count_cuda", "", "x.contiguous()"),
        hint="A 2-D grid (chunk, row); count each block's hits with __syncthreads_count and add them with one atomicAdd.",
        template="histogram.row_count", params={"rows": rows, "cols": cols, "threads": threads},
    )


def specs() -> list[Spec]:
    """The counting samples, in a fixed order (after `histogram.specs()` in the corpus)."""
    return [
        count_spec((16, 3001), "ballot", 256, 32, variant=19, lo=0.5),
        count_spec((7, 5003), "block", 512, 16, variant=20, lo=-1.0),
        count_spec((9999,), "ballot", 128, 40, variant=21, lo=-0.5, hi=0.25),
        count_spec((12, 1234), "block", 256, 24, variant=22, lo=-0.3, hi=1.7),
        row_count_spec(24, 1001, 256, variant=23),
        row_count_spec(100, 333, 128, variant=24),
    ]
