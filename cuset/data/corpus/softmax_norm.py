"""Softmax and normalisation templates: softmax, log-softmax, softmin, LayerNorm, RMSNorm, L2.

All of them are row-wise: per row, one or two reductions (max and sum of exponentials; mean and
variance; sum of squares) followed by an elementwise write that uses the row statistics. The
op bodies below are written once in the hook language of `rowwise` (`$sum`, `$max`, `$loop`,
`$src[c]`) and rendered in each style there: shared-memory trees, block-wide warp shuffles, one
warp per row, a row staged in dynamic shared memory, or that staging with float4 loads.

Softmax always subtracts the row max before exponentiating (overflow-free), and LayerNorm
computes the variance from the mean in a second pass (no E[x^2] - E[x]^2 cancellation).
`softmax_variants` holds the online softmax, a Welford LayerNorm and a channel softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module
from cuset.data.corpus.rowwise import row_kernel

FAMILY = "softmax_norm"


@dataclass(frozen=True)
class RowOp:
    """A row-wise op: its reference, its statistics phase and its output phase."""

    name: str
    doc: str
    body: str  # uses $loop, $src, $sum, $max; writes yr[c]
    params: tuple[str, ...] = ()  # extra tensor args (gamma, beta, weight)
    eps: float | None = None


_SOFTMAX = """
float local_max = -INFINITY;
$loop {
    local_max = fmaxf(local_max, $sign$src[c]);
}
const float row_max = $max(local_max);
float local_sum = 0.0f;
$loop {
    local_sum += __expf($sign$src[c] - row_max);
}
const float row_sum = $sum(local_sum);
$finish
"""

_LAYERNORM = """
float local_sum = 0.0f;
$loop {
    local_sum += $src[c];
}
const float mean = $sum(local_sum) / static_cast<float>(cols);
float local_sq = 0.0f;
$loop {
    const float d = $src[c] - mean;
    local_sq += d * d;
}
const float rstd = rsqrtf($sum(local_sq) / static_cast<float>(cols) + eps);
$loop {
    yr[c] = $out;
}
"""

_SUMSQ = """
float local_sq = 0.0f;
$loop {
    const float v = $src[c];
    local_sq += v * v;
}
const float total = $sum(local_sq);
$scale_line
$loop {
    yr[c] = $out;
}
"""


def _softmax_body(kind: str) -> str:
    sign = "-" if kind == "softmin" else ""
    if kind == "log_softmax":
        finish = "const float log_sum = logf(row_sum);\n$loop {\n    yr[c] = $sign$src[c] - row_max - log_sum;\n}"
    else:
        finish = "const float inv_sum = 1.0f / row_sum;\n$loop {\n    yr[c] = __expf($sign$src[c] - row_max) * inv_sum;\n}"
    return _SOFTMAX.replace("$finish", finish).replace("$sign", sign)


OPS = {
    "softmax": RowOp("softmax", "a Softmax activation over the last dimension", _softmax_body("softmax")),
    "log_softmax": RowOp("log_softmax", "a LogSoftmax activation over the last dimension", _softmax_body("log_softmax")),
    "softmin": RowOp("softmin", "a Softmin over the last dimension", _softmax_body("softmin")),
    "layernorm": RowOp(
        "layernorm", "Layer Normalization over the last dimension",
        _LAYERNORM.replace("$out", "(${src}[c] - mean) * rstd * gamma[c] + beta[c]"), ("gamma", "beta"), 1e-5,
    ),
    "layernorm_plain": RowOp(
        "layernorm_plain", "Layer Normalization without affine parameters",
        _LAYERNORM.replace("$out", "(${src}[c] - mean) * rstd"), (), 1e-5,
    ),
    "rmsnorm": RowOp(
        "rmsnorm", "RMS Normalization with a learned scale",
        _SUMSQ.replace("$scale_line", "const float inv_rms = rsqrtf(total / static_cast<float>(cols) + eps);")
        .replace("$out", "${src}[c] * inv_rms * weight[c]"),
        ("weight",), 1e-6,
    ),
    "l2norm": RowOp(
        "l2norm", "L2 normalization of each row (F.normalize)",
        _SUMSQ.replace("$scale_line", "// F.normalize divides by max(norm, eps) so a zero row stays finite.\nconst float inv_norm = 1.0f / fmaxf(sqrtf(total), eps);")
        .replace("$out", "${src}[c] * inv_norm"),
        (), 1e-12,
    ),
}


def task_source(op: RowOp, shape: tuple[int, ...]) -> str:
    names = ["batch_size", "seq_len", "features"][-len(shape):] if len(shape) > 1 else ["features"]
    if len(shape) == 2:
        names = ["batch_size", "features"]
    consts = "\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True))
    inputs = f"x = torch.randn({', '.join(names)})\nreturn [x]"
    fwd = "def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {expr}"
    doc = f"Simple model that performs {op.doc}."
    if op.name in ("softmax", "log_softmax", "softmin"):
        expr = {"softmax": "torch.softmax(x, dim=-1)", "log_softmax": "torch.log_softmax(x, dim=-1)",
                "softmin": "F.softmin(x, dim=-1)"}[op.name]
        return task_module(doc=doc, forward=fwd.format(expr=expr), constants=consts, inputs=inputs,
                           functional=op.name == "softmin")
    if op.name.startswith("layernorm"):
        affine = op.name == "layernorm"
        return task_module(
            doc=doc, init_args="features: int",
            init_body=f"self.ln = nn.LayerNorm(features{'' if affine else ', elementwise_affine=False'})",
            forward=fwd.format(expr="self.ln(x)"), constants=consts, inputs=inputs, init_inputs="[features]",
        )
    if op.name == "rmsnorm":
        return task_module(
            doc=doc, init_args="features: int, eps: float = 1e-6",
            init_body="self.eps = eps\nself.weight = nn.Parameter(torch.ones(features))",
            forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "    rms_inv = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)\n"
            "    return x * rms_inv * self.weight",
            constants=consts, inputs=inputs, init_inputs="[features]",
        )
    return task_module(doc=doc, forward=fwd.format(expr="F.normalize(x, p=2.0, dim=-1)"), constants=consts,
                       inputs=inputs, functional=True)


def model_new_source(op: RowOp, ext: str, fn: str) -> str:
    if op.name in ("softmax", "log_softmax", "softmin", "l2norm"):
        eps = f", {op.eps!r}" if op.eps is not None else ""
        return fill(
            """
            class ModelNew(nn.Module):
                def __init__(self):
                    super().__init__()

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return $ext.$fn(x.contiguous()$eps)
            """, ext=ext, fn=fn, eps=eps,
        )
    if op.name.startswith("layernorm"):
        affine = op.name == "layernorm"
        args = "self.ln.weight, self.ln.bias, self.ln.eps" if affine else "self.ln.eps"
        return fill(
            """
            class ModelNew(nn.Module):
                def __init__(self, features: int):
                    super().__init__()
                    self.ln = nn.LayerNorm(features$aff)

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return $ext.$fn(x.contiguous(), $args)
            """, ext=ext, fn=fn, args=args, aff="" if affine else ", elementwise_affine=False",
        )
    return fill(
        """
        class ModelNew(nn.Module):
            def __init__(self, features: int, eps: float = 1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.ones(features))

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return $ext.$fn(x.contiguous(), self.weight, self.eps)
        """, ext=ext, fn=fn,
    )


def row_spec(op_name: str, style: str, shape: tuple[int, ...], threads: int, variant: int) -> Spec:
    """A row-wise op over the last dim. style: shared-memory | warp-shuffle | warp-per-row | dyn-smem | vectorised."""
    op = OPS[op_name]
    cols = shape[-1]
    tparams = "".join(f", const float* __restrict__ {p}" for p in op.params)
    eps_param = ", float eps" if op.eps is not None else ""
    sig = f"const float* __restrict__ x{tparams}, float* __restrict__ y, int64_t rows, int cols{eps_param}"
    kname = f"{op.name}_kernel"
    rk = row_kernel(op.body, style, kname, sig, threads)
    tensor_args = "".join(f", torch::Tensor {p}" for p in op.params)
    eps_arg = ", double eps" if op.eps is not None else ""
    fn = f"{op.name}_cuda"
    call_args = "x.data_ptr<float>()" + "".join(f", {p}.data_ptr<float>()" for p in op.params)
    call_args += ", y.data_ptr<float>(), rows, cols" + (", static_cast<float>(eps)" if op.eps is not None else "")
    if style == "vectorised":
        call_args += ", aligned"
    param_checks = "".join(
        f'\n    TORCH_CHECK({p}.numel() == x.size(-1), "{p} must have x.size(-1) elements");' for p in op.params
    )
    host_fn = fill(
        """
        torch::Tensor $fn(torch::Tensor x$tensor_args$eps_arg) {
        $checks$param_checks
            TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
            auto y = torch::empty_like(x);
            const int cols = static_cast<int>(x.size(-1));
            const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
            if (rows == 0) {
                return y;
            }
            $grid
            $launch($call_args);
        $check
            return y;
        }
        """,
        fn=fn, tensor_args=tensor_args, eps_arg=eps_arg, checks=host.input_checks(variant, "x", *op.params),
        param_checks=param_checks, grid=rk.grid, launch=rk.launch, call_args=call_args, check=host.launch_check(variant, kname),
    )
    extra = ["<cmath>"] + (["<cstdint>"] if style == "vectorised" else [])
    cuda = "\n\n".join([host.preamble(variant, *extra), rk.helpers.strip("\n"), rk.kernel, host_fn])
    decl = f"torch::Tensor {fn}(torch::Tensor x{tensor_args}{eps_arg});"
    ext = f"{op.name}_ext"
    return Spec(
        family=FAMILY, op=op.name, styles=rk.styles, task=task_source(op, shape), cuda_source=cuda, cpp_source=decl,
        functions=(fn,), ext_name=ext, model_new=model_new_source(op, ext, fn), hint=rk.hint,
        template=f"softmax_norm.row.{style}", params={"shape": list(shape), "threads": threads, "cols": cols},
    )


# (op, style, shape, threads)
_ROW_CONFIGS: tuple[tuple[str, str, tuple[int, ...], int], ...] = (
    ("softmax", "shared-memory", (16, 1000), 256),
    ("softmax", "warp-shuffle", (32, 2047), 512),
    ("softmax", "warp-per-row", (150, 333), 128),
    ("softmax", "dyn-smem", (8, 4099), 256),
    ("softmax", "vectorised", (12, 2048), 256),
    ("log_softmax", "warp-shuffle", (16, 1500), 256),
    ("log_softmax", "warp-per-row", (300, 129), 256),
    ("log_softmax", "dyn-smem", (10, 3001), 128),
    ("softmin", "shared-memory", (24, 777), 128),
    ("layernorm", "shared-memory", (16, 1031), 256),
    ("layernorm", "warp-shuffle", (4, 8, 770), 256),
    ("layernorm", "dyn-smem", (8, 2500), 512),
    ("layernorm", "warp-per-row", (100, 200), 64),
    ("layernorm_plain", "warp-shuffle", (10, 999), 128),
    ("layernorm_plain", "vectorised", (2, 3, 2048), 256),
    ("rmsnorm", "warp-per-row", (128, 257), 128),
    ("rmsnorm", "warp-shuffle", (16, 2000), 256),
    ("rmsnorm", "vectorised", (8, 4096), 512),
    ("rmsnorm", "shared-memory", (20, 1111), 256),
    ("l2norm", "warp-per-row", (333, 100), 256),
    ("l2norm", "warp-shuffle", (12, 3000), 512),
    ("l2norm", "dyn-smem", (7, 1234), 128),
)


def specs() -> list[Spec]:
    """All row-kernel softmax / normalisation samples, in a fixed order."""
    return [row_spec(op, style, shape, threads, variant=i) for i, (op, style, shape, threads) in enumerate(_ROW_CONFIGS)]
