"""Fused-op templates: several PyTorch ops in one kernel, so intermediates never touch memory.

- Linear + bias + activation: a tiled (or naive) x @ W^T whose epilogue adds the bias and
  applies the activation before the single store; the module keeps its `nn.Linear`, so seeded
  construction gives ModelNew the same weights as Model;
- bias + GELU, SwiGLU and elementwise chains (sigmoid gate, add + ReLU, scale + residual + ReLU,
  addcmul): one pass over memory instead of one per op;
- residual add + LayerNorm / RMSNorm, scale + softmax, ReLU + row sum, per-row MSE: in
  `fused_rows`, row kernels whose row element is the fused expression.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.elementwise import Op, op_spec
from cuset.data.corpus.fused_rows import row_fused_spec
from cuset.data.corpus.kernelbench import Spec, fill, task_module

FAMILY = "fused"

_ACTS = {
    "relu": ("torch.relu(x)", "return fmaxf(v, 0.0f);"),
    "gelu": ("F.gelu(x)", "return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));"),
    "sigmoid": ("torch.sigmoid(x)", "return 1.0f / (1.0f + __expf(-v));"),
    "tanh": ("torch.tanh(x)", "return tanhf(v);"),
    "silu": ("F.silu(x)", "return v / (1.0f + __expf(-v));"),
    "scale_residual": ("x * self.scaling_factor + x", "return v * scale + v;"),
}


def _linear_task(batch: int, in_f: int, out_f: int, act: str) -> str:
    if act == "scale_residual":
        return task_module(
            doc="A model that performs a matrix multiplication, scaling, and residual addition.",
            init_args="in_features: int, out_features: int, scaling_factor: float",
            init_body="self.matmul = nn.Linear(in_features, out_features)\nself.scaling_factor = scaling_factor",
            forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "    x = self.matmul(x)\n    original_x = x.clone().detach()\n    x = x * self.scaling_factor\n"
            "    x = x + original_x\n    return x",
            constants=f"batch_size = {batch}\nin_features = {in_f}\nout_features = {out_f}\nscaling_factor = 0.5",
            inputs="x = torch.randn(batch_size, in_features)\nreturn [x]",
            init_inputs="[in_features, out_features, scaling_factor]",
        )
    expr = _ACTS[act][0]
    return task_module(
        doc=f"A linear layer followed by {act}.",
        init_args="in_features: int, out_features: int",
        init_body="self.linear = nn.Linear(in_features, out_features)",
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    x = self.linear(x)\n    return {expr}",
        constants=f"batch_size = {batch}\nin_features = {in_f}\nout_features = {out_f}",
        inputs="x = torch.randn(batch_size, in_features)\nreturn [x]",
        init_inputs="[in_features, out_features]",
        functional=act in ("gelu", "silu"),
    )


def linear_act_spec(batch: int, in_f: int, out_f: int, act: str, variant: int, tile: int | None = None,
                    block: tuple[int, int] = (16, 16)) -> Spec:
    """y = act(x @ W^T + b), tiled in shared memory (`tile`) or one thread per output (naive)."""
    scale = act == "scale_residual"
    act_fn = fill(
        """
        __device__ __forceinline__ float epilogue(float v$scale_param) {
            $body
        }
        """, scale_param=", float scale" if scale else "", body=_ACTS[act][1],
    )
    scale_param = ", float scale" if scale else ""
    scale_arg = ", scale" if scale else ""
    if tile:
        kernel = fill(
            """
            // y[m][n] = epilogue(sum_k x[m][k] * w[n][k] + b[n]). W is (N, K) as nn.Linear stores it,
            // so its tile is read along K (coalesced) and stored transposed into a padded tile.
            template <int TILE>
            __global__ void __launch_bounds__(TILE * TILE) linear_${act}_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                               const float* __restrict__ b, float* __restrict__ y,
                                                                               int M, int N, int K$scale_param) {
                __shared__ float xs[TILE][TILE];
                __shared__ float ws[TILE][TILE + 1];
                const int row = blockIdx.y * TILE + threadIdx.y;
                const int col = blockIdx.x * TILE + threadIdx.x;
                const int w_row = blockIdx.x * TILE + threadIdx.y;
                float acc = 0.0f;
                for (int t = 0; t < K; t += TILE) {
                    const int k = t + threadIdx.x;
                    xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[static_cast<int64_t>(row) * K + k] : 0.0f;
                    ws[threadIdx.x][threadIdx.y] = (w_row < N && k < K) ? w[static_cast<int64_t>(w_row) * K + k] : 0.0f;
                    __syncthreads();
            #pragma unroll
                    for (int i = 0; i < TILE; ++i) {
                        acc += xs[threadIdx.y][i] * ws[i][threadIdx.x];
                    }
                    __syncthreads();
                }
                if (row < M && col < N) {
                    y[static_cast<int64_t>(row) * N + col] = epilogue(acc + b[col]$scale_arg);
                }
            }
            """, act=act, scale_param=scale_param, scale_arg=scale_arg,
        )
        launch = (
            f"constexpr int kTile = {tile};\n"
            "const dim3 threads(kTile, kTile);\n"
            "const dim3 blocks((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);\n"
            f"linear_{act}_kernel<kTile><<<blocks, threads>>>"
        )
        styles: tuple[str, ...] = ("tiled", "shared-memory")
        hint = f"Fuse bias and {act} into the epilogue of a {tile}x{tile} shared-memory tiled GEMM against the (N, K) weight."
    else:
        bx, by = block
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) linear_${act}_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                            const float* __restrict__ b, float* __restrict__ y,
                                                                            int M, int N, int K$scale_param) {
                const int row = blockIdx.y * blockDim.y + threadIdx.y;
                const int col = blockIdx.x * blockDim.x + threadIdx.x;
                if (row >= M || col >= N) {
                    return;
                }
                const float* x_row = x + static_cast<int64_t>(row) * K;
                const float* w_row = w + static_cast<int64_t>(col) * K;
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) {
                    acc = fmaf(x_row[k], w_row[k], acc);
                }
                y[static_cast<int64_t>(row) * N + col] = epilogue(acc + b[col]$scale_arg);
            }
            """, threads=bx * by, act=act, scale_param=scale_param, scale_arg=scale_arg,
        )
        launch = (
            f"const dim3 threads({bx}, {by});\n"
            "const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);\n"
            f"linear_{act}_kernel<<<blocks, threads>>>"
        )
        styles = ("guarded",)
        hint = f"One thread per output ({bx}x{by} blocks on a 2-D grid) computing the dot product, bias and {act} in registers."
    fn = f"linear_{act}_cuda"
    kname = f"linear_{act}_kernel"
    host_fn = fill(
        """
        torch::Tensor $fn(torch::Tensor x, torch::Tensor weight, torch::Tensor bias$scale_host) {
        $checks
            TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && weight.size(1) == x.size(1), "expected x (M, K) and weight (N, K)");
            TORCH_CHECK(bias.numel() == weight.size(0), "bias must have N elements");
            const int M = static_cast<int>(x.size(0));
            const int K = static_cast<int>(x.size(1));
            const int N = static_cast<int>(weight.size(0));
            auto y = torch::empty({M, N}, x.options());
            if (y.numel() == 0) {
                return y;
            }
            $launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), M, N, K$scale_call);
        $check
            return y;
        }
        """,
        fn=fn, scale_host=", double scale" if scale else "", checks=host.input_checks(variant, "x", "weight", "bias"),
        launch=launch, scale_call=", static_cast<float>(scale)" if scale else "", check=host.launch_check(variant, kname),
    )
    if scale:
        model_new = fill(
            """
            class ModelNew(nn.Module):
                def __init__(self, in_features: int, out_features: int, scaling_factor: float):
                    super().__init__()
                    self.matmul = nn.Linear(in_features, out_features)
                    self.scaling_factor = scaling_factor

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return $ext.$fn(x.contiguous(), self.matmul.weight, self.matmul.bias, self.scaling_factor)
            """, ext=f"linear_{act}_ext", fn=fn,
        )
    else:
        model_new = fill(
            """
            class ModelNew(nn.Module):
                def __init__(self, in_features: int, out_features: int):
                    super().__init__()
                    self.linear = nn.Linear(in_features, out_features)

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return $ext.$fn(x.contiguous(), self.linear.weight, self.linear.bias)
            """, ext=f"linear_{act}_ext", fn=fn,
        )
    return Spec(
        family=FAMILY, op=f"linear_{act}", styles=styles, task=_linear_task(batch, in_f, out_f, act),
        cuda_source="\n\n".join([host.preamble(variant, "<cmath>"), act_fn, kernel, host_fn]),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, torch::Tensor weight, torch::Tensor bias{', double scale' if scale else ''});",
        functions=(fn,), ext_name=f"linear_{act}_ext", model_new=model_new, hint=hint,
        template=f"fused.linear_act.{'tiled' if tile else 'naive'}",
        params={"batch": batch, "in_features": in_f, "out_features": out_f, "act": act, "tile": tile},
    )


def bias_gelu_spec(rows: int, cols: int, style: str, threads: int, variant: int) -> Spec:
    """y = gelu(x + bias) with a per-feature bias. style: guarded | vectorised | grid-stride."""
    gelu = "__device__ __forceinline__ float gelu(float v) {\n    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));\n}"
    if style == "guarded":
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) bias_gelu_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                                                         float* __restrict__ y, int rows, int cols) {
                const int col = blockIdx.x * blockDim.x + threadIdx.x;
                const int row = blockIdx.y;
                if (col < cols) {
                    const int64_t i = static_cast<int64_t>(row) * cols + col;
                    y[i] = gelu(x[i] + bias[col]);
                }
            }
            """, threads=threads,
        )
        launch = f"const dim3 blocks((cols + {threads} - 1) / {threads}, rows);\nbias_gelu_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
        hint = "A 2-D grid (column blocks x rows) so the bias index is the column, guarded at the row end."
        styles: tuple[str, ...] = ("guarded",)
    elif style == "grid-stride":
        kernel = fill(
            """
            __global__ void bias_gelu_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                             float* __restrict__ y, int rows, int cols) {
                const int64_t n = static_cast<int64_t>(rows) * cols;
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    y[i] = gelu(x[i] + __ldg(&bias[i % cols]));
                }
            }
            """
        )
        launch = (
            "const int64_t n = x.numel();\n"
            f"constexpr int threads = {threads};\n"
            + host.grid_stride_blocks("threads", "n", 40, indent=0)
            + "\nbias_gelu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
        )
        hint = "A grid-stride loop over all elements with the bias read through __ldg."
        styles = ("grid-stride",)
    else:
        kernel = fill(
            """
            // Rows of x and the bias are float4-aligned when cols % 4 == 0 and the bases are aligned;
            // then column group j of every row uses bias float4 j. Otherwise the scalar loop does all.
            __global__ void __launch_bounds__($threads) bias_gelu_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                                                         float* __restrict__ y, int rows, int cols, bool aligned) {
                const int64_t n = static_cast<int64_t>(rows) * cols;
                const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                const int64_t n_vec = aligned ? n / 4 : 0;
                const int cols_vec = cols / 4;
                const float4* x4 = reinterpret_cast<const float4*>(x);
                const float4* b4 = reinterpret_cast<const float4*>(bias);
                float4* y4 = reinterpret_cast<float4*>(y);
                for (int64_t i = tid; i < n_vec; i += stride) {
                    const float4 v = x4[i];
                    const float4 b = b4[i % cols_vec];
                    y4[i] = make_float4(gelu(v.x + b.x), gelu(v.y + b.y), gelu(v.z + b.z), gelu(v.w + b.w));
                }
                for (int64_t i = n_vec * 4 + tid; i < n; i += stride) {
                    y[i] = gelu(x[i] + bias[i % cols]);
                }
            }
            """, threads=threads,
        )
        launch = (
            "const bool aligned = cols % 4 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&\n"
            "                     reinterpret_cast<uintptr_t>(bias.data_ptr<float>()) % 16 == 0 &&\n"
            "                     reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;\n"
            "const int64_t work = aligned ? x.numel() / 4 : x.numel();\n"
            f"const int blocks = static_cast<int>(std::min<int64_t>((work + {threads} - 1) / {threads}, 2048));\n"
            f"bias_gelu_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), rows, cols, aligned);"
        )
        hint = "float4 loads of x and of the bias (column group = index mod cols/4), with a scalar fallback loop."
        styles = ("vectorised", "grid-stride")
    host_fn = fill(
        """
        torch::Tensor bias_gelu_cuda(torch::Tensor x, torch::Tensor bias) {
        $checks
            TORCH_CHECK(x.dim() == 2 && bias.numel() == x.size(1), "expected x (rows, cols) and bias (cols)");
            const int rows = static_cast<int>(x.size(0));
            const int cols = static_cast<int>(x.size(1));
            auto y = torch::empty_like(x);
            if (y.numel() == 0) {
                return y;
            }
            $launch
        $check
            return y;
        }
        """, checks=host.input_checks(variant, "x", "bias"), launch=launch, check=host.launch_check(variant, "bias_gelu_kernel"),
    )
    task = task_module(
        doc="Adds a learned per-feature bias and applies GELU.",
        init_args="features: int", init_body="self.bias = nn.Parameter(torch.randn(features))",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return F.gelu(x + self.bias)",
        constants=f"batch_size = {rows}\nfeatures = {cols}", inputs="x = torch.randn(batch_size, features)\nreturn [x]",
        init_inputs="[features]", functional=True,
    )
    model_new = fill(
        """
        class ModelNew(nn.Module):
            def __init__(self, features: int):
                super().__init__()
                self.bias = nn.Parameter(torch.randn(features))

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return bias_gelu_ext.bias_gelu_cuda(x.contiguous(), self.bias)
        """
    )
    extra = ("<algorithm>", "<cstdint>") if style != "guarded" else ()
    return Spec(
        family=FAMILY, op="bias_gelu", styles=styles, task=task,
        cuda_source="\n\n".join([host.preamble(variant, *extra), gelu, kernel, host_fn]),
        cpp_source="torch::Tensor bias_gelu_cuda(torch::Tensor x, torch::Tensor bias);", functions=("bias_gelu_cuda",),
        ext_name="bias_gelu_ext", model_new=model_new, hint=hint, template=f"fused.bias_gelu.{style}",
        params={"rows": rows, "cols": cols, "threads": threads},
    )


def swiglu_spec(rows: int, hidden: int, style: str, threads: int, variant: int) -> Spec:
    """SwiGLU: silu(a) * b with a, b the two halves of the last dim. style: guarded | vectorised."""
    if style == "guarded":
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) swiglu_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int hidden) {
                const int col = blockIdx.x * blockDim.x + threadIdx.x;
                const int row = blockIdx.y;
                if (col < hidden) {
                    const float* xr = x + static_cast<int64_t>(row) * 2 * hidden;
                    y[static_cast<int64_t>(row) * hidden + col] = silu(xr[col]) * xr[hidden + col];
                }
            }
            """, threads=threads,
        )
        launch = f"const dim3 blocks((hidden + {threads} - 1) / {threads}, rows);\nswiglu_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, hidden);"
        styles: tuple[str, ...] = ("guarded",)
        hint = "A 2-D grid (column blocks x rows); each thread reads its gate and value from the two halves of the row."
    else:
        kernel = fill(
            """
            // With hidden % 4 == 0 both halves of every row start 16-byte aligned, so each thread
            // handles four outputs with two float4 loads and one float4 store.
            __global__ void __launch_bounds__($threads) swiglu_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int hidden,
                                                                      bool aligned) {
                const int row = blockIdx.y;
                const float* xr = x + static_cast<int64_t>(row) * 2 * hidden;
                float* yr = y + static_cast<int64_t>(row) * hidden;
                const int hidden_vec = aligned ? hidden / 4 : 0;
                const int stride = gridDim.x * blockDim.x;
                const int tid = blockIdx.x * blockDim.x + threadIdx.x;
                for (int j = tid; j < hidden_vec; j += stride) {
                    const float4 a = reinterpret_cast<const float4*>(xr)[j];
                    const float4 b = reinterpret_cast<const float4*>(xr + hidden)[j];
                    reinterpret_cast<float4*>(yr)[j] = make_float4(silu(a.x) * b.x, silu(a.y) * b.y, silu(a.z) * b.z, silu(a.w) * b.w);
                }
                for (int c = hidden_vec * 4 + tid; c < hidden; c += stride) {
                    yr[c] = silu(xr[c]) * xr[hidden + c];
                }
            }
            """, threads=threads,
        )
        launch = (
            "const bool aligned = hidden % 4 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&\n"
            "                     reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;\n"
            "const int per_row = aligned ? hidden / 4 : hidden;\n"
            f"const dim3 blocks((per_row + {threads} - 1) / {threads}, rows);\n"
            f"swiglu_kernel<<<blocks, {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, hidden, aligned);"
        )
        styles = ("vectorised", "grid-stride")
        hint = "float4 loads from both halves of each row (rows on blockIdx.y) with a scalar tail loop."
    host_fn = fill(
        """
        torch::Tensor swiglu_cuda(torch::Tensor x) {
        $checks
            TORCH_CHECK(x.dim() == 2 && x.size(1) % 2 == 0, "x must be (rows, 2 * hidden)");
            const int rows = static_cast<int>(x.size(0));
            const int hidden = static_cast<int>(x.size(1) / 2);
            auto y = torch::empty({rows, hidden}, x.options());
            if (y.numel() == 0) {
                return y;
            }
            $launch
        $check
            return y;
        }
        """, checks=host.input_checks(variant, "x"), launch=launch, check=host.launch_check(variant, "swiglu_kernel"),
    )
    task = task_module(
        doc="SwiGLU gating: splits the last dimension in two halves a, b and returns silu(a) * b.",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    a, b = x.chunk(2, dim=-1)\n    return F.silu(a) * b",
        constants=f"batch_size = {rows}\nhidden = {hidden}", inputs="x = torch.randn(batch_size, 2 * hidden)\nreturn [x]",
        functional=True,
    )
    silu = "__device__ __forceinline__ float silu(float v) {\n    return v / (1.0f + __expf(-v));\n}"
    return Spec(
        family=FAMILY, op="swiglu", styles=styles, task=task,
        cuda_source="\n\n".join([host.preamble(variant, *(("<cstdint>",) if style == "vectorised" else ())), silu, kernel, host_fn]),
        cpp_source="torch::Tensor swiglu_cuda(torch::Tensor x);", functions=("swiglu_cuda",), ext_name="swiglu_ext",
        model_new=fill(
            """
            class ModelNew(nn.Module):
                def __init__(self):
                    super().__init__()

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return swiglu_ext.swiglu_cuda(x.contiguous())
            """
        ),
        hint=hint, template=f"fused.swiglu.{style}", params={"rows": rows, "hidden": hidden, "threads": threads},
    )


_ELEMENTWISE_FUSED = {
    op.name: op
    for op in (
        Op("sigmoid_gate", "a sigmoid gate a * sigmoid(b)", "a * torch.sigmoid(b)", "return v0 / (1.0f + __expf(-v1));", inputs=("a", "b")),
        Op("add_relu", "an addition followed by ReLU", "torch.relu(a + b)", "return fmaxf(v0 + v1, 0.0f);", inputs=("a", "b")),
        Op(
            "scale_residual_relu", "relu(x * scale + residual)", "torch.relu(x * self.scale + residual)",
            "return fmaxf(fmaf(v0, scale, v1), 0.0f);", inputs=("x", "residual"), params=(("scale", 1.5),),
        ),
        Op("addcmul", "c + value * a * b (torch.addcmul)", "torch.addcmul(c, a, b, value=self.value)",
           "return fmaf(value * v0, v1, v2);", inputs=("a", "b", "c"), params=(("value", 0.5),)),
    )
}


def specs() -> list[Spec]:
    """All fused samples, in a fixed order."""
    out = [
        linear_act_spec(64, 200, 130, "relu", variant=0, tile=16),
        linear_act_spec(33, 257, 100, "gelu", variant=1, tile=32),
        linear_act_spec(128, 97, 50, "sigmoid", variant=2, tile=8),
        linear_act_spec(70, 150, 90, "tanh", variant=3, tile=16),
        linear_act_spec(45, 64, 257, "silu", variant=4, tile=16),
        linear_act_spec(100, 120, 77, "scale_residual", variant=5, tile=16),
        linear_act_spec(50, 100, 60, "relu", variant=6, block=(16, 16)),
        linear_act_spec(20, 333, 40, "gelu", variant=7, block=(32, 8)),
        bias_gelu_spec(16, 1000, "guarded", 256, variant=8),
        bias_gelu_spec(8, 2048, "vectorised", 256, variant=9),
        bias_gelu_spec(24, 777, "grid-stride", 128, variant=10),
        row_fused_spec("add_layernorm", "warp-shuffle", (16, 1027), 256, variant=11),
        row_fused_spec("add_layernorm", "warp-per-row", (100, 300), 128, variant=12),
        row_fused_spec("add_layernorm", "dyn-smem", (8, 2500), 512, variant=13),
        row_fused_spec("add_rmsnorm", "warp-per-row", (48, 515), 256, variant=14),
        row_fused_spec("add_rmsnorm", "warp-shuffle", (8, 3001), 256, variant=15),
        row_fused_spec("scale_softmax", "warp-per-row", (256, 200), 128, variant=16),
        row_fused_spec("scale_softmax", "shared-memory", (16, 1500), 256, variant=17),
        row_fused_spec("relu_rowsum", "warp-shuffle", (64, 1000), 128, variant=18),
        row_fused_spec("relu_rowsum", "shared-memory", (32, 2047), 256, variant=19),
        row_fused_spec("mse_rows", "shared-memory", (16, 1500), 128, variant=20),
        row_fused_spec("mse_rows", "warp-per-row", (200, 128), 64, variant=21),
        swiglu_spec(16, 500, "guarded", 128, variant=22),
        swiglu_spec(8, 1024, "vectorised", 256, variant=23),
    ]
    for i, (name, style, shape, threads, cap) in enumerate(
        (
            ("sigmoid_gate", "grid-stride", (12, 1111), 256, 48),
            ("add_relu", "vectorised", (5, 2403), 256, None),
            ("scale_residual_relu", "guarded", (20, 999), 128, None),
            ("addcmul", "grid-stride", (7, 3001), 512, None),
        )
    ):
        out.append(op_spec(_ELEMENTWISE_FUSED[name], style, shape, threads, variant=24 + i, cap=cap, family=FAMILY))
    return out
