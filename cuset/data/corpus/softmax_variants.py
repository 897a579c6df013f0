"""Softmax / LayerNorm variants that do not fit the row-kernel mould of `softmax_norm`.

- online softmax: max and sum of exponentials in a single pass (each lane keeps a running
  (max, sum) pair and rescales it), merged across the warp with `__shfl_xor_sync`;
- Welford LayerNorm: per-lane (count, mean, M2) states merged across the warp with Chan's
  formula, numerically stable in one pass;
- channel softmax: softmax over dim 1 of a (batch, channels, length) tensor, one thread per
  (batch, position), so every pass is coalesced across threads.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module, unary_model_new
from cuset.data.corpus.softmax_norm import FAMILY, OPS, model_new_source, task_source


def online_softmax_spec(shape: tuple[int, ...], threads: int, variant: int, log: bool) -> Spec:
    """Single-pass (online) softmax statistics: one warp per row keeps a running (max, sum)."""
    op = OPS["log_softmax" if log else "softmax"]
    warps = threads // 32
    write = (
        "yr[c] = xr[c] - m - logf(s);" if log else "yr[c] = __expf(xr[c] - m) * inv_sum;"
    )
    pre = "" if log else "const float inv_sum = 1.0f / s;\n"
    kernel = fill(
        """
        // Rescale a partial sum from max m_old to max m_new. An empty partial (m_old == -inf)
        // contributes nothing; without the test, exp(-inf - -inf) would be NaN.
        __device__ __forceinline__ float rescale(float s, float m_old, float m_new) {
            return m_old == -INFINITY ? 0.0f : s * __expf(m_old - m_new);
        }

        constexpr int kWarpsPerBlock = $warps;

        __global__ void __launch_bounds__(kWarpsPerBlock * 32) online_${name}_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                                 int64_t rows, int cols) {
            const int lane = threadIdx.x & 31;
            const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
            if (row >= rows) {
                return;
            }
            const float* xr = x + row * cols;
            float* yr = y + row * cols;
            // One pass: each lane keeps the max of what it has seen and the sum of exp(v - max).
            float m = -INFINITY;
            float s = 0.0f;
            for (int c = lane; c < cols; c += 32) {
                const float v = xr[c];
                const float m_new = fmaxf(m, v);
                s = rescale(s, m, m_new) + __expf(v - m_new);
                m = m_new;
            }
            // Merge the 32 (max, sum) pairs with a butterfly so every lane holds the row's pair.
        #pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                const float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
                const float s_other = __shfl_xor_sync(0xffffffffu, s, offset);
                const float m_new = fmaxf(m, m_other);
                s = rescale(s, m, m_new) + rescale(s_other, m_other, m_new);
                m = m_new;
            }
            $pre
            for (int c = lane; c < cols; c += 32) {
                $write
            }
        }
        """,
        warps=warps, name=op.name, pre=pre.strip("\n"), write=write,
    )
    kname = f"online_{op.name}_kernel"
    fn = f"online_{op.name}_cuda"
    host_fn = fill(
        """
        torch::Tensor $fn(torch::Tensor x) {
        $checks
            auto y = torch::empty_like(x);
            const int cols = static_cast<int>(x.size(-1));
            const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
            if (rows == 0) {
                return y;
            }
            const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
            $kname<<<blocks, kWarpsPerBlock * 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
        $check
            return y;
        }
        """,
        fn=fn, checks=host.input_checks(variant, "x"), kname=kname, check=host.launch_check(variant, kname),
    )
    ext = f"online_{op.name}_ext"
    return Spec(
        family=FAMILY, op=f"online_{op.name}", styles=("warp-shuffle", "guarded"), task=task_source(op, shape),
        cuda_source="\n\n".join([host.preamble(variant, "<cmath>"), kernel, host_fn]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x);", functions=(fn,), ext_name=ext,
        model_new=model_new_source(op, ext, fn),
        hint="Compute the max and the sum of exponentials in one pass (online softmax), one warp per row, merging lane partials with __shfl_xor_sync.",
        template="softmax_norm.online_softmax", params={"shape": list(shape), "threads": threads, "log": log},
    )


def welford_layernorm_spec(shape: tuple[int, ...], threads: int, variant: int) -> Spec:
    """LayerNorm whose mean/variance come from Welford's algorithm, merged across a warp."""
    op = OPS["layernorm"]
    warps = threads // 32
    kernel = fill(
        """
        // Chan et al.'s merge of two Welford states (count, mean, M2); stable for any split.
        __device__ __forceinline__ void welford_merge(float& n, float& mean, float& m2, float n_b, float mean_b, float m2_b) {
            const float total = n + n_b;
            if (total == 0.0f) {
                return;
            }
            const float delta = mean_b - mean;
            const float frac_b = n_b / total;
            mean += delta * frac_b;
            m2 += m2_b + delta * delta * n * frac_b;
            n = total;
        }

        constexpr int kWarpsPerBlock = $warps;

        __global__ void __launch_bounds__(kWarpsPerBlock * 32) welford_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                                                                      const float* __restrict__ beta, float* __restrict__ y,
                                                                                      int64_t rows, int cols, float eps) {
            const int lane = threadIdx.x & 31;
            const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
            if (row >= rows) {
                return;
            }
            const float* xr = x + row * cols;
            float* yr = y + row * cols;
            float n = 0.0f;
            float mean = 0.0f;
            float m2 = 0.0f;
            for (int c = lane; c < cols; c += 32) {
                const float v = xr[c];
                n += 1.0f;
                const float delta = v - mean;
                mean += delta / n;
                m2 += delta * (v - mean);
            }
        #pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                const float n_b = __shfl_xor_sync(0xffffffffu, n, offset);
                const float mean_b = __shfl_xor_sync(0xffffffffu, mean, offset);
                const float m2_b = __shfl_xor_sync(0xffffffffu, m2, offset);
                welford_merge(n, mean, m2, n_b, mean_b, m2_b);
            }
            // LayerNorm uses the biased variance (divide by cols, not cols - 1).
            const float rstd = rsqrtf(m2 / static_cast<float>(cols) + eps);
            for (int c = lane; c < cols; c += 32) {
                yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
            }
        }
        """,
        warps=warps,
    )
    fn = "welford_layernorm_cuda"
    host_fn = fill(
        """
        torch::Tensor welford_layernorm_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
        $checks
            TORCH_CHECK(gamma.numel() == x.size(-1) && beta.numel() == x.size(-1), "gamma/beta must have x.size(-1) elements");
            auto y = torch::empty_like(x);
            const int cols = static_cast<int>(x.size(-1));
            const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
            if (rows == 0) {
                return y;
            }
            const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
            welford_layernorm_kernel<<<blocks, kWarpsPerBlock * 32>>>(x.data_ptr<float>(), gamma.data_ptr<float>(), beta.data_ptr<float>(),
                                                                     y.data_ptr<float>(), rows, cols, static_cast<float>(eps));
        $check
            return y;
        }
        """,
        checks=host.input_checks(variant, "x", "gamma", "beta"), check=host.launch_check(variant, "welford_layernorm_kernel"),
    )
    ext = "welford_layernorm_ext"
    return Spec(
        family=FAMILY, op="welford_layernorm", styles=("warp-shuffle", "guarded"), task=task_source(op, shape),
        cuda_source="\n\n".join([host.preamble(variant, "<cmath>"), kernel, host_fn]),
        cpp_source="torch::Tensor welford_layernorm_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);",
        functions=(fn,), ext_name=ext, model_new=model_new_source(op, ext, fn),
        hint="One warp per row; accumulate Welford (count, mean, M2) per lane and merge the states with __shfl_xor_sync.",
        template="softmax_norm.welford_layernorm", params={"shape": list(shape), "threads": threads},
    )


def strided_softmax_spec(shape: tuple[int, int, int], threads: int, variant: int, log: bool) -> Spec:
    """Softmax over dim 1 of a (batch, channels, length) tensor: one thread per (batch, position)."""
    name = "log_softmax" if log else "softmax"
    write = "y[base + k * inner] = x[base + k * inner] - m - log_sum;" if log else "y[base + k * inner] = __expf(x[base + k * inner] - m) * inv_sum;"
    finish = "const float log_sum = logf(s);" if log else "const float inv_sum = 1.0f / s;"
    kernel = fill(
        """
        // x is (outer, channels, inner) and the softmax runs over channels. Threads of a block take
        // consecutive inner positions, so every pass reads consecutive addresses across the warp.
        __global__ void __launch_bounds__($threads) channel_${name}_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                         int channels, int64_t inner) {
            const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
            if (i >= inner) {
                return;
            }
            const int64_t base = static_cast<int64_t>(blockIdx.y) * channels * inner + i;
            float m = -INFINITY;
            for (int k = 0; k < channels; ++k) {
                m = fmaxf(m, x[base + k * inner]);
            }
            float s = 0.0f;
            for (int k = 0; k < channels; ++k) {
                s += __expf(x[base + k * inner] - m);
            }
            $finish
            for (int k = 0; k < channels; ++k) {
                $write
            }
        }
        """,
        threads=threads, name=name, finish=finish, write=write,
    )
    fn = f"channel_{name}_cuda"
    kname = f"channel_{name}_kernel"
    host_fn = fill(
        """
        torch::Tensor $fn(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() == 3, "x must be (batch, channels, length)");
            auto y = torch::empty_like(x);
            const int64_t outer = x.size(0);
            const int channels = static_cast<int>(x.size(1));
            const int64_t inner = x.size(2);
            if (y.numel() == 0) {
                return y;
            }
            const dim3 blocks(static_cast<unsigned>((inner + $threads - 1) / $threads), static_cast<unsigned>(outer));
            $kname<<<blocks, $threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), channels, inner);
        $check
            return y;
        }
        """,
        fn=fn, checks=host.input_checks(variant, "x"), threads=threads, kname=kname, check=host.launch_check(variant, kname),
    )
    b, c, n = shape
    expr = "torch.log_softmax(x, dim=1)" if log else "torch.softmax(x, dim=1)"
    task = task_module(
        doc=f"Applies {'LogSoftmax' if log else 'Softmax'} over the channel dimension (dim=1) of a 3-D tensor.",
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {expr}",
        constants=f"batch_size = {b}\nchannels = {c}\nlength = {n}",
        inputs="x = torch.randn(batch_size, channels, length)\nreturn [x]",
    )
    ext = f"channel_{name}_ext"
    model_new = unary_model_new(ext, fn)
    return Spec(
        family=FAMILY, op=f"channel_{name}", styles=("guarded",), task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<cmath>"), kernel, host_fn]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x);", functions=(fn,), ext_name=ext, model_new=model_new,
        hint="One thread per (batch, position) on a 2-D grid, looping over the channels three times (max, sum, write).",
        template="softmax_norm.channel_softmax", params={"shape": list(shape), "threads": threads},
    )


def specs() -> list[Spec]:
    """The variant samples, in a fixed order (after `softmax_norm.specs()` in the corpus)."""
    return [
        online_softmax_spec((60, 777), 128, variant=1, log=False),
        online_softmax_spec((30, 1500), 256, variant=2, log=True),
        welford_layernorm_spec((64, 300), 128, variant=3),
        welford_layernorm_spec((3, 50, 96), 64, variant=4),
        strided_softmax_spec((4, 37, 300), 128, variant=5, log=False),
        strided_softmax_spec((3, 29, 500), 256, variant=6, log=True),
    ]
