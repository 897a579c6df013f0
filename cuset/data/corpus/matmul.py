"""Matrix-multiply templates: naive, shared-memory tiled, register-blocked, batched, matrix-vector.

- naive (`guarded`): one thread per output on a 2-D grid (dim3), a K loop from global memory;
- tiled (`tiled`, `shared-memory`): TILE x TILE blocks stage A and B tiles in shared memory,
  zero-filling out-of-range loads so M, N, K need not be multiples of TILE; layouts A @ B,
  A @ B^T (staged transposed into a padded tile) and A^T @ B, optionally batched on blockIdx.z;
- register-blocked: each thread accumulates TM outputs of a column in registers
  (BM x BN block tile, BK-deep shared-memory slabs);
- matrix-vector and skinny products live in `matvec`.

Shapes are deliberately not multiples of the tile or warp sizes.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module

FAMILY = "matmul"

_LAYOUT_EXPR = {"nn": "torch.matmul(A, B)", "nt": "torch.matmul(A, B.T)", "tn": "torch.matmul(A.T, B)"}
_LAYOUT_DOC = {
    "nn": "a single matrix multiplication C = A @ B",
    "nt": "a matrix multiplication with a transposed right operand, C = A @ B^T",
    "tn": "a matrix multiplication with a transposed left operand, C = A^T @ B",
}


# Batched kernels move the three base pointers to this block's matrix first.
_BATCH_OFFSETS = """const int64_t b = blockIdx.z;
A += b * static_cast<int64_t>(M) * K;
B += b * static_cast<int64_t>(K) * N;
C += b * static_cast<int64_t>(M) * N;"""


def matmul_task(layout: str, m: int, k: int, n: int, batch: int = 0) -> str:
    a_shape = {"nn": "M, K", "nt": "M, K", "tn": "K, M"}[layout]
    b_shape = {"nn": "K, N", "nt": "N, K", "tn": "K, N"}[layout]
    expr = _LAYOUT_EXPR[layout]
    doc = _LAYOUT_DOC[layout]
    consts = f"M = {m}\nK = {k}\nN = {n}"
    if batch:
        expr = "torch.bmm(A, B)"
        doc = "a batched matrix multiplication C[b] = A[b] @ B[b]"
        consts = f"batch_size = {batch}\n" + consts
        a_shape, b_shape = "batch_size, M, K", "batch_size, K, N"
    return task_module(
        doc=f"Simple model that performs {doc}.",
        forward=f"def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:\n    return {expr}",
        constants=consts,
        inputs=f"A = torch.randn({a_shape})\nB = torch.randn({b_shape})\nreturn [A, B]",
    )


def matmul_model_new(ext: str, fn: str) -> str:
    return fill(
        """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
                return $ext.$fn(A.contiguous(), B.contiguous())
        """, ext=ext, fn=fn,
    )


def _shape_checks(layout: str, batch: bool) -> str:
    if batch:
        return fill(
            """
            TORCH_CHECK(A.dim() == 3 && B.dim() == 3 && A.size(0) == B.size(0), "A and B must be (batch, M, K) and (batch, K, N)");
            TORCH_CHECK(A.size(2) == B.size(1), "inner dimensions must match");
            const int batch = static_cast<int>(A.size(0));
            const int M = static_cast<int>(A.size(1));
            const int K = static_cast<int>(A.size(2));
            const int N = static_cast<int>(B.size(2));
            auto C = torch::empty({batch, M, N}, A.options());
            """
        )
    m, k, kb, n = {
        "nn": ("A.size(0)", "A.size(1)", "B.size(0)", "B.size(1)"),
        "nt": ("A.size(0)", "A.size(1)", "B.size(1)", "B.size(0)"),
        "tn": ("A.size(1)", "A.size(0)", "B.size(0)", "B.size(1)"),
    }[layout]
    return fill(
        """
        TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "A and B must be 2-D");
        TORCH_CHECK($k == $kb, "inner dimensions must match");
        const int M = static_cast<int>($m);
        const int K = static_cast<int>($k);
        const int N = static_cast<int>($n);
        auto C = torch::empty({M, N}, A.options());
        """, m=m, k=k, kb=kb, n=n,
    )


def matmul_host(fn: str, layout: str, batch: bool, launch: str, kname: str, variant: int) -> str:
    return fill(
        """
        torch::Tensor $fn(torch::Tensor A, torch::Tensor B) {
        $checks
            $shape
            if (C.numel() == 0) {
                return C;
            }
            if (K == 0) {
                return C.zero_();
            }
            $launch
        $check
            return C;
        }
        """,
        fn=fn, checks=host.input_checks(variant, "A", "B"), shape=_shape_checks(layout, batch), launch=launch,
        check=host.launch_check(variant, kname),
    )


def naive_spec(m: int, k: int, n: int, block: tuple[int, int], variant: int, batch: int = 0) -> Spec:
    """One thread per output element, K loop straight from global memory."""
    bx, by = block
    zoff = _BATCH_OFFSETS if batch else ""
    kernel = fill(
        """
        // threadIdx.x walks columns so a warp reads consecutive B elements and writes consecutive C.
        __global__ void __launch_bounds__($threads) matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                                        float* __restrict__ C, int M, int N, int K) {
            $zoff
            const int row = blockIdx.y * blockDim.y + threadIdx.y;
            const int col = blockIdx.x * blockDim.x + threadIdx.x;
            if (row < M && col < N) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) {
                    acc += A[static_cast<int64_t>(row) * K + k] * B[static_cast<int64_t>(k) * N + col];
                }
                C[static_cast<int64_t>(row) * N + col] = acc;
            }
        }
        """,
        threads=bx * by, zoff=zoff,
    )
    z = ", batch" if batch else ""
    launch = (
        f"const dim3 threads({bx}, {by});\n"
        f"const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y{z});\n"
        "matmul_naive_kernel<<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);"
    )
    fn = "bmm_naive_cuda" if batch else "matmul_naive_cuda"
    ext = fn.replace("_cuda", "_ext")
    return Spec(
        family=FAMILY, op="bmm" if batch else "matmul", styles=("guarded",), task=matmul_task("nn", m, k, n, batch),
        cuda_source="\n\n".join([host.preamble(variant), kernel, matmul_host(fn, "nn", bool(batch), launch, "matmul_naive_kernel", variant)]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor A, torch::Tensor B);", functions=(fn,), ext_name=ext,
        model_new=matmul_model_new(ext, fn),
        hint=f"One thread per output element on a 2-D grid of {bx}x{by} blocks{', batch on blockIdx.z' if batch else ''}, guarded against the matrix edges.",
        template="matmul.naive", params={"M": m, "K": k, "N": n, "block": list(block), "batch": batch},
    )


def tiled_spec(m: int, k: int, n: int, tile: int, layout: str, variant: int, batch: int = 0) -> Spec:
    """Classic shared-memory tiling; layout nn | nt | tn, optionally batched on blockIdx.z."""
    if layout == "nn":
        loads = (
            "const int a_col = t + threadIdx.x;\n"
            "const int b_row = t + threadIdx.y;\n"
            "As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[static_cast<int64_t>(row) * K + a_col] : 0.0f;\n"
            "Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[static_cast<int64_t>(b_row) * N + col] : 0.0f;"
        )
        decl = "__shared__ float As[TILE][TILE];\n__shared__ float Bs[TILE][TILE];"
        note = ""
    elif layout == "nt":
        loads = (
            "const int a_col = t + threadIdx.x;\n"
            "As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[static_cast<int64_t>(row) * K + a_col] : 0.0f;\n"
            "// B is (N, K): read a row of B along K (coalesced) and store it transposed.\n"
            "const int b_n = blockIdx.x * TILE + threadIdx.y;\n"
            "Bs[threadIdx.x][threadIdx.y] = (b_n < N && a_col < K) ? B[static_cast<int64_t>(b_n) * K + a_col] : 0.0f;"
        )
        decl = "__shared__ float As[TILE][TILE];\n__shared__ float Bs[TILE][TILE + 1];  // +1: the transposed store would hit one bank"
        note = " B is stored transposed into a padded tile."
    else:
        loads = (
            "// A is (K, M): read along M (coalesced) and store transposed so As[i][k] = A[k][row_i].\n"
            "const int a_m = blockIdx.y * TILE + threadIdx.x;\n"
            "const int a_k = t + threadIdx.y;\n"
            "As[threadIdx.x][threadIdx.y] = (a_m < M && a_k < K) ? A[static_cast<int64_t>(a_k) * M + a_m] : 0.0f;\n"
            "const int b_row = t + threadIdx.y;\n"
            "Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[static_cast<int64_t>(b_row) * N + col] : 0.0f;"
        )
        decl = "__shared__ float As[TILE][TILE + 1];  // +1: the transposed store would hit one bank\n__shared__ float Bs[TILE][TILE];"
        note = " A is stored transposed into a padded tile."
    zoff = _BATCH_OFFSETS if batch else ""
    kernel = fill(
        """
        template <int TILE>
        __global__ void __launch_bounds__(TILE * TILE) matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                                           float* __restrict__ C, int M, int N, int K) {
            $decl
            $zoff
            const int row = blockIdx.y * TILE + threadIdx.y;
            const int col = blockIdx.x * TILE + threadIdx.x;
            float acc = 0.0f;
            for (int t = 0; t < K; t += TILE) {
                // Out-of-range elements load as zero, so the inner loop needs no bounds checks.
                $loads
                __syncthreads();
        #pragma unroll
                for (int k = 0; k < TILE; ++k) {
                    acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
                }
                __syncthreads();
            }
            if (row < M && col < N) {
                C[static_cast<int64_t>(row) * N + col] = acc;
            }
        }
        """,
        decl=decl, zoff=zoff, loads=loads,
    )
    z = ", batch" if batch else ""
    launch = (
        f"constexpr int kTile = {tile};\n"
        "const dim3 threads(kTile, kTile);\n"
        f"const dim3 blocks((N + kTile - 1) / kTile, (M + kTile - 1) / kTile{z});\n"
        "matmul_tiled_kernel<kTile><<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);"
    )
    op = "bmm" if batch else {"nn": "matmul", "nt": "matmul_bt", "tn": "matmul_at"}[layout]
    fn = f"{op}_tiled_cuda"
    ext = f"{op}_tiled_ext"
    return Spec(
        family=FAMILY, op=op, styles=("tiled", "shared-memory"), task=matmul_task(layout, m, k, n, batch),
        cuda_source="\n\n".join([host.preamble(variant), kernel, matmul_host(fn, layout, bool(batch), launch, "matmul_tiled_kernel", variant)]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor A, torch::Tensor B);", functions=(fn,), ext_name=ext,
        model_new=matmul_model_new(ext, fn),
        hint=f"Tile the product in {tile}x{tile} shared-memory tiles with zero-filled edges.{note}",
        template=f"matmul.tiled.{layout}{'.batched' if batch else ''}",
        params={"M": m, "K": k, "N": n, "tile": tile, "layout": layout, "batch": batch},
    )


def blocktile_spec(m: int, k: int, n: int, bm: int, bk: int, tm: int, variant: int) -> Spec:
    """Register blocking: each thread computes TM outputs of one column (BM x BN tile per block)."""
    bn = bm
    threads = bm * bn // tm
    kernel = fill(
        """
        // Block tile BM x BN, K slabs of BK. Each thread owns TM consecutive rows of one column and
        // keeps their sums in registers, so each Bs value loaded from shared memory is used TM times.
        template <int BM, int BN, int BK, int TM>
        __global__ void __launch_bounds__((BM * BN) / TM) matmul_blocktile_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                                                  float* __restrict__ C, int M, int N, int K) {
            static_assert((BM * BN) / TM == BM * BK && BM * BK == BK * BN, "one A and one B element per thread per slab");
            __shared__ float As[BM * BK];
            __shared__ float Bs[BK * BN];
            const int block_row = blockIdx.y * BM;
            const int block_col = blockIdx.x * BN;
            const int thread_col = threadIdx.x % BN;
            const int thread_row = threadIdx.x / BN;
            const int a_row = threadIdx.x / BK;
            const int a_col = threadIdx.x % BK;
            const int b_row = threadIdx.x / BN;
            const int b_col = threadIdx.x % BN;
            float acc[TM] = {0.0f};
            for (int t = 0; t < K; t += BK) {
                const int ar = block_row + a_row;
                const int ac = t + a_col;
                As[a_row * BK + a_col] = (ar < M && ac < K) ? A[static_cast<int64_t>(ar) * K + ac] : 0.0f;
                const int br = t + b_row;
                const int bc = block_col + b_col;
                Bs[b_row * BN + b_col] = (br < K && bc < N) ? B[static_cast<int64_t>(br) * N + bc] : 0.0f;
                __syncthreads();
                for (int k = 0; k < BK; ++k) {
                    const float b = Bs[k * BN + thread_col];
        #pragma unroll
                    for (int i = 0; i < TM; ++i) {
                        acc[i] += As[(thread_row * TM + i) * BK + k] * b;
                    }
                }
                __syncthreads();
            }
            const int col = block_col + thread_col;
        #pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int row = block_row + thread_row * TM + i;
                if (row < M && col < N) {
                    C[static_cast<int64_t>(row) * N + col] = acc[i];
                }
            }
        }
        """
    )
    launch = (
        f"constexpr int BM = {bm}, BN = {bn}, BK = {bk}, TM = {tm};\n"
        "const dim3 blocks((N + BN - 1) / BN, (M + BM - 1) / BM);\n"
        "matmul_blocktile_kernel<BM, BN, BK, TM><<<blocks, (BM * BN) / TM>>>(A.data_ptr<float>(), B.data_ptr<float>(),\n"
        "                                                                  C.data_ptr<float>(), M, N, K);"
    )
    fn = "matmul_blocktile_cuda"
    return Spec(
        family=FAMILY, op="matmul_blocktile", styles=("tiled", "shared-memory"), task=matmul_task("nn", m, k, n),
        cuda_source="\n\n".join([host.preamble(variant), kernel, matmul_host(fn, "nn", False, launch, "matmul_blocktile_kernel", variant)]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor A, torch::Tensor B);", functions=(fn,), ext_name="matmul_blocktile_ext",
        model_new=matmul_model_new("matmul_blocktile_ext", fn),
        hint=f"{bm}x{bn} block tiles with {bk}-deep shared-memory slabs; each of the {threads} threads accumulates {tm} outputs in registers.",
        template="matmul.blocktile", params={"M": m, "K": k, "N": n, "BM": bm, "BK": bk, "TM": tm},
    )


def specs() -> list[Spec]:
    """All matmul samples, in a fixed order."""
    return [
        naive_spec(67, 93, 45, (16, 16), variant=0),
        naive_spec(128, 64, 200, (32, 8), variant=1),
        naive_spec(33, 257, 71, (16, 8), variant=2),
        naive_spec(37, 50, 29, (8, 8), variant=3, batch=4),
        tiled_spec(97, 131, 75, 16, "nn", variant=4),
        tiled_spec(150, 200, 130, 32, "nn", variant=5),
        tiled_spec(41, 77, 53, 8, "nn", variant=6),
        tiled_spec(256, 100, 257, 16, "nn", variant=7),
        tiled_spec(64, 120, 90, 16, "nt", variant=8),
        tiled_spec(100, 257, 64, 32, "nt", variant=9),
        tiled_spec(70, 80, 60, 16, "tn", variant=10),
        tiled_spec(45, 99, 31, 8, "tn", variant=11),
        tiled_spec(33, 65, 47, 16, "nn", variant=12, batch=8),
        tiled_spec(70, 30, 50, 8, "nn", variant=13, batch=3),
        blocktile_spec(200, 150, 190, 64, 8, 8, variant=14),
        blocktile_spec(90, 77, 111, 32, 8, 4, variant=15),
        blocktile_spec(129, 256, 65, 64, 8, 8, variant=16),
    ]
