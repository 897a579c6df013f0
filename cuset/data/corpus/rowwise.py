"""Row-wise kernel builder shared by the softmax/normalisation and fused templates.

A row op (softmax, LayerNorm, RMSNorm, a fused residual add + norm, ...) is written once as a
body in a small hook language, and `row_kernel` turns it into a kernel of a chosen style:

- `$sum(v)` / `$max(v)`: a reduction across the threads that own the row, returned to all;
- `$loop { ... }`: the loop over the row's columns `c` that this thread owns;
- `$src[c]`: the row element (global memory, a fused expression, or the shared-memory cache);
- `$leader` / `$row`: the thread that writes a per-row result, and the row index.

Styles: `shared-memory` (block per row, tree reductions, template block size), `warp-shuffle`
(block per row, `__shfl_down_sync` then across warps), `warp-per-row` (`__shfl_xor_sync`,
every lane gets the result), `dyn-smem` (the row is staged once in `extern __shared__` memory
sized at launch) and `vectorised` (the same staging with float4 loads and a scalar tail).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cuset.data.corpus.kernelbench import fill

_SMEM_REDUCE = """
// Shared-memory tree reductions over BLOCK (a power of two) values. The trailing barrier lets
// the caller reuse sdata for the next reduction once every thread has read the result.
template <int BLOCK>
__device__ float block_sum(float v, float* sdata) {
    sdata[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] += sdata[threadIdx.x + s];
        }
        __syncthreads();
    }
    const float result = sdata[0];
    __syncthreads();
    return result;
}
$max_fn
"""

_SMEM_MAX = """
template <int BLOCK>
__device__ float block_max(float v, float* sdata) {
    sdata[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] = fmaxf(sdata[threadIdx.x], sdata[threadIdx.x + s]);
        }
        __syncthreads();
    }
    const float result = sdata[0];
    __syncthreads();
    return result;
}
"""

_WARP_FNS = """
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += $shfl(0xffffffffu, v, offset);
    }
    return v;
}
$max_fn
"""

_WARP_MAX = """
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, $shfl(0xffffffffu, v, offset));
    }
    return v;
}
"""

_BLOCK_SHFL = """
// Block-wide reduction that returns the result to every thread: warp shuffles, one partial per
// warp in shared memory, a final warp reduction, then a broadcast through shared memory.
__device__ float block_$name(float v) {
    __shared__ float partials[32];
    __shared__ float result;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warp_$name(v);
    if (lane == 0) {
        partials[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? partials[lane] : $identity;
        v = warp_$name(v);
        if (lane == 0) {
            result = v;
        }
    }
    __syncthreads();
    return result;
}
"""


_REDUCE_CALL = re.compile(r"\$(sum|max)\((\w+)\)")
_ELEM = re.compile(r"\$\{?src\}?\[c\]")


def _apply_hooks(body: str, hooks: dict[str, str], extra_arg: str) -> str:
    """Fill an op body's `$sum(v)`, `$max(v)`, `$src[c]` and `$loop` hooks for one style."""
    body = _REDUCE_CALL.sub(lambda m: f"{hooks[m.group(1)]}({m.group(2)}{extra_arg})", body)
    body = _ELEM.sub(hooks["elem"], body)
    for name in ("loop", "leader", "row"):
        if name in hooks:
            body = body.replace(f"${name}", hooks[name])
    return body


@dataclass(frozen=True)
class RowKernel:
    """A row-wise kernel for one style: device helpers, the kernel, and its launch in the host."""

    helpers: str
    kernel: str
    grid: str  # host lines that define `blocks` (and `smem` for the staged styles)
    launch: str  # `kernel<...><<<...>>>`, to be followed by the argument list
    styles: tuple[str, ...]
    hint: str


def row_kernel(body: str, style: str, kname: str, sig: str, threads: int, elem: str = "xr[c]", per_row_out: bool = False) -> RowKernel:
    """Wrap a hook-language row body (see module doc) into a kernel of the given style.

    `sig` is the kernel's parameter list; it must hold `x`, `y`, `rows` and `cols`. `elem` is the
    row element as the body should read it without staging (e.g. `(xr[c] + rr[c])` for a fused
    residual add); the staged styles copy `elem` into shared memory once instead. With
    `per_row_out` the body writes one value per row through the `$leader` / `$row` hooks.
    """
    needs_max = "$max" in body
    staged = style in ("dyn-smem", "vectorised")
    if style == "warp-per-row":
        helpers = fill(_WARP_FNS, shfl="__shfl_xor_sync", max_fn=fill(_WARP_MAX, shfl="__shfl_xor_sync") if needs_max else "")
        hooks = {"sum": "warp_sum", "max": "warp_max", "loop": "for (int c = lane; c < cols; c += 32)", "elem": elem}
    elif style == "shared-memory":
        helpers = fill(_SMEM_REDUCE, max_fn=_SMEM_MAX if needs_max else "")
        hooks = {"sum": "block_sum<BLOCK>", "max": "block_max<BLOCK>", "loop": "for (int c = threadIdx.x; c < cols; c += BLOCK)", "elem": elem}
    else:
        helpers = fill(_WARP_FNS, shfl="__shfl_down_sync", max_fn=fill(_WARP_MAX, shfl="__shfl_down_sync") if needs_max else "")
        helpers += "\n" + fill(_BLOCK_SHFL, name="sum", identity="0.0f")
        if needs_max:
            helpers += "\n" + fill(_BLOCK_SHFL, name="max", identity="-INFINITY")
        hooks = {"sum": "block_sum", "max": "block_max", "loop": "for (int c = threadIdx.x; c < cols; c += blockDim.x)",
                 "elem": "cache[c]" if staged else elem}
    hooks["leader"] = "lane == 0" if style == "warp-per-row" else "threadIdx.x == 0"
    hooks["row"] = "row" if style == "warp-per-row" else "blockIdx.x"
    body = _apply_hooks(body, hooks, ", sdata" if style == "shared-memory" else "").strip("\n")
    row_ptrs = "const float* xr = x + $row * cols;" + ("" if per_row_out else "\nfloat* yr = y + $row * cols;")
    for extra in re.findall(r"\b(\w)r\[c\]", elem):
        if extra not in ("x", "y"):
            row_ptrs += f"\nconst float* {extra}r = {extra} + $row * cols;"
    if style == "warp-per-row":
        warps = threads // 32
        kernel = fill(
            """
            constexpr int kWarpsPerBlock = $warps;

            __global__ void __launch_bounds__(kWarpsPerBlock * 32) $kname($sig) {
                const int lane = threadIdx.x & 31;
                const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
                if (row >= rows) {
                    return;  // whole warps exit together, so the full shuffle mask stays valid
                }
                $ptrs
                $body
            }
            """, warps=warps, kname=kname, sig=sig, ptrs=row_ptrs.replace("$row", "row"), body=body,
        )
        return RowKernel(
            helpers, kernel, f"const unsigned blocks = static_cast<unsigned>((rows + {warps} - 1) / {warps});",
            f"{kname}<<<blocks, {threads}>>>", ("warp-shuffle", "guarded"),
            f"Assign one warp per row ({warps} warps per block) and reduce with __shfl_xor_sync.",
        )
    ptrs = row_ptrs.replace("$row", "static_cast<int64_t>(blockIdx.x)")
    if style == "shared-memory":
        kernel = fill(
            """
            template <int BLOCK>
            __global__ void __launch_bounds__(BLOCK) $kname($sig) {
                __shared__ float sdata[BLOCK];
                $ptrs
                $body
            }
            """, kname=kname, sig=sig, ptrs=ptrs, body=body,
        )
        return RowKernel(
            helpers, kernel, "const unsigned blocks = static_cast<unsigned>(rows);", f"{kname}<{threads}><<<blocks, {threads}>>>",
            ("shared-memory",), f"One block of {threads} threads per row with shared-memory tree reductions.",
        )
    if style == "warp-shuffle":
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) $kname($sig) {
                $ptrs
                $body
            }
            """, threads=threads, kname=kname, sig=sig, ptrs=ptrs, body=body,
        )
        return RowKernel(
            helpers, kernel, "const unsigned blocks = static_cast<unsigned>(rows);", f"{kname}<<<blocks, {threads}>>>",
            ("warp-shuffle",), f"One block of {threads} threads per row; warp shuffles then a cross-warp step for each reduction.",
        )
    if style == "vectorised":
        if elem != "xr[c]":
            raise ValueError("the vectorised row kernel stages x alone")
        load = fill(
            """
            // Stage the row in shared memory with float4 loads when the row is 16-byte aligned.
            const int cols_vec = aligned ? cols / 4 : 0;
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            float4* cache4 = reinterpret_cast<float4*>(cache);
            for (int i = threadIdx.x; i < cols_vec; i += blockDim.x) {
                cache4[i] = xr4[i];
            }
            for (int c = cols_vec * 4 + threadIdx.x; c < cols; c += blockDim.x) {
                cache[c] = xr[c];
            }
            """
        )
        sig += ", bool aligned"
        styles: tuple[str, ...] = ("vectorised", "shared-memory", "warp-shuffle")
        hint = f"Stage each row in dynamic shared memory with float4 loads (scalar tail), {threads} threads per row."
    else:
        load = f"// Stage the row once; every later pass reads shared memory.\nfor (int c = threadIdx.x; c < cols; c += blockDim.x) {{\n    cache[c] = {elem};\n}}"
        styles = ("shared-memory", "warp-shuffle")
        hint = f"Cache each row in dynamic (extern) shared memory sized at launch, {threads} threads per row, shuffle reductions."
    kernel = fill(
        """
        __global__ void __launch_bounds__($threads) $kname($sig) {
            extern __shared__ __align__(16) float cache[];
            $ptrs
            $load
            __syncthreads();
            $body
        }
        """, threads=threads, kname=kname, sig=sig, ptrs=ptrs, load=load, body=body,
    )
    grid = (
        "const size_t smem = static_cast<size_t>(cols) * sizeof(float);\n"
        'TORCH_CHECK(smem <= 48 * 1024, "row of ", cols, " floats does not fit in 48 KB of shared memory");\n'
        "const unsigned blocks = static_cast<unsigned>(rows);"
    )
    if style == "vectorised":
        grid = "const bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 && cols % 4 == 0;\n" + grid
    return RowKernel(helpers, kernel, grid, f"{kname}<<<blocks, {threads}, smem>>>", styles, hint)
