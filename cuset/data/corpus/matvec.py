"""Matrix-vector and skinny-matrix templates (matmul family).

- A (M, K) @ B (K, 1): one warp per row reduced with `__shfl_down_sync` (optionally with float4
  loads and a scalar tail), or one block per row with a shared-memory tree;
- a few rows times a wide matrix: one thread per output column, the row on blockIdx.y, so
  consecutive threads read consecutive columns of B.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module
from cuset.data.corpus.matmul import FAMILY, matmul_host, matmul_model_new, matmul_task


def _mv_task(m: int, k: int) -> str:
    return task_module(
        doc="Simple model that performs matrix-vector multiplication (C = A * B) with B of shape (K, 1).",
        forward="def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:\n    return torch.matmul(A, B)",
        constants=f"M = {m}\nK = {k}",
        inputs="A = torch.randn(M, K)\nB = torch.randn(K, 1)\nreturn [A, B]",
    )


def matvec_spec(m: int, k: int, style: str, threads: int, variant: int) -> Spec:
    """A (M, K) @ B (K, 1). style: warp-shuffle | vectorised | shared-memory."""
    if style == "shared-memory":
        kernel = fill(
            """
            // One block per row: strided partial dot products, then a shared-memory tree.
            template <int BLOCK>
            __global__ void __launch_bounds__(BLOCK) matvec_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                                   float* __restrict__ y, int M, int K) {
                __shared__ float sdata[BLOCK];
                const float* a_row = A + static_cast<int64_t>(blockIdx.x) * K;
                float acc = 0.0f;
                for (int k = threadIdx.x; k < K; k += BLOCK) {
                    acc += a_row[k] * x[k];
                }
                sdata[threadIdx.x] = acc;
                __syncthreads();
            #pragma unroll
                for (int s = BLOCK / 2; s > 0; s >>= 1) {
                    if (threadIdx.x < s) {
                        sdata[threadIdx.x] += sdata[threadIdx.x + s];
                    }
                    __syncthreads();
                }
                if (threadIdx.x == 0) {
                    y[blockIdx.x] = sdata[0];
                }
            }
            """
        )
        launch = f"matvec_kernel<{threads}><<<M, {threads}>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, K);"
        styles: tuple[str, ...] = ("shared-memory",)
        hint = f"One block of {threads} threads per row of A with a shared-memory tree reduction."
    else:
        vec = style == "vectorised"
        body = (
            fill(
                """
                // float4 path when every row starts 16-byte aligned (aligned base, K % 4 == 0).
                const int k_vec = aligned ? K / 4 : 0;
                const float4* a4 = reinterpret_cast<const float4*>(a_row);
                const float4* x4 = reinterpret_cast<const float4*>(x);
                for (int i = lane; i < k_vec; i += 32) {
                    const float4 a = a4[i];
                    const float4 b = x4[i];
                    acc += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
                }
                for (int k = k_vec * 4 + lane; k < K; k += 32) {
                    acc += a_row[k] * x[k];
                }
                """
            )
            if vec
            else "for (int k = lane; k < K; k += 32) {\n    acc += a_row[k] * x[k];\n}"
        )
        kernel = fill(
            """
            constexpr int kWarpsPerBlock = $warps;

            // One warp per row of A: lanes stride along K, then __shfl_down_sync sums the lanes.
            __global__ void __launch_bounds__(kWarpsPerBlock * 32) matvec_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                                                 float* __restrict__ y, int M, int K$aligned_param) {
                const int lane = threadIdx.x & 31;
                const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
                if (row >= M) {
                    return;
                }
                const float* a_row = A + static_cast<int64_t>(row) * K;
                float acc = 0.0f;
                $body
            #pragma unroll
                for (int offset = 16; offset > 0; offset >>= 1) {
                    acc += __shfl_down_sync(0xffffffffu, acc, offset);
                }
                if (lane == 0) {
                    y[row] = acc;
                }
            }
            """,
            warps=threads // 32, aligned_param=", bool aligned" if vec else "", body=body,
        )
        aligned = (
            "const bool aligned = reinterpret_cast<uintptr_t>(A.data_ptr<float>()) % 16 == 0 &&\n"
            "                     reinterpret_cast<uintptr_t>(B.data_ptr<float>()) % 16 == 0 && K % 4 == 0;\n"
            if vec
            else ""
        )
        launch = (
            f"{aligned}const int blocks = (M + kWarpsPerBlock - 1) / kWarpsPerBlock;\n"
            f"matvec_kernel<<<blocks, kWarpsPerBlock * 32>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, K{', aligned' if vec else ''});"
        )
        styles = ("vectorised", "warp-shuffle") if vec else ("warp-shuffle", "guarded")
        hint = (
            f"One warp per row ({threads // 32} per block) with float4 loads, a scalar tail and a __shfl_down_sync reduction."
            if vec
            else f"One warp per row ({threads // 32} per block) reduced with __shfl_down_sync."
        )
    host_fn = fill(
        """
        torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor B) {
        $checks
            TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && B.size(1) == 1 && A.size(1) == B.size(0), "expected A (M, K) and B (K, 1)");
            const int M = static_cast<int>(A.size(0));
            const int K = static_cast<int>(A.size(1));
            auto C = torch::empty({M, 1}, A.options());
            if (M == 0) {
                return C;
            }
            $launch
        $check
            return C;
        }
        """,
        checks=host.input_checks(variant, "A", "B"), launch=launch, check=host.launch_check(variant, "matvec_kernel"),
    )
    extra = ("<cstdint>",) if style == "vectorised" else ()
    return Spec(
        family=FAMILY, op="matvec", styles=styles, task=_mv_task(m, k),
        cuda_source="\n\n".join([host.preamble(variant, *extra), kernel, host_fn]),
        cpp_source="torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor B);", functions=("matvec_cuda",),
        ext_name="matvec_ext", model_new=matmul_model_new("matvec_ext", "matvec_cuda"), hint=hint,
        template=f"matmul.matvec.{style}", params={"M": m, "K": k, "threads": threads},
    )


def skinny_spec(m: int, k: int, n: int, threads: int, variant: int) -> Spec:
    """A few rows times a wide matrix: one thread per output column, rows on blockIdx.y."""
    kernel = fill(
        """
        // M is tiny, so parallelise over N: consecutive threads read consecutive B columns.
        __global__ void __launch_bounds__($threads) skinny_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                                         float* __restrict__ C, int M, int N, int K) {
            const int col = blockIdx.x * blockDim.x + threadIdx.x;
            const int row = blockIdx.y;
            if (col >= N || row >= M) {
                return;
            }
            const float* a_row = A + static_cast<int64_t>(row) * K;
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) {
                acc = fmaf(__ldg(&a_row[k]), B[static_cast<int64_t>(k) * N + col], acc);
            }
            C[static_cast<int64_t>(row) * N + col] = acc;
        }
        """, threads=threads,
    )
    launch = (
        f"const dim3 blocks((N + {threads} - 1) / {threads}, M);\n"
        f"skinny_matmul_kernel<<<blocks, {threads}>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);"
    )
    fn = "skinny_matmul_cuda"
    return Spec(
        family=FAMILY, op="skinny_matmul", styles=("guarded",), task=matmul_task("nn", m, k, n),
        cuda_source="\n\n".join([host.preamble(variant), kernel, matmul_host(fn, "nn", False, launch, "skinny_matmul_kernel", variant)]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor A, torch::Tensor B);", functions=(fn,), ext_name="skinny_matmul_ext",
        model_new=matmul_model_new("skinny_matmul_ext", fn),
        hint=f"With only {m} row(s), give each thread one output column ({threads} per block) and put the row on blockIdx.y.",
        template="matmul.skinny", params={"M": m, "K": k, "N": n, "threads": threads},
    )


def specs() -> list[Spec]:
    """The matrix-vector / skinny samples (after `matmul.specs()` in the corpus)."""
    return [
        matvec_spec(150, 257, "warp-shuffle", 128, variant=17),
        matvec_spec(20, 2000, "shared-memory", 256, variant=18),
        matvec_spec(40, 1024, "vectorised", 256, variant=19),
        matvec_spec(77, 516, "vectorised", 128, variant=20),
        matvec_spec(12, 4099, "shared-memory", 512, variant=21),
        matvec_spec(333, 100, "warp-shuffle", 256, variant=22),
        skinny_spec(4, 100, 500, 256, variant=23),
        skinny_spec(1, 64, 777, 128, variant=24),
    ]
