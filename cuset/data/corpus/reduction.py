"""Reduction templates: sum / mean / max / min / L1 / L2 along one dim, and full reductions.

The reduced dim splits a contiguous tensor into (outer, len, inner). Which kernel fits depends
on `inner`:

- last dim (`inner == 1`): one block per row with a shared-memory tree (`shared-memory`) or a
  `__shfl_down_sync` warp reduction plus per-warp partials (`warp-shuffle`); one warp per row
  for short rows; float4 row loads (`vectorised`) when rows are 16-byte aligned;
- an inner dim (`inner > 1`): one thread per output with a sequential loop, coalesced across
  threads (`guarded`), or a 32x8 tile whose rows accumulate in shared memory (`tiled`);
- all elements: a grid-stride accumulation, a block reduction, then `atomicAdd` of each block's
  partial (sum-like ops) or a second one-block pass over per-block partials (max/min, which
  have no float atomic).

Identities matter: max starts from -INFINITY, min from INFINITY, so lanes with no data never win.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module, unary_model_new

FAMILY = "reduction"


@dataclass(frozen=True)
class Reduce:
    """A reduction: reference call, element map, combine, identity and finalisation."""

    name: str
    doc: str
    torch_call: str  # with {args}: "torch.sum(x{args})"
    map: str  # of v
    combine: str  # of a, b
    identity: str
    finalize: str  # of acc, len

    @property
    def sum_like(self) -> bool:
        return self.combine == "a + b"


OPS = {
    r.name: r
    for r in (
        Reduce("sum", "sum", "torch.sum(x{args})", "v", "a + b", "0.0f", "acc"),
        Reduce("mean", "mean", "torch.mean(x{args})", "v", "a + b", "0.0f", "acc / static_cast<float>(len)"),
        Reduce("max", "max", "torch.amax(x{args})", "v", "fmaxf(a, b)", "-INFINITY", "acc"),
        Reduce("min", "min", "torch.amin(x{args})", "v", "fminf(a, b)", "INFINITY", "acc"),
        Reduce("l1", "L1 norm (sum of absolute values)", "torch.sum(torch.abs(x){args})", "fabsf(v)", "a + b", "0.0f", "acc"),
        Reduce("l2", "L2 norm", "torch.linalg.vector_norm(x, ord=2{args})", "v * v", "a + b", "0.0f", "sqrtf(acc)"),
        Reduce("sumsq", "sum of squares", "torch.sum(x * x{args})", "v * v", "a + b", "0.0f", "acc"),
    )
}


def device_helpers(op: Reduce, warp: bool, xor: bool = False) -> str:
    text = f"__device__ __forceinline__ float reduce_op(float a, float b) {{ return {op.combine}; }}"
    if warp:
        shfl = "__shfl_xor_sync(0xffffffffu, v, offset)" if xor else "__shfl_down_sync(0xffffffffu, v, offset)"
        note = (
            "// Butterfly (xor) exchange: every lane ends up holding the warp's result."
            if xor
            else "// After the loop lane 0 holds the reduction of all 32 lanes."
        )
        text += "\n\n" + fill(
            """
            $note
            __device__ __forceinline__ float warp_reduce(float v) {
            #pragma unroll
                for (int offset = 16; offset > 0; offset >>= 1) {
                    v = reduce_op(v, $shfl);
                }
                return v;
            }
            """,
            note=note, shfl=shfl,
        )
    return text


BLOCK_REDUCE = """
// Block-wide reduction: warps reduce with shuffles, lane 0 of each warp parks its partial in
// shared memory, and the first warp reduces those. blockDim.x must be a multiple of 32.
__device__ float block_reduce(float v) {
    __shared__ float warp_partials[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warp_reduce(v);
    if (lane == 0) {
        warp_partials[warp] = v;
    }
    __syncthreads();
    const int num_warps = blockDim.x >> 5;
    v = (threadIdx.x < num_warps) ? warp_partials[lane] : $identity;
    if (warp == 0) {
        v = warp_reduce(v);
    }
    return v;
}
"""

SMEM_BLOCK_REDUCE = """
// Shared-memory tree reduction over BLOCK (a power of two) values; the result is in sdata[0].
template <int BLOCK>
__device__ float block_reduce(float v, float* sdata) {
    sdata[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] = reduce_op(sdata[threadIdx.x], sdata[threadIdx.x + s]);
        }
        __syncthreads();
    }
    return sdata[0];
}
"""


def _dim_host(op: Reduce, fn: str, keepdim: bool, body: str, variant: int, need_last: bool) -> str:
    shape = "out_sizes[dim] = 1;" if keepdim else "out_sizes.erase(out_sizes.begin() + dim);"
    last = (
        '\n    TORCH_CHECK(inner == 1, "this kernel reduces the innermost dimension (dim=-1)");'
        if need_last
        else ""
    )
    return fill(
        """
        torch::Tensor $fn(torch::Tensor x, int64_t dim) {
        $checks
            const int64_t ndim = x.dim();
            if (dim < 0) {
                dim += ndim;
            }
            TORCH_CHECK(dim >= 0 && dim < ndim, "dim out of range");
            int64_t outer = 1;
            int64_t inner = 1;
            for (int64_t d = 0; d < dim; ++d) {
                outer *= x.size(d);
            }
            for (int64_t d = dim + 1; d < ndim; ++d) {
                inner *= x.size(d);
            }
            const int64_t len = x.size(dim);
            TORCH_CHECK(len > 0, "cannot reduce an empty dimension");$last
            auto out_sizes = x.sizes().vec();
            $shape
            auto out = torch::empty(out_sizes, x.options());
            if (out.numel() == 0) {
                return out;
            }
        $body
            return out;
        }
        """,
        fn=fn, checks=host.input_checks(variant, "x"), last=last, shape=shape, body=body,
    )


def _dim_task(op: Reduce, shape: tuple[int, ...], dim: int, keepdim: bool) -> str:
    args = f", dim=self.dim, keepdim={keepdim}"
    names = ["batch_size", "dim1", "dim2", "dim3"][: len(shape)]
    return task_module(
        doc=f"Simple model that performs a {op.doc} reduction over a specified dimension.",
        init_args="dim: int",
        init_body="self.dim = dim",
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {op.torch_call.format(args=args)}",
        constants="\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True)) + f"\nreduce_dim = {dim}",
        inputs=f"x = torch.randn({', '.join(names)})\nreturn [x]",
        init_inputs="[reduce_dim]",
    )


def dim_spec(op_name: str, style: str, shape: tuple[int, ...], dim: int, keepdim: bool, threads: int, variant: int) -> Spec:
    """Reduction of one dim. style: shared-memory | warp-shuffle | warp-per-row | vectorised | guarded | tiled."""
    op = OPS[op_name]
    fn = f"{op.name}_dim_cuda"
    finalize = op.finalize.replace("acc", "total")
    acc_loop = "acc = reduce_op(acc, {map});".format(map=op.map.replace("v", "row_ptr[c]"))
    if style == "shared-memory":
        kernel = fill(
            """
            $helper

            template <int BLOCK>
            __global__ void __launch_bounds__(BLOCK) row_reduce_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t len) {
                __shared__ float sdata[BLOCK];
                const float* row_ptr = x + static_cast<int64_t>(blockIdx.x) * len;
                float acc = $identity;
                for (int64_t c = threadIdx.x; c < len; c += BLOCK) {
                    $acc_loop
                }
                const float total = block_reduce<BLOCK>(acc, sdata);
                if (threadIdx.x == 0) {
                    out[blockIdx.x] = $finalize;
                }
            }
            """,
            helper=SMEM_BLOCK_REDUCE.strip(), identity=op.identity, acc_loop=acc_loop, finalize=finalize,
        )
        launch = f"    row_reduce_kernel<{threads}><<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), out.data_ptr<float>(), len);"
        styles, hint = ("shared-memory",), f"One block of {threads} threads per row, reduced with a shared-memory tree."
        warp = False
    elif style == "warp-shuffle":
        kernel = fill(
            """
            $block_reduce
            __global__ void __launch_bounds__($threads) row_reduce_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t len) {
                const float* row_ptr = x + static_cast<int64_t>(blockIdx.x) * len;
                float acc = $identity;
                for (int64_t c = threadIdx.x; c < len; c += blockDim.x) {
                    $acc_loop
                }
                const float total = block_reduce(acc);
                if (threadIdx.x == 0) {
                    out[blockIdx.x] = $finalize;
                }
            }
            """,
            block_reduce=fill(BLOCK_REDUCE, identity=op.identity), threads=threads,
            identity=op.identity, acc_loop=acc_loop, finalize=finalize,
        )
        launch = f"    row_reduce_kernel<<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), out.data_ptr<float>(), len);"
        styles, hint = ("warp-shuffle",), f"One block of {threads} threads per row; reduce with __shfl_down_sync inside warps, then across warps."
        warp = True
    elif style == "warp-per-row":
        warps = threads // 32
        kernel = fill(
            """
            constexpr int kWarpsPerBlock = $warps;

            // Rows are short, so a whole block per row would leave most threads idle: one warp per row.
            __global__ void __launch_bounds__(kWarpsPerBlock * 32) warp_row_reduce_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                                                      int64_t rows, int64_t len) {
                const int lane = threadIdx.x & 31;
                const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
                if (row >= rows) {
                    return;  // the whole warp leaves together, so the full shuffle mask stays valid
                }
                const float* row_ptr = x + row * len;
                float acc = $identity;
                for (int64_t c = lane; c < len; c += 32) {
                    $acc_loop
                }
                const float total = warp_reduce(acc);
                if (lane == 0) {
                    out[row] = $finalize;
                }
            }
            """,
            warps=warps, identity=op.identity, acc_loop=acc_loop, finalize=finalize,
        )
        launch = (
            f"    const unsigned blocks = static_cast<unsigned>((outer + {warps} - 1) / {warps});\n"
            f"    warp_row_reduce_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), out.data_ptr<float>(), outer, len);"
        )
        styles, hint = ("warp-shuffle", "guarded"), f"One warp per row ({warps} warps per block), with a butterfly __shfl_xor_sync reduction."
        warp = True
    elif style == "vectorised":
        map4 = " ".join(
            f"acc = reduce_op(acc, {op.map.replace('v', f'q.{c}')});" for c in "xyzw"
        )
        kernel = fill(
            """
            $block_reduce
            __global__ void __launch_bounds__($threads) row_reduce_vec4_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                                               int64_t len, bool aligned) {
                const float* row_ptr = x + static_cast<int64_t>(blockIdx.x) * len;
                float acc = $identity;
                // Rows start 16-byte aligned only if the base is and len % 4 == 0; otherwise the
                // scalar loop below does the whole row.
                const int64_t len_vec = aligned ? len / 4 : 0;
                const float4* row4 = reinterpret_cast<const float4*>(row_ptr);
                for (int64_t i = threadIdx.x; i < len_vec; i += blockDim.x) {
                    const float4 q = row4[i];
                    $map4
                }
                for (int64_t c = len_vec * 4 + threadIdx.x; c < len; c += blockDim.x) {
                    $acc_loop
                }
                const float total = block_reduce(acc);
                if (threadIdx.x == 0) {
                    out[blockIdx.x] = $finalize;
                }
            }
            """,
            block_reduce=fill(BLOCK_REDUCE, identity=op.identity), threads=threads, identity=op.identity,
            map4=map4, acc_loop=acc_loop, finalize=finalize,
        )
        launch = (
            "    const bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 && len % 4 == 0;\n"
            f"    row_reduce_vec4_kernel<<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), out.data_ptr<float>(), len, aligned);"
        )
        styles, hint = ("vectorised", "warp-shuffle"), f"One block of {threads} threads per row reading float4 vectors, a scalar tail, and a shuffle-based block reduction."
        warp = True
    elif style == "guarded":
        kernel = fill(
            """
            // x viewed as (outer, len, inner); one thread per (outer, inner) output walks the
            // reduced dim. Neighbouring threads read neighbouring addresses, so loads coalesce.
            __global__ void __launch_bounds__($threads) strided_reduce_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                                              int64_t len, int64_t inner) {
                const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
                const int64_t o = blockIdx.y;
                if (i >= inner) {
                    return;
                }
                const float* col = x + o * len * inner + i;
                float acc = $identity;
                for (int64_t r = 0; r < len; ++r) {
                    $acc_loop
                }
                const float total = acc;
                out[o * inner + i] = $finalize;
            }
            """,
            threads=threads, identity=op.identity,
            acc_loop="acc = reduce_op(acc, {map});".format(map=op.map.replace("v", "col[r * inner]")),
            finalize=finalize,
        )
        launch = (
            f"    const dim3 blocks(static_cast<unsigned>((inner + {threads} - 1) / {threads}), static_cast<unsigned>(outer));\n"
            f"    strided_reduce_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), out.data_ptr<float>(), len, inner);"
        )
        styles, hint = ("guarded",), "One thread per output element on a 2-D grid, looping over the reduced dimension."
        warp = False
    else:  # tiled
        kernel = fill(
            """
            constexpr int kTileX = 32;
            constexpr int kTileY = 8;

            // A 32x8 block covers 32 output columns; its 8 thread rows each reduce every 8th input
            // row, then the 8 partials per column are combined through shared memory. The +1 pad
            // keeps the column-wise reads of the final step free of bank conflicts.
            __global__ void __launch_bounds__(kTileX * kTileY) column_reduce_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                                                    int64_t len, int64_t inner) {
                __shared__ float partial[kTileY][kTileX + 1];
                const int64_t col = static_cast<int64_t>(blockIdx.x) * kTileX + threadIdx.x;
                const int64_t o = blockIdx.y;
                float acc = $identity;
                if (col < inner) {
                    const float* base = x + o * len * inner + col;
                    for (int64_t r = threadIdx.y; r < len; r += kTileY) {
                        $acc_loop
                    }
                }
                partial[threadIdx.y][threadIdx.x] = acc;
                __syncthreads();
                if (threadIdx.y == 0 && col < inner) {
                    float total = partial[0][threadIdx.x];
            #pragma unroll
                    for (int k = 1; k < kTileY; ++k) {
                        total = reduce_op(total, partial[k][threadIdx.x]);
                    }
                    out[o * inner + col] = $finalize;
                }
            }
            """,
            identity=op.identity,
            acc_loop="acc = reduce_op(acc, {map});".format(map=op.map.replace("v", "base[r * inner]")),
            finalize=finalize,
        )
        launch = (
            "    const dim3 threads(kTileX, kTileY);\n"
            "    const dim3 blocks(static_cast<unsigned>((inner + kTileX - 1) / kTileX), static_cast<unsigned>(outer));\n"
            "    column_reduce_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), len, inner);"
        )
        styles, hint = ("tiled", "shared-memory"), "Tile 32 output columns per block with 8 thread rows and combine the row partials in padded shared memory."
        warp = False
    kname = {
        "shared-memory": "row_reduce_kernel", "warp-shuffle": "row_reduce_kernel",
        "warp-per-row": "warp_row_reduce_kernel", "vectorised": "row_reduce_vec4_kernel",
        "guarded": "strided_reduce_kernel", "tiled": "column_reduce_kernel",
    }[style]
    body = launch + "\n" + host.launch_check(variant, kname)
    need_last = style in ("shared-memory", "warp-shuffle", "warp-per-row", "vectorised")
    extra = ["<cmath>"] + (["<cstdint>"] if style == "vectorised" else [])
    cuda = "\n\n".join(
        [
            host.preamble(variant, *extra),
            device_helpers(op, warp, xor=style == "warp-per-row"),
            kernel,
            _dim_host(op, fn, keepdim, body, variant, need_last),
        ]
    )
    ext = f"{op.name}_reduce_ext"
    return Spec(
        family=FAMILY, op=op.name, styles=styles, task=_dim_task(op, shape, dim, keepdim), cuda_source=cuda,
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, int64_t dim);", functions=(fn,), ext_name=ext,
        model_new=unary_model_new(ext, fn, with_dim=True), hint=hint, template=f"reduction.dim.{style}",
        params={"shape": list(shape), "dim": dim, "keepdim": keepdim, "threads": threads},
    )


# (op, style, shape, dim, keepdim, threads)
_DIM_CONFIGS: tuple[tuple[str, str, tuple[int, ...], int, bool, int], ...] = (
    ("sum", "shared-memory", (16, 4093), 1, True, 256),
    ("max", "shared-memory", (32, 1531), -1, False, 128),
    ("mean", "shared-memory", (8, 2047), 1, True, 512),
    ("l1", "shared-memory", (24, 999), -1, False, 256),
    ("min", "shared-memory", (4, 3, 1001), 2, True, 256),
    ("sum", "warp-shuffle", (64, 777), -1, False, 128),
    ("max", "warp-shuffle", (16, 2049), 1, True, 256),
    ("l2", "warp-shuffle", (20, 1500), -1, False, 256),
    ("mean", "warp-shuffle", (7, 3333), 1, False, 512),
    ("min", "warp-shuffle", (30, 1000), -1, True, 128),
    ("sum", "warp-per-row", (500, 129), 1, False, 128),
    ("max", "warp-per-row", (257, 100), -1, True, 256),
    ("mean", "warp-per-row", (9, 37, 63), 2, False, 128),
    ("l2", "warp-per-row", (129, 250), 1, True, 64),
    ("sum", "vectorised", (16, 2052), 1, False, 256),
    ("sumsq", "vectorised", (24, 1024), -1, True, 128),
    ("max", "vectorised", (10, 4096), 1, False, 512),
    ("sum", "guarded", (4, 65, 77), 1, False, 128),
    ("max", "guarded", (3, 100, 67), 1, True, 256),
    ("mean", "guarded", (257, 99), 0, False, 128),
    ("min", "guarded", (3, 5, 111, 7), 2, False, 64),
    ("sum", "tiled", (300, 133), 0, False, 256),
    ("max", "tiled", (201, 150), 0, True, 256),
    ("mean", "tiled", (5, 70, 97), 1, False, 256),
)


def specs() -> list[Spec]:
    """The single-dim reduction samples, in a fixed order."""
    return [dim_spec(*cfg, variant=i) for i, cfg in enumerate(_DIM_CONFIGS)]
