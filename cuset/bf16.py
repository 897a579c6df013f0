"""bfloat16 matmuls on CPUs that have no bfloat16 instructions, computed as float32 GEMMs.

On a CPU without avx512_bf16 / AMX (an AVX2 EPYC, say) torch has no fast kernel for a bfloat16
matrix product: measured on a 2-core AVX2 EPYC, torch.mm of bf16 [512 x 896] @ [896 x 4864] ran
at 1.1 GFLOP/s against 84 in float32, and one bf16-autocast LoRA step of coder-0.5b over 64
tokens took 142 s, 99% of it in aten::mm (2.9 s in float32). Such a machine can still run a
bfloat16 recipe (bf16 autocast training, bf16 generation, bf16 scoring) without changing its
numbers: a bf16 product is defined by bf16 inputs, a float32 accumulation and a bf16 result, and a
float32 GEMM over the same bf16 values (exact in float32), rounded back to bf16, is that. What
differs is only the order of the float32 sums, as between any two bf16 kernels (measured: 99.985%
of a bf16 [512 x 4864] product bit-identical to torch's own bf16 kernel, the rest one bf16 ulp).

Attention is the exception: torch's CPU flash kernel rounds the softmax probabilities to bf16
before multiplying them by V, and the float32 run does not, so its outputs are the exact ones
rounded once (measured on a small causal case: 100% bit-identical to a float64 reference rounded
to bf16, 68% to torch's bf16 kernel, 0.2-0.3% apart in relative L2, gradients likewise). Rerouting
it anyway is what makes a long-sequence step fast: torch's bf16 flash backward was ~44% of a
1,024-token coder-0.5b LoRA step on such a CPU.

`Float32Matmuls` is a TorchDispatchMode: inside it, the matrix products and the CPU flash
attention, forward and backward, whose floating-point tensor inputs are all bf16 on the CPU run
on their float32 upcasts and give back outputs in the dtypes the bf16 op gives
(`FLOAT32_MATMUL_OPS`). Every other op, and any mix of dtypes, runs untouched. Given a model whose
weights stay fixed (generation, scoring under inference_mode, where a linear layer receives its
weight itself), it keeps one float32 copy of each bf16 weight instead of converting them at every
step: 4 more bytes per parameter while the block runs (~2.5 GB for coder-0.5b). Each product also
makes its float32 result before rounding it (a 1,024-row chunk of coder-0.5b logits: ~0.6 GB).

    with cpu_matmuls("bfloat16", "cpu"):       # a no-op where bf16 is native or the dtype is not bf16
        trainer.train()

`CUSET_BF16_MATMULS=native` turns it off, to run or measure torch's own bf16 kernels.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

FLOAT32_MATMUL_OPS = frozenset(
    {
        aten.mm.default,
        aten.mv.default,
        aten.dot.default,
        aten.addmm.default,
        aten.addmv.default,
        aten.bmm.default,
        aten.baddbmm.default,
        aten.matmul.default,
        aten.linear.default,  # reaches the mode undecomposed under inference_mode
        aten._scaled_dot_product_flash_attention_for_cpu.default,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
    }
)


def _is_cpu_bf16(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16 and value.device.type == "cpu"


# Arguments that are float32 in the bf16 op itself: the flash backward's logsumexp.
FLOAT32_ARGUMENTS = {aten._scaled_dot_product_flash_attention_for_cpu_backward.default: 5}


def _all_cpu_bf16(func: Any, args: tuple, kwargs: dict) -> bool:
    """Every floating-point tensor argument is bf16 on the CPU (bool masks and FLOAT32_ARGUMENTS
    aside), and there is one: a mix of dtypes goes to torch as is, to fail or promote as it would
    without the mode."""
    skip = FLOAT32_ARGUMENTS.get(func)
    values = [v for i, v in enumerate(args) if i != skip] + list(kwargs.values())
    tensors = [v for v in values if isinstance(v, torch.Tensor) and v.is_floating_point()]
    return bool(tensors) and all(_is_cpu_bf16(t) for t in tensors)


class Float32Matmuls(TorchDispatchMode):
    """Runs FLOAT32_MATMUL_OPS on bf16 CPU tensors as float32 ops on their (exact) upcasts, with
    outputs rounded to the dtypes the bf16 op returns. `weights`: tensors meant to stay fixed while
    the mode is active (a model's bf16 parameters); their float32 copies are made once and reused,
    and made again if a weight is changed in place or given new storage. `calls` counts the ops
    it rerouted, `cached` the weights it holds float32 copies of."""

    def __init__(self, weights: list[torch.Tensor] | None = None) -> None:
        super().__init__()
        self.calls = 0
        self._fixed = {id(w): w for w in weights or [] if _is_cpu_bf16(w)}
        self._copies: dict[int, tuple[int, int, torch.Tensor]] = {}

    @property
    def cached(self) -> int:
        return len(self._copies)

    def _float(self, value: Any) -> Any:
        if not _is_cpu_bf16(value):
            return value
        key = id(value)
        if self._fixed.get(key) is not value:
            return value.float()
        stamp = (value._version, value.data_ptr())
        held = self._copies.get(key)
        if held is None or held[:2] != stamp:
            held = self._copies[key] = (*stamp, value.detach().float())
        return held[2]

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func not in FLOAT32_MATMUL_OPS or not _all_cpu_bf16(func, args, kwargs):
            return func(*args, **kwargs)
        self.calls += 1
        out = func(*[self._float(a) for a in args], **{k: self._float(v) for k, v in kwargs.items()})
        return _like_bf16_op(func, args, kwargs, out)


def _like_bf16_op(func: Any, args: tuple, kwargs: dict, out: Any) -> Any:
    """`out` (from the float32 run) cast to the dtypes `func` gives on the bf16 inputs, read off a
    run on meta tensors (no compute; inside __torch_dispatch__ the mode itself is off)."""

    def meta(value: Any) -> Any:
        return value.to("meta") if isinstance(value, torch.Tensor) else value

    shapes = func(*[meta(a) for a in args], **{k: meta(v) for k, v in kwargs.items()})
    if isinstance(out, torch.Tensor):
        return out.to(shapes.dtype)
    return type(out)(o.to(s.dtype) if isinstance(o, torch.Tensor) else o for o, s in zip(out, shapes, strict=True))


def cpu_bf16_fast() -> bool:
    """This machine's CPU computes bfloat16 natively (avx512_bf16 or amx_bf16 in /proc/cpuinfo);
    elsewhere torch emulates it, many times slower than float32. A property of the machine, read
    by the training config (`bf16: null` resolves to it without a GPU) and by every bf16 block."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def native_bf16_matmuls(device: str = "cpu") -> bool:
    """bf16 matrix products are native where `device` runs them: a GPU, or a CPU with
    avx512_bf16 / AMX (cpu_bf16_fast)."""
    return str(device).startswith("cuda") or cpu_bf16_fast()


def enabled(dtype: str, device: str = "cpu") -> bool:
    """Float32Matmuls is used for `dtype` on `device`: bfloat16 on a CPU without native bf16
    products, unless $CUSET_BF16_MATMULS is 'native'."""
    if os.environ.get("CUSET_BF16_MATMULS", "").strip().lower() == "native":
        return False
    return str(dtype).removeprefix("torch.") == "bfloat16" and not native_bf16_matmuls(device)


@contextlib.contextmanager
def cpu_matmuls(dtype: str, device: str = "cpu", model: Any = None) -> Iterator[Float32Matmuls | None]:
    """Float32Matmuls for the block where `enabled(dtype, device)`, else nothing. `model`: pass it
    when its weights stay fixed in the block (inference), so their float32 copies are kept."""
    if not enabled(dtype, device):
        yield None
        return
    weights = list(model.parameters()) if model is not None else None
    with Float32Matmuls(weights) as mode:
        yield mode
