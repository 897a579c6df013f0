"""Fused row templates: residual add + LayerNorm / RMSNorm, scale + softmax, ReLU + row sum, MSE.

Each is a row body in the hook language of `rowwise` whose row element is the fused expression
(`(xr[c] + rr[c])`, `(xr[c] * scale)`, ...), so the elementwise step costs no extra pass over
memory; the staged (`dyn-smem`) style stores the fused value in shared memory once.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module
from cuset.data.corpus.rowwise import row_kernel
from cuset.data.corpus.softmax_norm import OPS as ROW_OPS

FAMILY = "fused"


_ROWSUM_BODY = """
float local = 0.0f;
$loop {
    local += fmaxf($src[c], 0.0f);
}
const float total = $sum(local);
if ($leader) {
    y[$row] = total;
}
"""

_MSE_BODY = """
float local = 0.0f;
$loop {
    const float d = $src[c];
    local += d * d;
}
const float total = $sum(local);
if ($leader) {
    y[$row] = total / static_cast<float>(cols);
}
"""

# name -> (body, elem, extra inputs, parameter tensors, scalar name or None, per-row output)
_ROW_FUSED = {
    "add_layernorm": (ROW_OPS["layernorm"].body, "(xr[c] + rr[c])", ("r",), ("gamma", "beta"), "eps", False),
    "add_rmsnorm": (ROW_OPS["rmsnorm"].body, "(xr[c] + rr[c])", ("r",), ("weight",), "eps", False),
    "scale_softmax": (ROW_OPS["softmax"].body, "(xr[c] * scale)", (), (), "scale", False),
    "relu_rowsum": (_ROWSUM_BODY, "xr[c]", (), (), None, True),
    "mse_rows": (_MSE_BODY, "xr[c] - tr[c]", ("t",), (), None, True),
}


# name -> (ModelNew __init__ signature, __init__ body lines, forward parameters); the modules and
# parameters are created in the same order as in Model so seeded construction matches.
_ROW_MODELS = {
    "add_layernorm": ("self, features: int", ["self.ln = nn.LayerNorm(features)"], "x: torch.Tensor, residual: torch.Tensor"),
    "add_rmsnorm": (
        "self, features: int, eps: float = 1e-6",
        ["self.eps = eps", "self.weight = nn.Parameter(torch.ones(features))"],
        "x: torch.Tensor, residual: torch.Tensor",
    ),
    "scale_softmax": ("self, scale: float", ["self.scale = scale"], "x: torch.Tensor"),
    "relu_rowsum": ("self", [], "x: torch.Tensor"),
    "mse_rows": ("self", [], "predictions: torch.Tensor, targets: torch.Tensor"),
}


def _row_fused_task(name: str, shape: tuple[int, int]) -> tuple[str, str]:
    rows, cols = shape
    consts = f"batch_size = {rows}\nfeatures = {cols}"
    two = "x = torch.randn(batch_size, features)\ny = torch.randn(batch_size, features)\nreturn [x, y]"
    one = "x = torch.randn(batch_size, features)\nreturn [x]"
    if name == "add_layernorm":
        return task_module(
            doc="Residual add followed by LayerNorm over the features.", init_args="features: int",
            init_body="self.ln = nn.LayerNorm(features)",
            forward="def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:\n    return self.ln(x + residual)",
            constants=consts, inputs=two, init_inputs="[features]",
        ), "x.contiguous(), residual.contiguous(), self.ln.weight, self.ln.bias, self.ln.eps"
    if name == "add_rmsnorm":
        return task_module(
            doc="Residual add followed by RMSNorm with a learned scale.", init_args="features: int, eps: float = 1e-6",
            init_body="self.eps = eps\nself.weight = nn.Parameter(torch.ones(features))",
            forward="def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:\n"
            "    h = x + residual\n    return h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight",
            constants=consts, inputs=two, init_inputs="[features]",
        ), "x.contiguous(), residual.contiguous(), self.weight, self.eps"
    if name == "scale_softmax":
        return task_module(
            doc="Scales the logits (e.g. by 1/sqrt(d)) and applies softmax over the last dimension.",
            init_args="scale: float", init_body="self.scale = scale",
            forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return torch.softmax(x * self.scale, dim=-1)",
            constants=consts + "\nscale = 0.125", inputs=one, init_inputs="[scale]",
        ), "x.contiguous(), self.scale"
    if name == "relu_rowsum":
        return task_module(
            doc="Applies ReLU and sums each row.",
            forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return torch.relu(x).sum(dim=-1)",
            constants=consts, inputs=one,
        ), "x.contiguous()"
    return task_module(
        doc="Mean squared error per row between predictions and targets.",
        forward="def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:\n"
        "    return ((predictions - targets) ** 2).mean(dim=-1)",
        constants=consts, inputs="predictions = torch.randn(batch_size, features)\ntargets = torch.randn(batch_size, features)\nreturn [predictions, targets]",
    ), "predictions.contiguous(), targets.contiguous()"


def row_fused_spec(name: str, style: str, shape: tuple[int, int], threads: int, variant: int) -> Spec:
    """A fused row op built on `softmax_norm.row_kernel`; style as there."""
    body, elem, inputs, params, scalar, per_row = _ROW_FUSED[name]
    ins = ("x", *inputs)
    sig = ", ".join(f"const float* __restrict__ {n}" for n in (*ins, *params))
    sig += ", float* __restrict__ y, int64_t rows, int cols" + (f", float {scalar}" if scalar else "")
    kname = f"{name}_kernel"
    rk = row_kernel(body, style, kname, sig, threads, elem=elem, per_row_out=per_row)
    host_names = {"x": "x", "r": "residual", "t": "targets"}
    tensors = [host_names[n] for n in ins] + list(params)
    args = ", ".join(f"torch::Tensor {t}" for t in tensors) + (f", double {scalar}" if scalar else "")
    same = "".join(
        f'\n    TORCH_CHECK({t}.sizes() == x.sizes(), "{t} must match x");' for t in tensors[1 : len(ins)]
    ) + "".join(f'\n    TORCH_CHECK({p}.numel() == x.size(-1), "{p} must have x.size(-1) elements");' for p in params)
    out = "torch::empty(x.sizes().slice(0, x.dim() - 1), x.options())" if per_row else "torch::empty_like(x)"
    call = ", ".join(f"{t}.data_ptr<float>()" for t in tensors) + ", y.data_ptr<float>(), rows, cols"
    call += f", static_cast<float>({scalar})" if scalar else ""
    fn = f"{name}_cuda"
    host_fn = fill(
        """
        torch::Tensor $fn($args) {
        $checks$same
            auto y = $out;
            const int cols = static_cast<int>(x.size(-1));
            const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
            if (rows == 0) {
                return y;
            }
            $grid
            $launch($call);
        $check
            return y;
        }
        """,
        fn=fn, args=args, checks=host.input_checks(variant, *tensors), same=same, out=out, grid=rk.grid, launch=rk.launch,
        call=call, check=host.launch_check(variant, kname),
    )
    task, call_py = _row_fused_task(name, shape)
    init_sig, init_lines, fwd_sig = _ROW_MODELS[name]
    model_new = "\n".join(
        ["class ModelNew(nn.Module):", f"    def __init__({init_sig}):", "        super().__init__()"]
        + [f"        {line}" for line in init_lines]
        + ["", f"    def forward(self, {fwd_sig}) -> torch.Tensor:", f"        return {name}_ext.{fn}({call_py})"]
    )
    return Spec(
        family=FAMILY, op=name, styles=rk.styles, task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<cmath>"), rk.helpers.strip("\n"), rk.kernel, host_fn]),
        cpp_source=f"torch::Tensor {fn}({args});", functions=(fn,), ext_name=f"{name}_ext", model_new=model_new,
        hint=rk.hint.replace("per row", "per row, fusing the elementwise step into the row pass"),
        template=f"fused.row.{style}", params={"shape": list(shape), "threads": threads},
    )
