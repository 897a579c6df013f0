"""Scan (prefix) templates: cumsum / exclusive cumsum / reverse cumsum / cummax / cummin / logcumsumexp.

Row scans run one block per row over tiles of the row and carry the running total of earlier
tiles in shared memory, so rows of any length work with any block size:

- Hillis-Steele: log2(BLOCK) steps over a double-buffered shared-memory tile (`shared-memory`);
- Blelloch: the work-efficient up-sweep / down-sweep over a tile of 2*BLOCK (`shared-memory`,
  `tiled`), sums only, naturally exclusive;
- warp shuffles: `__shfl_up_sync` scans within warps, one warp scans the warp totals
  (`warp-shuffle`).

A scan along a non-innermost dim uses one thread per column walking the dim (`guarded`, loads
coalesce across threads); `scan_vector` holds the three-kernel scan of one long vector.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module, unary_model_new

FAMILY = "scan"


@dataclass(frozen=True)
class ScanOp:
    """A scan: reference expression over x and self.dim, its combine, identity and direction."""

    name: str
    doc: str
    torch_expr: str
    combine: str  # of a (earlier) and b (later)
    identity: str
    exclusive: bool = False
    reverse: bool = False


_LOGADDEXP = "fmaxf(a, b) == -INFINITY ? -INFINITY : fmaxf(a, b) + log1pf(__expf(-fabsf(a - b)))"

OPS = {
    s.name: s
    for s in (
        ScanOp("cumsum", "an inclusive prefix sum (cumulative sum)", "torch.cumsum(x, dim=self.dim)", "a + b", "0.0f"),
        ScanOp(
            "exclusive_cumsum", "an exclusive prefix sum (each output excludes its own element)",
            "torch.cat([torch.zeros_like(x.narrow(self.dim, 0, 1)), "
            "torch.cumsum(x.narrow(self.dim, 0, x.size(self.dim) - 1), dim=self.dim)], dim=self.dim)",
            "a + b", "0.0f", exclusive=True,
        ),
        ScanOp(
            "reverse_cumsum", "a reverse cumulative sum (suffix sums)",
            "torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)", "a + b", "0.0f", reverse=True,
        ),
        ScanOp("cummax", "a cumulative maximum", "torch.cummax(x, dim=self.dim).values", "fmaxf(a, b)", "-INFINITY"),
        ScanOp("cummin", "a cumulative minimum", "torch.cummin(x, dim=self.dim).values", "fminf(a, b)", "INFINITY"),
        ScanOp("logcumsumexp", "a cumulative log-sum-exp", "torch.logcumsumexp(x, dim=self.dim)", _LOGADDEXP, "-INFINITY"),
    )
}


def _combine_fn(op: ScanOp) -> str:
    note = "// log(exp(a) + exp(b)) without overflow; -inf is the identity.\n" if op.name == "logcumsumexp" else ""
    return f"{note}__device__ __forceinline__ float scan_op(float a, float b) {{ return {op.combine}; }}"


def scan_task(op: ScanOp, shape: tuple[int, ...], dim: int) -> str:
    names = {1: ["n"], 2: ["batch_size", "length"], 3: ["batch_size", "length", "channels"]}[len(shape)]
    return task_module(
        doc=f"A model that computes {op.doc} along a specified dimension.",
        init_args="dim: int",
        init_body="self.dim = dim",
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {op.torch_expr}",
        constants="\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True)) + f"\ndim = {dim}",
        inputs=f"x = torch.randn({', '.join(names)})\nreturn [x]",
        init_inputs="[dim]",
    )


def _host(fn: str, variant: int, body: str, last_only: bool) -> str:
    last = '\n    TORCH_CHECK(inner == 1, "this kernel scans the innermost dimension (dim=-1)");' if last_only else ""
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
            const int64_t len = x.size(dim);$last
            auto y = torch::empty_like(x);
            if (y.numel() == 0) {
                return y;
            }
        $body
            return y;
        }
        """, fn=fn, checks=host.input_checks(variant, "x"), last=last, body=body,
    )


def _pos(op: ScanOp, var: str) -> str:
    """Physical column of logical scan position `var` (reverse scans walk the row backwards)."""
    return f"len - 1 - {var}" if op.reverse else var


def row_spec(op_name: str, algo: str, shape: tuple[int, ...], threads: int, variant: int) -> Spec:
    """A scan of the last dim, one block per row. algo: hillis-steele | blelloch | warp-shuffle."""
    op = OPS[op_name]
    ident = op.identity
    if algo == "hillis-steele":
        if op.exclusive:
            out = "const float excl = threadIdx.x == 0 ? $ident : buf[in][threadIdx.x - 1];\n    yr[$p] = scan_op(prefix, excl);"
        else:
            out = "yr[$p] = scan_op(prefix, buf[in][threadIdx.x]);"
        kernel = fill(
            """
            // Hillis-Steele inclusive scan of each BLOCK-wide tile in double-buffered shared memory;
            // `carry` holds the scan of all earlier tiles of the row.
            template <int BLOCK>
            __global__ void __launch_bounds__(BLOCK) hs_scan_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t len) {
                __shared__ float buf[2][BLOCK];
                __shared__ float carry;
                const float* xr = x + static_cast<int64_t>(blockIdx.x) * len;
                float* yr = y + static_cast<int64_t>(blockIdx.x) * len;
                if (threadIdx.x == 0) {
                    carry = $ident;
                }
                for (int64_t base = 0; base < len; base += BLOCK) {
                    const int64_t c = base + threadIdx.x;
                    buf[0][threadIdx.x] = c < len ? xr[$pc] : $ident;
                    __syncthreads();
                    int in = 0;
            #pragma unroll
                    for (int offset = 1; offset < BLOCK; offset <<= 1) {
                        float v = buf[in][threadIdx.x];
                        if (threadIdx.x >= offset) {
                            v = scan_op(buf[in][threadIdx.x - offset], v);
                        }
                        buf[in ^ 1][threadIdx.x] = v;
                        __syncthreads();
                        in ^= 1;
                    }
                    const float prefix = carry;
                    if (c < len) {
                        $out
                    }
                    __syncthreads();  // everyone has read carry before it moves on
                    if (threadIdx.x == BLOCK - 1) {
                        carry = scan_op(prefix, buf[in][BLOCK - 1]);
                    }
                }
            }
            """,
            ident=ident, pc=_pos(op, "c"), out=fill(out, ident=ident, p=_pos(op, "c")),
        )
        launch = f"    hs_scan_kernel<{threads}><<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), len);"
        kname, styles = "hs_scan_kernel", ("shared-memory",)
        hint = f"One block of {threads} threads per row: a Hillis-Steele scan per tile in double-buffered shared memory, carrying the running total between tiles."
    elif algo == "blelloch":
        if op.combine != "a + b":
            raise ValueError("the Blelloch template is written for sums")
        store = "scan_op(prefix, temp[$k])" if op.exclusive else "scan_op(prefix, scan_op(temp[$k], xr[$pk]))"
        kernel = fill(
            """
            // Work-efficient (Blelloch) exclusive scan of 2*BLOCK-element tiles: an up-sweep builds
            // partial sums in place, the root is cleared, and a down-sweep distributes prefixes.
            template <int BLOCK>
            __global__ void __launch_bounds__(BLOCK) blelloch_scan_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t len) {
                constexpr int TILE = 2 * BLOCK;
                __shared__ float temp[TILE];
                __shared__ float carry;
                const float* xr = x + static_cast<int64_t>(blockIdx.x) * len;
                float* yr = y + static_cast<int64_t>(blockIdx.x) * len;
                if (threadIdx.x == 0) {
                    carry = 0.0f;
                }
                const int ai = threadIdx.x;
                const int bi = threadIdx.x + BLOCK;
                for (int64_t base = 0; base < len; base += TILE) {
                    const int64_t ca = base + ai;
                    const int64_t cb = base + bi;
                    temp[ai] = ca < len ? xr[$pa] : 0.0f;
                    temp[bi] = cb < len ? xr[$pb] : 0.0f;
                    int offset = 1;
                    for (int d = TILE >> 1; d > 0; d >>= 1) {
                        __syncthreads();
                        if (threadIdx.x < d) {
                            const int i = offset * (2 * threadIdx.x + 1) - 1;
                            const int j = offset * (2 * threadIdx.x + 2) - 1;
                            temp[j] += temp[i];
                        }
                        offset <<= 1;
                    }
                    float tile_total = 0.0f;
                    if (threadIdx.x == 0) {
                        tile_total = temp[TILE - 1];
                        temp[TILE - 1] = 0.0f;
                    }
                    for (int d = 1; d < TILE; d <<= 1) {
                        offset >>= 1;
                        __syncthreads();
                        if (threadIdx.x < d) {
                            const int i = offset * (2 * threadIdx.x + 1) - 1;
                            const int j = offset * (2 * threadIdx.x + 2) - 1;
                            const float t = temp[i];
                            temp[i] = temp[j];
                            temp[j] += t;
                        }
                    }
                    __syncthreads();
                    const float prefix = carry;
                    if (ca < len) {
                        yr[$pa] = $store_a;
                    }
                    if (cb < len) {
                        yr[$pb] = $store_b;
                    }
                    __syncthreads();  // temp and carry are reused by the next tile
                    if (threadIdx.x == 0) {
                        carry = prefix + tile_total;
                    }
                }
            }
            """,
            pa=_pos(op, "ca"), pb=_pos(op, "cb"),
            store_a=fill(store, k="ai", pk=_pos(op, "ca")), store_b=fill(store, k="bi", pk=_pos(op, "cb")),
        )
        launch = f"    blelloch_scan_kernel<{threads}><<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), len);"
        kname, styles = "blelloch_scan_kernel", ("shared-memory", "tiled")
        hint = f"One block of {threads} threads per row scanning {2 * threads}-element tiles with the Blelloch up-sweep/down-sweep, carrying totals across tiles."
    else:
        if op.exclusive:
            out = "float excl = __shfl_up_sync(0xffffffffu, v, 1);\nif (lane == 0) {\n    excl = $ident;\n}\nif (c < len) {\n    yr[$p] = scan_op(scan_op(prefix, warp_prefix), excl);\n}"
        else:
            out = "if (c < len) {\n    yr[$p] = scan_op(scan_op(prefix, warp_prefix), v);\n}"
        kernel = fill(
            """
            // Inclusive scan across the 32 lanes of a warp with __shfl_up_sync.
            __device__ __forceinline__ float warp_scan(float v, int lane) {
            #pragma unroll
                for (int offset = 1; offset < 32; offset <<= 1) {
                    const float up = __shfl_up_sync(0xffffffffu, v, offset);
                    if (lane >= offset) {
                        v = scan_op(up, v);
                    }
                }
                return v;
            }

            // One block per row, tiles of blockDim.x elements: lanes scan within warps, warp 0 scans
            // the warp totals, and `carry` holds the scan of the row's earlier tiles.
            __global__ void __launch_bounds__($threads) warp_scan_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t len) {
                __shared__ float warp_totals[32];
                __shared__ float carry;
                const int lane = threadIdx.x & 31;
                const int warp = threadIdx.x >> 5;
                const int num_warps = blockDim.x >> 5;
                const float* xr = x + static_cast<int64_t>(blockIdx.x) * len;
                float* yr = y + static_cast<int64_t>(blockIdx.x) * len;
                if (threadIdx.x == 0) {
                    carry = $ident;
                }
                for (int64_t base = 0; base < len; base += blockDim.x) {
                    const int64_t c = base + threadIdx.x;
                    float v = c < len ? xr[$pc] : $ident;
                    v = warp_scan(v, lane);
                    if (lane == 31) {
                        warp_totals[warp] = v;
                    }
                    __syncthreads();
                    if (warp == 0) {
                        const float t = lane < num_warps ? warp_totals[lane] : $ident;
                        warp_totals[lane] = warp_scan(t, lane);
                    }
                    __syncthreads();
                    const float warp_prefix = warp > 0 ? warp_totals[warp - 1] : $ident;
                    const float prefix = carry;
                    $out
                    __syncthreads();  // carry and warp_totals are rewritten for the next tile
                    if (threadIdx.x == blockDim.x - 1) {
                        carry = scan_op(scan_op(prefix, warp_prefix), v);
                    }
                }
            }
            """,
            threads=threads, ident=ident, pc=_pos(op, "c"), out=fill(out, ident=ident, p=_pos(op, "c")),
        )
        launch = f"    warp_scan_kernel<<<static_cast<unsigned>(outer), {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), len);"
        kname, styles = "warp_scan_kernel", ("warp-shuffle",)
        hint = f"One block of {threads} threads per row: __shfl_up_sync scans inside warps, a second warp-level scan over the warp totals, and a carry between tiles."
    fn = f"{op.name}_cuda"
    body = launch + "\n" + host.launch_check(variant, kname)
    cuda = "\n\n".join([host.preamble(variant, "<cmath>"), _combine_fn(op), kernel, _host(fn, variant, body, True)])
    ext = f"{op.name}_scan_ext"
    return Spec(
        family=FAMILY, op=op.name, styles=styles, task=scan_task(op, shape, len(shape) - 1), cuda_source=cuda,
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, int64_t dim);", functions=(fn,), ext_name=ext,
        model_new=unary_model_new(ext, fn, with_dim=True), hint=hint, template=f"scan.row.{algo}",
        params={"shape": list(shape), "threads": threads},
    )


def column_spec(op_name: str, shape: tuple[int, ...], dim: int, threads: int, variant: int) -> Spec:
    """A scan along a non-innermost dim: one thread per (outer, inner) column, sequential."""
    op = OPS[op_name]
    if op.exclusive:
        step = "const float v = col[r * inner];\nout[r * inner] = acc;\nacc = scan_op(acc, v);"
    else:
        step = "acc = scan_op(acc, col[r * inner]);\nout[r * inner] = acc;"
    rng = "for (int64_t r = len - 1; r >= 0; --r)" if op.reverse else "for (int64_t r = 0; r < len; ++r)"
    kernel = fill(
        """
        // x viewed as (outer, len, inner): each thread scans one column sequentially. Threads of a
        // warp own neighbouring columns, so every step reads and writes consecutive addresses.
        __global__ void __launch_bounds__($threads) column_scan_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                       int64_t len, int64_t inner) {
            const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
            if (i >= inner) {
                return;
            }
            const int64_t offset = static_cast<int64_t>(blockIdx.y) * len * inner + i;
            const float* col = x + offset;
            float* out = y + offset;
            float acc = $ident;
            $rng {
                $step
            }
        }
        """,
        threads=threads, ident=op.identity, rng=rng, step=step,
    )
    launch = (
        f"    const dim3 blocks(static_cast<unsigned>((inner + {threads} - 1) / {threads}), static_cast<unsigned>(outer));\n"
        f"    column_scan_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), len, inner);\n"
        + host.launch_check(variant, "column_scan_kernel")
    )
    fn = f"{op.name}_cuda"
    cuda = "\n\n".join([host.preamble(variant, "<cmath>"), _combine_fn(op), kernel, _host(fn, variant, launch, False)])
    ext = f"{op.name}_column_ext"
    return Spec(
        family=FAMILY, op=op.name, styles=("guarded",), task=scan_task(op, shape, dim), cuda_source=cuda,
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, int64_t dim);", functions=(fn,), ext_name=ext,
        model_new=unary_model_new(ext, fn, with_dim=True),
        hint="One thread per column on a 2-D grid, scanning sequentially along the dimension with coalesced accesses.",
        template="scan.column", params={"shape": list(shape), "dim": dim, "threads": threads},
    )


# (op, algorithm, shape, threads)
_ROW_CONFIGS: tuple[tuple[str, str, tuple[int, ...], int], ...] = (
    ("cumsum", "hillis-steele", (16, 1000), 256),
    ("cumsum", "hillis-steele", (4, 6, 333), 128),
    ("cummax", "hillis-steele", (12, 1500), 256),
    ("exclusive_cumsum", "hillis-steele", (10, 777), 128),
    ("reverse_cumsum", "hillis-steele", (6, 2049), 512),
    ("logcumsumexp", "hillis-steele", (8, 500), 128),
    ("cumsum", "blelloch", (16, 2000), 256),
    ("exclusive_cumsum", "blelloch", (12, 1025), 128),
    ("cumsum", "blelloch", (4, 4099), 512),
    ("reverse_cumsum", "blelloch", (9, 999), 64),
    ("cumsum", "warp-shuffle", (32, 1111), 256),
    ("cumsum", "warp-shuffle", (200, 65), 96),
    ("cummax", "warp-shuffle", (16, 700), 128),
    ("exclusive_cumsum", "warp-shuffle", (20, 2500), 512),
    ("logcumsumexp", "warp-shuffle", (6, 1234), 256),
    ("cummin", "warp-shuffle", (10, 900), 256),
    ("reverse_cumsum", "warp-shuffle", (3, 5, 801), 128),
)

# (op, shape, dim, threads)
_COLUMN_CONFIGS: tuple[tuple[str, tuple[int, ...], int, int], ...] = (
    ("cumsum", (4, 100, 129), 1, 128),
    ("cummax", (150, 257), 0, 256),
    ("cumsum", (400, 100), 0, 64),
    ("exclusive_cumsum", (4, 200, 77), 1, 128),
    ("reverse_cumsum", (300, 150), 0, 128),
    ("cummin", (6, 123, 45), 1, 64),
)


def specs() -> list[Spec]:
    """All scan samples, in a fixed order."""
    out = [row_spec(op, algo, shape, threads, variant=i) for i, (op, algo, shape, threads) in enumerate(_ROW_CONFIGS)]
    out += [column_spec(op, shape, dim, threads, variant=i) for i, (op, shape, dim, threads) in enumerate(_COLUMN_CONFIGS)]
    return out
