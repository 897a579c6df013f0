"""Elementwise templates: activations, scalar affine maps and binary ops over same-shape tensors.

Each op is a `__device__` function applied per element; the kernel around it is one of three
styles, the ones a model must learn to tell apart:

- `guarded`: one element per thread, `if (i < n)` for the last partial block;
- `grid-stride`: a capped grid whose threads loop with stride `gridDim.x * blockDim.x`;
- `vectorised`: float4 loads/stores over the 16-byte-aligned bulk, a scalar loop for the tail
  (and for everything when a pointer is not 16-byte aligned, e.g. a sliced view).

Shapes are chosen so that element counts are not multiples of the block size or of 4.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module

FAMILY = "elementwise"


@dataclass(frozen=True)
class Op:
    """One elementwise op: reference expression, CUDA body, scalar constructor parameters."""

    name: str
    doc: str
    torch_expr: str
    device_body: str
    inputs: tuple[str, ...] = ("x",)
    params: tuple[tuple[str, float], ...] = ()
    functional: bool = False


OPS = {
    op.name: op
    for op in (
        Op("relu", "a ReLU activation", "torch.relu(x)", "return fmaxf(v0, 0.0f);"),
        Op(
            "leaky_relu",
            "a LeakyReLU activation",
            "F.leaky_relu(x, negative_slope=self.negative_slope)",
            "return v0 > 0.0f ? v0 : v0 * negative_slope;",
            params=(("negative_slope", 0.01),),
            functional=True,
        ),
        Op("sigmoid", "a Sigmoid activation", "torch.sigmoid(x)", "return 1.0f / (1.0f + __expf(-v0));"),
        Op("tanh", "a Tanh activation", "torch.tanh(x)", "return tanhf(v0);"),
        Op(
            "gelu",
            "a GELU activation (exact, erf form)",
            "F.gelu(x)",
            "return 0.5f * v0 * (1.0f + erff(v0 * 0.70710678118654752f));",
            functional=True,
        ),
        Op(
            "gelu_tanh",
            "a GELU activation with the tanh approximation",
            'F.gelu(x, approximate="tanh")',
            "const float inner = 0.79788456080286536f * (v0 + 0.044715f * v0 * v0 * v0);\n"
            "return 0.5f * v0 * (1.0f + tanhf(inner));",
            functional=True,
        ),
        Op("silu", "a SiLU (swish) activation", "F.silu(x)", "return v0 / (1.0f + __expf(-v0));", functional=True),
        Op(
            "softplus",
            "a Softplus activation (beta=1, threshold=20)",
            "F.softplus(x)",
            "// Above the threshold softplus(v) == v in float32, and exp would only lose precision.\n"
            "return v0 > 20.0f ? v0 : log1pf(__expf(v0));",
            functional=True,
        ),
        Op(
            "elu",
            "an ELU activation",
            "F.elu(x, alpha=self.alpha)",
            "return v0 > 0.0f ? v0 : alpha * expm1f(v0);",
            params=(("alpha", 1.0),),
            functional=True,
        ),
        Op(
            "clamp",
            "a clamp of every element to [min_val, max_val]",
            "torch.clamp(x, min=self.min_val, max=self.max_val)",
            "return fminf(fmaxf(v0, min_val), max_val);",
            params=(("min_val", -0.5), ("max_val", 0.5)),
        ),
        Op(
            "hardswish",
            "a HardSwish activation",
            "F.hardswish(x)",
            "return v0 * fminf(fmaxf(v0 + 3.0f, 0.0f), 6.0f) / 6.0f;",
            functional=True,
        ),
        Op(
            "mish",
            "a Mish activation",
            "F.mish(x)",
            "const float sp = v0 > 20.0f ? v0 : log1pf(__expf(v0));\nreturn v0 * tanhf(sp);",
            functional=True,
        ),
        Op(
            "scale_bias",
            "an affine map x * scale + bias with scalar scale and bias",
            "x * self.scale + self.bias",
            "return fmaf(v0, scale, bias);",
            params=(("scale", 2.5), ("bias", -0.75)),
        ),
        Op("add", "an elementwise addition of two tensors", "a + b", "return v0 + v1;", inputs=("a", "b")),
        Op("mul", "an elementwise product of two tensors", "a * b", "return v0 * v1;", inputs=("a", "b")),
        Op("maximum", "an elementwise maximum of two tensors", "torch.maximum(a, b)", "return fmaxf(v0, v1);", inputs=("a", "b")),
        Op(
            "axpby",
            "a weighted sum alpha * a + beta * b",
            "self.alpha * a + self.beta * b",
            "return alpha * v0 + beta * v1;",
            inputs=("a", "b"),
            params=(("alpha", 0.7), ("beta", -1.3)),
        ),
        Op("squared_diff", "the elementwise squared difference (a - b)^2", "(a - b) ** 2", "const float d = v0 - v1;\nreturn d * d;", inputs=("a", "b")),
        Op(
            "lerp",
            "a linear interpolation torch.lerp(a, b, weight) with a scalar weight",
            "torch.lerp(a, b, self.weight)",
            "return fmaf(weight, v1 - v0, v0);",
            inputs=("a", "b"),
            params=(("weight", 0.3),),
        ),
    )
}


def _op_task(op: Op, shape: tuple[int, ...], params: dict[str, float]) -> str:
    dims = ", ".join(str(s) for s in shape)
    ins = ", ".join(op.inputs)
    sig = ", ".join(f"{n}: torch.Tensor" for n in op.inputs)
    init_args = ", ".join(f"{p}: float" for p, _ in op.params)
    init_body = "\n".join(f"self.{p} = {p}" for p, _ in op.params)
    inputs = "\n".join(f"{n} = torch.randn(shape)" for n in op.inputs) + f"\nreturn [{ins}]"
    return task_module(
        doc=f"Simple model that performs {op.doc}.",
        forward=f"def forward(self, {sig}) -> torch.Tensor:\n    return {op.torch_expr}",
        constants=f"shape = ({dims},)" if len(shape) == 1 else f"shape = ({dims})",
        inputs=inputs,
        init_args=init_args,
        init_body=init_body,
        init_inputs="[" + ", ".join(repr(params[p]) for p, _ in op.params) + "]",
        functional=op.functional,
    )


def _model_new(op: Op, ext: str, fn: str) -> str:
    sig = ", ".join(f"{n}: torch.Tensor" for n in op.inputs)
    init_args = ", ".join(f"{p}: float" for p, _ in op.params)
    init_sig = f"self, {init_args}" if init_args else "self"
    lines = ["class ModelNew(nn.Module):", f"    def __init__({init_sig}):", "        super().__init__()"]
    lines += [f"        self.{p} = {p}" for p, _ in op.params]
    call = ", ".join([f"{n}.contiguous()" for n in op.inputs] + [f"self.{p}" for p, _ in op.params])
    lines += ["", f"    def forward(self, {sig}) -> torch.Tensor:", f"        return {ext}.{fn}({call})"]
    return "\n".join(lines)


def _device_fn(op: Op, fname: str) -> str:
    args = ", ".join([f"float v{i}" for i in range(len(op.inputs))] + [f"float {p}" for p, _ in op.params])
    body = "\n".join("    " + line for line in op.device_body.splitlines())
    return f"__device__ __forceinline__ float {fname}({args}) {{\n{body}\n}}"


def _call(op: Op, fname: str, loads: list[str]) -> str:
    return f"{fname}({', '.join(loads + [p for p, _ in op.params])})"


def _kernel(op: Op, style: str, kname: str, fname: str, threads: int) -> str:
    ptrs = ", ".join(f"const float* __restrict__ {n}" for n in op.inputs)
    scal = "".join(f", float {p}" for p, _ in op.params)
    sig = f"{ptrs}, float* __restrict__ y, int64_t n{scal}"
    scalar_call = _call(op, fname, [f"{n}[i]" for n in op.inputs])
    if style == "guarded":
        return fill(
            """
            __global__ void __launch_bounds__($threads) $kname($sig) {
                const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
                if (i < n) {
                    y[i] = $call;
                }
            }
            """,
            threads=threads, kname=kname, sig=sig, call=scalar_call,
        )
    if style == "grid-stride":
        return fill(
            """
            __global__ void $kname($sig) {
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    y[i] = $call;
                }
            }
            """,
            kname=kname, sig=sig, call=scalar_call,
        )
    casts = "\n".join(
        f"    const float4* {n}4 = reinterpret_cast<const float4*>({n});" for n in op.inputs
    )
    loads = "\n".join(f"        const float4 {n}v = {n}4[i];" for n in op.inputs)
    lanes = "\n".join(
        f"        r.{c} = {_call(op, fname, [f'{n}v.{c}' for n in op.inputs])};" for c in "xyzw"
    )
    return fill(
        """
        __global__ void __launch_bounds__($threads) $kname($sig, int64_t n_vec) {
            const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
            const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
        $casts
            float4* y4 = reinterpret_cast<float4*>(y);
            for (int64_t i = tid; i < n_vec; i += stride) {
        $loads
                float4 r;
        $lanes
                y4[i] = r;
            }
            // Scalar tail: the n % 4 elements after the float4 bulk (all of them if n_vec == 0).
            for (int64_t i = n_vec * 4 + tid; i < n; i += stride) {
                y[i] = $call;
            }
        }
        """,
        threads=threads, kname=kname, sig=sig, casts=casts, loads=loads, lanes=lanes, call=scalar_call,
    )


def _host(op: Op, style: str, kname: str, fn: str, threads: int, cap: int | None, variant: int, stream: bool) -> str:
    x0 = op.inputs[0]
    args = ", ".join([f"torch::Tensor {n}" for n in op.inputs] + [f"double {p}" for p, _ in op.params])
    same_shape = "".join(
        f'\n    TORCH_CHECK({n}.sizes() == {x0}.sizes(), "{n} and {x0} must have the same shape");'
        for n in op.inputs[1:]
    )
    ptrs = ", ".join(f"{n}.data_ptr<float>()" for n in op.inputs)
    scal = "".join(f", static_cast<float>({p})" for p, _ in op.params)
    launch_tail = host.stream_arg(stream)
    if style == "guarded":
        grid = "    const int blocks = static_cast<int>((n + threads - 1) / threads);"
        launch = f"    {kname}<<<blocks, threads{launch_tail}>>>({ptrs}, y.data_ptr<float>(), n{scal});"
    elif style == "grid-stride":
        grid = host.grid_stride_blocks("threads", "n", cap)
        launch = f"    {kname}<<<blocks, threads{launch_tail}>>>({ptrs}, y.data_ptr<float>(), n{scal});"
    else:
        aligned = " &&\n                         ".join(
            f"reinterpret_cast<uintptr_t>({n}.data_ptr<float>()) % 16 == 0" for n in (*op.inputs, "y")
        )
        grid = (
            f"    // float4 accesses need 16-byte alignment; a sliced view may not have it.\n"
            f"    const bool aligned = {aligned};\n"
            f"    const int64_t n_vec = aligned ? n / 4 : 0;\n"
            f"    const int64_t work = aligned ? n_vec : n;\n"
            + host.grid_stride_blocks("threads", "work", cap)
        )
        launch = f"    {kname}<<<blocks, threads{launch_tail}>>>({ptrs}, y.data_ptr<float>(), n{scal}, n_vec);"
    return fill(
        """
        torch::Tensor $fn($args) {
        $checks$same_shape
            auto y = torch::empty_like($x0);
            const int64_t n = $x0.numel();
            if (n == 0) {
                return y;
            }
            constexpr int threads = $threads;
        $grid
        $launch
        $check
            return y;
        }
        """,
        fn=fn, args=args, checks=host.input_checks(variant, *op.inputs), same_shape=same_shape, x0=x0,
        threads=threads, grid=grid, launch=launch, check=host.launch_check(variant, kname),
    )


def unary_spec(op_name: str, style: str, shape: tuple[int, ...], threads: int, variant: int, cap: int | None = None, stream: bool = False) -> Spec:
    """One elementwise sample: `op_name` in `style` over `shape` with `threads` per block."""
    return op_spec(OPS[op_name], style, shape, threads, variant, cap, stream)


def op_spec(op: Op, style: str, shape: tuple[int, ...], threads: int, variant: int, cap: int | None = None,
            stream: bool = False, family: str = FAMILY) -> Spec:
    """An elementwise kernel for any `Op` (also used by the fused family for fused elementwise chains)."""
    params = dict(op.params)
    fn = f"{op.name}_cuda"
    kname = f"{op.name}_vec4_kernel" if style == "vectorised" else f"{op.name}_kernel"
    fname = f"{op.name}_op"
    extra = ["<algorithm>"] if style != "guarded" else []
    if style == "vectorised":
        extra.append("<cstdint>")
    cuda = "\n\n".join(
        [
            host.preamble(variant, *extra, stream=stream),
            _device_fn(op, fname),
            _kernel(op, style, kname, fname, threads),
            _host(op, style, kname, fn, threads, cap, variant, stream),
        ]
    )
    decl_args = ", ".join([f"torch::Tensor {n}" for n in op.inputs] + [f"double {p}" for p, _ in op.params])
    hints = {
        "guarded": f"one thread per element with {threads} threads per block and an `if (i < n)` guard",
        "grid-stride": f"a grid-stride loop over the elements with {threads} threads per block and a capped grid",
        "vectorised": f"float4 loads and stores ({threads} threads per block) with a scalar tail loop",
    }
    return Spec(
        family=family,
        op=op.name,
        styles=(style,),
        task=_op_task(op, shape, params),
        cuda_source=cuda,
        cpp_source=f"torch::Tensor {fn}({decl_args});",
        functions=(fn,),
        ext_name=f"{op.name}_ext",
        model_new=_model_new(op, f"{op.name}_ext", fn),
        hint=f"Use {hints[style]}.",
        template=f"elementwise.{style}" if family == FAMILY else f"{family}.elementwise.{style}",
        params={"shape": list(shape), "threads": threads, "cap": cap, "stream": stream, **params},
    )


def _affine_spec(style: str, rows: int, cols: int, threads: int, variant: int) -> Spec:
    """Per-channel affine y = x * weight + bias over the last dim, on a 2-D grid (dim3)."""
    fn = "channel_affine_cuda"
    task = task_module(
        doc="Applies a learned per-feature scale and shift: y = x * weight + bias (broadcast over rows).",
        init_args="features: int",
        init_body="self.weight = nn.Parameter(torch.randn(features))\nself.bias = nn.Parameter(torch.randn(features))",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return x * self.weight + self.bias",
        constants=f"batch_size = {rows}\nfeatures = {cols}",
        inputs="x = torch.randn(batch_size, features)\nreturn [x]",
        init_inputs="[features]",
    )
    if style == "guarded":
        kernel = fill(
            """
            // blockIdx.y picks the row, so the column index needs no division or modulo.
            __global__ void __launch_bounds__($threads) channel_affine_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                              const float* __restrict__ b, float* __restrict__ y,
                                                                              int rows, int cols) {
                const int col = blockIdx.x * blockDim.x + threadIdx.x;
                const int row = blockIdx.y;
                if (col < cols && row < rows) {
                    const int64_t i = static_cast<int64_t>(row) * cols + col;
                    y[i] = fmaf(x[i], w[col], b[col]);
                }
            }
            """,
            threads=threads,
        )
        grid = "    const dim3 blocks((cols + threads - 1) / threads, rows);"
    else:
        kernel = fill(
            """
            __global__ void channel_affine_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                  const float* __restrict__ b, float* __restrict__ y,
                                                  int rows, int cols) {
                const int64_t n = static_cast<int64_t>(rows) * cols;
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    const int col = static_cast<int>(i % cols);
                    y[i] = fmaf(x[i], __ldg(&w[col]), __ldg(&b[col]));
                }
            }
            """
        )
        grid = "    const int64_t n = x.numel();\n" + host.grid_stride_blocks("threads", "n", 48)
    host_fn = fill(
        """
        torch::Tensor channel_affine_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
        $checks
            TORCH_CHECK(x.dim() == 2, "x must be 2-D (rows, features)");
            TORCH_CHECK(weight.numel() == x.size(1) && bias.numel() == x.size(1), "weight/bias must have x.size(1) elements");
            auto y = torch::empty_like(x);
            const int rows = static_cast<int>(x.size(0));
            const int cols = static_cast<int>(x.size(1));
            if (rows == 0 || cols == 0) {
                return y;
            }
            constexpr int threads = $threads;
        $grid
            channel_affine_kernel<<<blocks, threads>>>(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                                                       y.data_ptr<float>(), rows, cols);
        $check
            return y;
        }
        """,
        checks=host.input_checks(variant, "x", "weight", "bias"), threads=threads, grid=grid,
        check=host.launch_check(variant, "channel_affine_kernel"),
    )
    extra = ["<algorithm>"] if style == "grid-stride" else []
    cuda = "\n\n".join([host.preamble(variant, *extra), kernel, host_fn])
    model_new = fill(
        """
        class ModelNew(nn.Module):
            def __init__(self, features: int):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(features))
                self.bias = nn.Parameter(torch.randn(features))

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return channel_affine_ext.channel_affine_cuda(x.contiguous(), self.weight, self.bias)
        """
    )
    hint = (
        "Launch a 2-D grid (dim3) with one block row per tensor row and guard the column index."
        if style == "guarded"
        else "Use a grid-stride loop over all elements and read the per-feature parameters through __ldg."
    )
    return Spec(
        family=FAMILY, op="channel_affine", styles=(style,), task=task, cuda_source=cuda,
        cpp_source="torch::Tensor channel_affine_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);",
        functions=(fn,), ext_name="channel_affine_ext", model_new=model_new, hint=hint,
        template=f"elementwise.channel_affine.{style}",
        params={"rows": rows, "cols": cols, "threads": threads},
    )


# (op, style, shape, threads, cap, stream). Element counts avoid multiples of 4 and of the block.
_CONFIGS: tuple[tuple[str, str, tuple[int, ...], int, int | None, bool], ...] = (
    ("relu", "guarded", (16, 1531), 256, None, False),
    ("relu", "vectorised", (5, 2403), 256, None, False),
    ("leaky_relu", "grid-stride", (12, 1703), 256, None, True),
    ("sigmoid", "guarded", (32, 413), 128, None, False),
    ("sigmoid", "vectorised", (7, 2049), 512, 64, False),
    ("tanh", "grid-stride", (9, 1999), 128, 40, False),
    ("gelu", "guarded", (16, 1023), 256, None, True),
    ("gelu", "vectorised", (3, 4097), 128, None, False),
    ("gelu_tanh", "grid-stride", (6, 2501), 256, 24, False),
    ("silu", "guarded", (24, 555), 512, None, False),
    ("silu", "grid-stride", (4, 3, 1021), 256, None, False),
    ("softplus", "vectorised", (11, 1337), 256, 32, True),
    ("elu", "guarded", (10, 1777), 128, None, False),
    ("clamp", "grid-stride", (8, 2999), 512, 16, False),
    ("hardswish", "guarded", (2, 5, 999), 256, None, False),
    ("mish", "vectorised", (13, 811), 128, None, False),
    ("scale_bias", "guarded", (20, 901), 256, None, False),
    ("scale_bias", "vectorised", (6, 1603), 256, 40, False),
    ("add", "guarded", (16, 1201), 256, None, False),
    ("add", "vectorised", (9, 2221), 512, None, True),
    ("mul", "grid-stride", (15, 1111), 256, 30, False),
    ("maximum", "guarded", (3, 7, 613), 128, None, False),
    ("axpby", "vectorised", (17, 677), 256, 20, False),
    ("squared_diff", "grid-stride", (10, 2047), 128, None, False),
    ("lerp", "guarded", (12, 1501), 256, None, False),
    ("tanh", "vectorised", (4, 3333), 256, None, False),
)


def specs() -> list[Spec]:
    """All elementwise samples, in a fixed order."""
    out = [
        unary_spec(op, style, shape, threads, variant=i, cap=cap, stream=stream)
        for i, (op, style, shape, threads, cap, stream) in enumerate(_CONFIGS)
    ]
    out.append(_affine_spec("guarded", 24, 1000, 128, variant=1))
    out.append(_affine_spec("grid-stride", 37, 515, 256, variant=3))
    return out
