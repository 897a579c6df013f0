"""Transpose templates: swap the last two dims (2-D, batched, 4-D), symmetrise, head permutes.

A transpose is pure data movement, so the question is which side of the copy coalesces:

- naive (`guarded`): one thread per element on a dim3 grid; reads coalesce, writes are strided;
- index walk (`grid-stride`): a 1-D grid-stride loop over output positions; writes coalesce;
- tiled (`tiled`, `shared-memory`): a TILE x TILE tile is read row-wise into shared memory and
  written back column-wise, so both sides coalesce; the tile is padded to TILE + 1 columns so
  the column-wise shared-memory reads hit 32 different banks; each thread moves TILE/BLOCK_ROWS
  elements; a grid-stride variant loops over tiles with a capped grid;
- head permute (`vectorised`): (B, H, S, D) -> (B, S, H, D) moves whole rows of D, as float4
  when D % 4 == 0 and the pointers are aligned, else as floats (same template, other type).

The batch (every leading dim) rides on blockIdx.z.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module

FAMILY = "transpose"


def _task(shape: tuple[int, ...], how: str) -> str:
    names = {2: ["rows", "cols"], 3: ["batch_size", "rows", "cols"], 4: ["batch_size", "channels", "height", "width"]}[len(shape)]
    expr = {
        "transpose": "torch.transpose(x, 0, 1).contiguous()",
        "t": "x.t().contiguous()",
        "last2": "x.transpose(-2, -1).contiguous()",
        "permute021": "x.permute(0, 2, 1).contiguous()",
    }[how]
    doc = {
        "transpose": "Transposes a matrix.", "t": "Returns the transpose of a 2-D matrix as a contiguous tensor.",
        "last2": "Swaps the last two dimensions of the input.",
        "permute021": "Permutes a (batch, rows, cols) tensor to (batch, cols, rows).",
    }[how]
    return task_module(
        doc=doc,
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {expr}",
        constants="\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True)),
        inputs=f"x = torch.randn({', '.join(names)})\nreturn [x]",
    )


def _model_new(ext: str, fn: str, args: str = "x") -> str:
    sig = ", ".join(f"{a}: torch.Tensor" for a in args.split(", "))
    call = ", ".join(f"{a}.contiguous()" for a in args.split(", "))
    return fill(
        """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, $sig) -> torch.Tensor:
                return $ext.$fn($call)
        """, ext=ext, fn=fn, sig=sig, call=call,
    )


def _host(fn: str, variant: int, launch: str, kname: str) -> str:
    return fill(
        """
        torch::Tensor $fn(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() >= 2, "x must have at least two dimensions");
            const int rows = static_cast<int>(x.size(-2));
            const int cols = static_cast<int>(x.size(-1));
            auto out_sizes = x.sizes().vec();
            std::swap(out_sizes[x.dim() - 2], out_sizes[x.dim() - 1]);
            auto y = torch::empty(out_sizes, x.options());
            if (y.numel() == 0) {
                return y;
            }
            const int batch = static_cast<int>(x.numel() / (static_cast<int64_t>(rows) * cols));
            $launch
        $check
            return y;
        }
        """, fn=fn, checks=host.input_checks(variant, "x"), launch=launch, check=host.launch_check(variant, kname),
    )


def _spec(op: str, styles: tuple[str, ...], task: str, kernel: str, launch: str, kname: str, hint: str,
          template: str, params: dict, variant: int, extra: tuple[str, ...] = ("<utility>",)) -> Spec:
    fn = f"{op}_cuda"
    ext = f"{op}_ext"
    return Spec(
        family=FAMILY, op=op, styles=styles, task=task,
        cuda_source="\n\n".join([host.preamble(variant, *extra), kernel, _host(fn, variant, launch, kname)]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x);", functions=(fn,), ext_name=ext, model_new=_model_new(ext, fn),
        hint=hint, template=template, params=params,
    )


_BATCH = "const int64_t plane = static_cast<int64_t>(rows) * cols;\nx += blockIdx.z * plane;\ny += blockIdx.z * plane;"


def naive_spec(shape: tuple[int, ...], how: str, block: tuple[int, int], variant: int) -> Spec:
    """One thread per element; coalesced reads, strided writes."""
    bx, by = block
    kernel = fill(
        """
        __global__ void __launch_bounds__($threads) transpose_naive_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                           int rows, int cols) {
            $batch
            const int col = blockIdx.x * blockDim.x + threadIdx.x;
            const int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < rows && col < cols) {
                y[static_cast<int64_t>(col) * rows + row] = x[static_cast<int64_t>(row) * cols + col];
            }
        }
        """, threads=bx * by, batch=_BATCH,
    )
    launch = (
        f"const dim3 threads({bx}, {by});\n"
        "const dim3 blocks((cols + threads.x - 1) / threads.x, (rows + threads.y - 1) / threads.y, batch);\n"
        "transpose_naive_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
    )
    return _spec(
        "transpose_naive", ("guarded",), _task(shape, how), kernel, launch, "transpose_naive_kernel",
        f"One thread per element on a dim3 grid of {bx}x{by} blocks (batch on blockIdx.z), guarding both edges.",
        "transpose.naive", {"shape": list(shape), "block": list(block)}, variant,
    )


def index_spec(shape: tuple[int, ...], how: str, threads: int, cap: int, variant: int) -> Spec:
    """Grid-stride loop over output positions; each thread derives the source index."""
    kernel = fill(
        """
        // Walk the output in order (coalesced writes) and read from the transposed position.
        __global__ void transpose_index_kernel(const float* __restrict__ x, float* __restrict__ y,
                                               int64_t total, int rows, int cols) {
            const int64_t plane = static_cast<int64_t>(rows) * cols;
            const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
                const int64_t b = i / plane;
                const int64_t rem = i - b * plane;
                const int64_t out_row = rem / rows;  // = input column
                const int64_t out_col = rem - out_row * rows;  // = input row
                y[i] = x[b * plane + out_col * cols + out_row];
            }
        }
        """
    )
    launch = (
        "const int64_t total = x.numel();\n"
        f"constexpr int threads = {threads};\n"
        + host.grid_stride_blocks("threads", "total", cap, indent=0)
        + "\ntranspose_index_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), total, rows, cols);"
    )
    return _spec(
        "transpose_index", ("grid-stride",), _task(shape, how), kernel, launch, "transpose_index_kernel",
        f"A grid-stride loop over output elements ({threads} threads per block, grid capped at {cap}) that computes each source index.",
        "transpose.index", {"shape": list(shape), "threads": threads, "cap": cap}, variant, extra=("<algorithm>", "<utility>"),
    )


_TILED = """
// Read a TILE x TILE tile row-wise, write it back column-wise: both global accesses coalesce.
// The +1 column of padding puts tile[k][c] and tile[k+1][c] in different banks, so the
// column-wise reads in the second half are conflict-free.
template <int TILE, int BLOCK_ROWS>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_tiled_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                            int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    $batch
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (col < cols && row + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = x[static_cast<int64_t>(row + j) * cols + col];
        }
    }
    __syncthreads();
    col = blockIdx.y * TILE + threadIdx.x;  // output column = input row
    row = blockIdx.x * TILE + threadIdx.y;  // output row = input column
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (col < rows && row + j < cols) {
            y[static_cast<int64_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
"""


def tiled_spec(shape: tuple[int, ...], how: str, tile: int, block_rows: int, variant: int) -> Spec:
    """Shared-memory tiled transpose with a padded tile."""
    kernel = fill(_TILED, batch=_BATCH)
    launch = (
        f"constexpr int kTile = {tile};\n"
        f"constexpr int kBlockRows = {block_rows};\n"
        "const dim3 threads(kTile, kBlockRows);\n"
        "const dim3 blocks((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile, batch);\n"
        "transpose_tiled_kernel<kTile, kBlockRows><<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
    )
    return _spec(
        "transpose_tiled", ("tiled", "shared-memory"), _task(shape, how), kernel, launch, "transpose_tiled_kernel",
        f"Stage {tile}x{tile} tiles in shared memory padded to {tile + 1} columns; {tile}x{block_rows} threads each move {tile // block_rows} elements.",
        "transpose.tiled", {"shape": list(shape), "tile": tile, "block_rows": block_rows}, variant,
    )


def tiled_loop_spec(shape: tuple[int, int], tile: int, block_rows: int, cap: int, variant: int) -> Spec:
    """Tiled transpose where a capped grid strides over the tiles."""
    kernel = fill(
        """
        template <int TILE, int BLOCK_ROWS>
        __global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_tile_loop_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                                        int rows, int cols) {
            __shared__ float tile[TILE][TILE + 1];  // +1 column: conflict-free column reads
            const int tiles_x = (cols + TILE - 1) / TILE;
            const int tiles_y = (rows + TILE - 1) / TILE;
            for (int t = blockIdx.x; t < tiles_x * tiles_y; t += gridDim.x) {
                const int tx = t % tiles_x;
                const int ty = t / tiles_x;
                int col = tx * TILE + threadIdx.x;
                int row = ty * TILE + threadIdx.y;
        #pragma unroll
                for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                    if (col < cols && row + j < rows) {
                        tile[threadIdx.y + j][threadIdx.x] = x[static_cast<int64_t>(row + j) * cols + col];
                    }
                }
                __syncthreads();
                col = ty * TILE + threadIdx.x;
                row = tx * TILE + threadIdx.y;
        #pragma unroll
                for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                    if (col < rows && row + j < cols) {
                        y[static_cast<int64_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
                    }
                }
                __syncthreads();  // the next tile overwrites shared memory
            }
        }
        """
    )
    launch = (
        f"TORCH_CHECK(batch == 1, \"this kernel transposes a single matrix\");\n"
        f"constexpr int kTile = {tile};\n"
        f"constexpr int kBlockRows = {block_rows};\n"
        "const int64_t num_tiles = static_cast<int64_t>((cols + kTile - 1) / kTile) * ((rows + kTile - 1) / kTile);\n"
        f"const int blocks = static_cast<int>(std::min<int64_t>(num_tiles, {cap}));\n"
        "transpose_tile_loop_kernel<kTile, kBlockRows><<<blocks, dim3(kTile, kBlockRows)>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
    )
    return _spec(
        "transpose_tile_loop", ("tiled", "shared-memory", "grid-stride"), _task(shape, "t"), kernel, launch,
        "transpose_tile_loop_kernel",
        f"Padded {tile}x{tile} shared-memory tiles, with a grid of at most {cap} blocks striding over the tiles.",
        "transpose.tile_loop", {"shape": list(shape), "tile": tile, "block_rows": block_rows, "cap": cap}, variant,
        extra=("<algorithm>", "<utility>"),
    )


def symmetrize_spec(n: int, tile: int, block_rows: int, variant: int) -> Spec:
    """0.5 * (x + x^T) of a square matrix: the transposed operand comes from a shared tile."""
    kernel = fill(
        """
        // out[i][j] = 0.5 * (x[i][j] + x[j][i]). x[j][i] for this block's tile lives in the mirrored
        // tile, which is loaded row-wise (coalesced) and read column-wise from padded shared memory.
        template <int TILE, int BLOCK_ROWS>
        __global__ void __launch_bounds__(TILE * BLOCK_ROWS) symmetrize_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
            __shared__ float mirror[TILE][TILE + 1];
            const int mirror_row = blockIdx.x * TILE + threadIdx.y;
            const int mirror_col = blockIdx.y * TILE + threadIdx.x;
        #pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                if (mirror_row + j < n && mirror_col < n) {
                    mirror[threadIdx.y + j][threadIdx.x] = x[static_cast<int64_t>(mirror_row + j) * n + mirror_col];
                }
            }
            __syncthreads();
            const int col = blockIdx.x * TILE + threadIdx.x;
            const int row = blockIdx.y * TILE + threadIdx.y;
        #pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                if (row + j < n && col < n) {
                    const int64_t i = static_cast<int64_t>(row + j) * n + col;
                    y[i] = 0.5f * (x[i] + mirror[threadIdx.x][threadIdx.y + j]);
                }
            }
        }
        """
    )
    host_fn = fill(
        """
        torch::Tensor symmetrize_cuda(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() == 2 && x.size(0) == x.size(1), "x must be a square matrix");
            const int n = static_cast<int>(x.size(0));
            auto y = torch::empty_like(x);
            if (n == 0) {
                return y;
            }
            constexpr int kTile = $tile;
            constexpr int kBlockRows = $block_rows;
            const dim3 blocks((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
            symmetrize_kernel<kTile, kBlockRows><<<blocks, dim3(kTile, kBlockRows)>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
        $check
            return y;
        }
        """, checks=host.input_checks(variant, "x"), tile=tile, block_rows=block_rows,
        check=host.launch_check(variant, "symmetrize_kernel"),
    )
    task = task_module(
        doc="Returns the symmetric part of a square matrix, (x + x^T) / 2.",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return 0.5 * (x + x.t())",
        constants=f"n = {n}", inputs="x = torch.randn(n, n)\nreturn [x]",
    )
    return Spec(
        family=FAMILY, op="symmetrize", styles=("tiled", "shared-memory"), task=task,
        cuda_source="\n\n".join([host.preamble(variant), kernel, host_fn]),
        cpp_source="torch::Tensor symmetrize_cuda(torch::Tensor x);", functions=("symmetrize_cuda",),
        ext_name="symmetrize_ext", model_new=_model_new("symmetrize_ext", "symmetrize_cuda"),
        hint=f"Load the mirrored {tile}x{tile} tile into padded shared memory so both operands are read coalesced.",
        template="transpose.symmetrize", params={"n": n, "tile": tile, "block_rows": block_rows},
    )


def transpose_add_spec(rows: int, cols: int, tile: int, block_rows: int, variant: int) -> Spec:
    """y = x^T + z with x (rows, cols) and z (cols, rows): the transposed read goes through smem."""
    kernel = fill(
        """
        template <int TILE, int BLOCK_ROWS>
        __global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_add_kernel(const float* __restrict__ x, const float* __restrict__ z,
                                                                                  float* __restrict__ y, int rows, int cols) {
            __shared__ float tile[TILE][TILE + 1];  // +1 column: conflict-free column reads
            int col = blockIdx.x * TILE + threadIdx.x;
            int row = blockIdx.y * TILE + threadIdx.y;
        #pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                if (col < cols && row + j < rows) {
                    tile[threadIdx.y + j][threadIdx.x] = x[static_cast<int64_t>(row + j) * cols + col];
                }
            }
            __syncthreads();
            col = blockIdx.y * TILE + threadIdx.x;
            row = blockIdx.x * TILE + threadIdx.y;
        #pragma unroll
            for (int j = 0; j < TILE; j += BLOCK_ROWS) {
                if (col < rows && row + j < cols) {
                    const int64_t i = static_cast<int64_t>(row + j) * rows + col;
                    y[i] = tile[threadIdx.x][threadIdx.y + j] + z[i];
                }
            }
        }
        """
    )
    host_fn = fill(
        """
        torch::Tensor transpose_add_cuda(torch::Tensor x, torch::Tensor z) {
        $checks
            TORCH_CHECK(x.dim() == 2 && z.dim() == 2 && z.size(0) == x.size(1) && z.size(1) == x.size(0), "expected x (R, C) and z (C, R)");
            const int rows = static_cast<int>(x.size(0));
            const int cols = static_cast<int>(x.size(1));
            auto y = torch::empty_like(z);
            if (y.numel() == 0) {
                return y;
            }
            constexpr int kTile = $tile;
            constexpr int kBlockRows = $block_rows;
            const dim3 blocks((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
            transpose_add_kernel<kTile, kBlockRows><<<blocks, dim3(kTile, kBlockRows)>>>(x.data_ptr<float>(), z.data_ptr<float>(),
                                                                                        y.data_ptr<float>(), rows, cols);
        $check
            return y;
        }
        """, checks=host.input_checks(variant, "x", "z"), tile=tile, block_rows=block_rows,
        check=host.launch_check(variant, "transpose_add_kernel"),
    )
    task = task_module(
        doc="Adds a matrix to the transpose of another: x.T + z.",
        forward="def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:\n    return x.t() + z",
        constants=f"rows = {rows}\ncols = {cols}", inputs="x = torch.randn(rows, cols)\nz = torch.randn(cols, rows)\nreturn [x, z]",
    )
    return Spec(
        family=FAMILY, op="transpose_add", styles=("tiled", "shared-memory"), task=task,
        cuda_source="\n\n".join([host.preamble(variant), kernel, host_fn]),
        cpp_source="torch::Tensor transpose_add_cuda(torch::Tensor x, torch::Tensor z);", functions=("transpose_add_cuda",),
        ext_name="transpose_add_ext", model_new=_model_new("transpose_add_ext", "transpose_add_cuda", "x, z"),
        hint=f"Fuse the transpose into the add: stage {tile}x{tile} tiles of x in padded shared memory.",
        template="transpose.transpose_add", params={"rows": rows, "cols": cols, "tile": tile, "block_rows": block_rows},
    )


def heads_spec(shape: tuple[int, int, int, int], threads: int, variant: int) -> Spec:
    """(B, H, S, D) -> (B, S, H, D), moving rows of D as float4 when aligned."""
    kernel = fill(
        """
        // Each unit is one VecT (float4 or float) of a D-long row; rows move whole, so only the
        // row index is permuted: (b, h, s) -> (b, s, h).
        template <typename VecT>
        __global__ void __launch_bounds__($threads) split_heads_kernel(const VecT* __restrict__ x, VecT* __restrict__ y,
                                                                       int heads, int seq, int units_per_row, int64_t total_units) {
            const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total_units; i += stride) {
                const int u = static_cast<int>(i % units_per_row);
                const int64_t r = i / units_per_row;  // input row index over (b, h, s)
                const int s = static_cast<int>(r % seq);
                const int h = static_cast<int>((r / seq) % heads);
                const int64_t b = r / (static_cast<int64_t>(seq) * heads);
                const int64_t out_row = (b * seq + s) * heads + h;
                y[out_row * units_per_row + u] = x[i];
            }
        }
        """, threads=threads,
    )
    host_fn = fill(
        """
        torch::Tensor split_heads_cuda(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() == 4, "x must be (batch, heads, seq, head_dim)");
            const int heads = static_cast<int>(x.size(1));
            const int seq = static_cast<int>(x.size(2));
            const int head_dim = static_cast<int>(x.size(3));
            auto y = torch::empty({x.size(0), x.size(2), x.size(1), x.size(3)}, x.options());
            if (y.numel() == 0) {
                return y;
            }
            constexpr int threads = $threads;
            const bool vec4 = head_dim % 4 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                              reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;
            if (vec4) {
                const int units = head_dim / 4;
                const int64_t total = x.numel() / 4;
                const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 1024));
                split_heads_kernel<float4><<<blocks, threads>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()),
                                                                reinterpret_cast<float4*>(y.data_ptr<float>()), heads, seq, units, total);
            } else {
                // Scalar fallback for odd head sizes or unaligned views.
                const int64_t total = x.numel();
                const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 1024));
                split_heads_kernel<float><<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), heads, seq, head_dim, total);
            }
        $check
            return y;
        }
        """, checks=host.input_checks(variant, "x"), threads=threads, check=host.launch_check(variant, "split_heads_kernel"),
    )
    b, h, s, d = shape
    task = task_module(
        doc="Moves the head dimension behind the sequence dimension: (B, H, S, D) -> (B, S, H, D).",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return x.permute(0, 2, 1, 3).contiguous()",
        constants=f"batch_size = {b}\nheads = {h}\nseq_len = {s}\nhead_dim = {d}",
        inputs="x = torch.randn(batch_size, heads, seq_len, head_dim)\nreturn [x]",
    )
    return Spec(
        family=FAMILY, op="split_heads", styles=("vectorised", "grid-stride"), task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<algorithm>", "<cstdint>"), kernel, host_fn]),
        cpp_source="torch::Tensor split_heads_cuda(torch::Tensor x);", functions=("split_heads_cuda",),
        ext_name="split_heads_ext", model_new=_model_new("split_heads_ext", "split_heads_cuda"),
        hint="Copy whole head_dim rows as float4 (template on the vector type, with a float fallback) in a grid-stride loop.",
        template="transpose.split_heads", params={"shape": list(shape), "threads": threads},
    )


def specs() -> list[Spec]:
    """All transpose samples, in a fixed order."""
    return [
        naive_spec((67, 129), "transpose", (32, 8), variant=0),
        naive_spec((300, 45), "t", (16, 16), variant=1),
        naive_spec((1000, 33), "transpose", (32, 4), variant=2),
        naive_spec((4, 61, 97), "permute021", (32, 8), variant=3),
        naive_spec((2, 3, 50, 70), "last2", (16, 8), variant=4),
        index_spec((123, 77), "t", 256, 16, variant=5),
        index_spec((5, 40, 203), "permute021", 128, 64, variant=6),
        tiled_spec((129, 67), "transpose", 32, 8, variant=7),
        tiled_spec((257, 200), "t", 32, 8, variant=8),
        tiled_spec((99, 100), "transpose", 16, 16, variant=9),
        tiled_spec((500, 31), "t", 16, 4, variant=10),
        tiled_spec((45, 1030), "transpose", 32, 4, variant=11),
        tiled_spec((4, 61, 97), "permute021", 32, 8, variant=12),
        tiled_spec((3, 100, 33), "last2", 16, 8, variant=13),
        tiled_spec((2, 4, 33, 65), "last2", 32, 8, variant=14),
        tiled_loop_spec((200, 257), 32, 8, 16, variant=15),
        tiled_loop_spec((123, 456), 16, 8, 24, variant=16),
        symmetrize_spec(129, 32, 8, variant=17),
        symmetrize_spec(200, 16, 16, variant=18),
        transpose_add_spec(100, 130, 32, 8, variant=19),
        transpose_add_spec(77, 301, 16, 4, variant=20),
        heads_spec((2, 4, 33, 64), 256, variant=21),
        heads_spec((3, 8, 17, 32), 128, variant=22),
        heads_spec((2, 5, 19, 30), 256, variant=23),
        heads_spec((1, 12, 50, 16), 512, variant=24),
    ]
