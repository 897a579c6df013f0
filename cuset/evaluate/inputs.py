"""Trial inputs a candidate cannot anticipate, and the files that carry values between processes.

    seeds = trial_seeds(42, 5)                          # KernelBench's per-trial seeds
    inputs, info = draw_inputs(task["get_inputs"], seeds[2], DISTRIBUTIONS[2])
    info   # {"seed": 1608637542, "distribution": "heavy_tailed", "redrawn": [0, 1]}
    save_values(folder / "trial_2", inputs); load_values(folder / "trial_2")

Trial k draws its floating-point tensors from DISTRIBUTIONS[k % 5]: the task's own get_inputs()
(what KernelBench uses), uniform, heavy-tailed (Student t with 3 degrees of freedom, or Pareto
for non-negative data), normal, and the task's own draw scaled by 2.5 and shifted. A candidate
tuned to one distribution (a constant, a memoised answer, a kernel that only works on N(0, 1)
data, a softmax without the max subtracted) fails on another.

The redraw respects what get_inputs() returns: only floating tensors with more than two
distinct, not all integral, values are redrawn (ids, masks, labels and index tensors are kept),
shapes, dtypes and strides are kept, non-negative data stays non-negative and data within
[-1, 1] (probabilities, arguments of asin) stays within the sample's own range. The reference
stage (cuset.evaluate.reference) falls back to the task's own draw for a trial whose redrawn
inputs make the reference output non-finite, and records that.

Files: `save_values(stem, values)` writes stem.safetensors (tensors, each with its storage, so
strided views survive) and stem.json (the list's structure and any plain Python values). No
pickle is involved, so a file written by a sandboxed candidate is safe to read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

DISTRIBUTIONS = ("task", "uniform", "heavy_tailed", "normal", "scaled_shifted")


def trial_seeds(seed: int, trials: int) -> list[int]:
    """One seed per trial, derived from the check's seed as the KernelBench harness does."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [int(s) for s in torch.randint(0, 2**31 - 1, (trials,), generator=gen).tolist()]


def _redrawable(t: Any) -> bool:
    import torch

    if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() < 3:
        return False
    x = t.detach().float()
    if not bool(torch.isfinite(x).all()):
        return False
    if bool((x == x.round()).all()):  # float-coded labels, counts, masks
        return False
    return int(torch.unique(x).numel()) > 2


def _redraw(t: Any, distribution: str, gen: Any) -> Any:
    """A new tensor like t (shape, dtype, strides) with values from `distribution`, fitted to
    t's own sample: its range, mean and spread."""
    import torch

    x = t.detach().float()
    lo, hi = float(x.min()), float(x.max())
    mean, std = float(x.mean()), float(x.std())
    std = std if std > 0 else 1.0
    nonneg, bounded = lo >= 0, max(abs(lo), abs(hi)) <= 1.0
    n = t.numel()
    if distribution == "uniform":
        v = lo + (hi - lo) * torch.rand(n, generator=gen)
    elif distribution == "normal":
        v = torch.randn(n, generator=gen)
        v = v.abs() * (mean * math.sqrt(math.pi / 2)) if nonneg else mean + std * v
    elif distribution == "heavy_tailed":
        if nonneg:  # Pareto(alpha = 3): its mean is 1.5 x_m, so x_m = mean / 1.5
            u = torch.rand(n, generator=gen).clamp_min(1e-12)
            v = (max(mean, 1e-3) / 1.5) * u.pow(-1.0 / 3.0)
        else:  # Student t, 3 degrees of freedom, scaled to the sample's spread (its variance is 3)
            z = torch.randn(n, generator=gen)
            chi2 = torch.randn(3, n, generator=gen).pow(2).sum(0)
            v = mean + std * z / torch.sqrt(chi2 / 3.0) / math.sqrt(3.0)
    elif distribution == "scaled_shifted":
        v = x.reshape(-1) * 2.5 + (0.1 * abs(mean) if nonneg else 0.5 * std)
    else:
        raise ValueError(f"distribution {distribution!r}: choose one of {', '.join(DISTRIBUTIONS)}")
    if nonneg:
        v = v.clamp_min(lo)
    if bounded:
        v = v.clamp(lo, hi)
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
    out.copy_(v.reshape(t.shape).to(t.dtype))
    return out


def draw_inputs(get_inputs: Callable[[], list[Any]], seed: int, distribution: str) -> tuple[list[Any], dict[str, Any]]:
    """get_inputs() under `seed`, its floating tensors redrawn from `distribution` (seeded from
    the same seed). Returns (inputs, {"seed", "distribution", "redrawn": indices})."""
    import torch

    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution {distribution!r}: choose one of {', '.join(DISTRIBUTIONS)}")
    torch.manual_seed(seed)
    inputs = list(get_inputs())
    redrawn: list[int] = []
    if distribution != "task":
        gen = torch.Generator().manual_seed(seed ^ 0x5EED)
        for k, v in enumerate(inputs):
            if _redrawable(v):
                inputs[k] = _redraw(v, distribution, gen)
                redrawn.append(k)
    return inputs, {"seed": seed, "distribution": distribution, "redrawn": redrawn}


# ---------------------------------------------------------------- files between processes


def _plain(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(not hasattr(v, "shape") for v in value):
        return [_plain(v, where) for v in value]
    raise ValueError(f"{where}: a {type(value).__name__} cannot be handed between processes (tensors and plain values only)")


def save_values(stem: Path, values: list[Any]) -> None:
    """Write `values` (tensors and plain Python values) as stem.safetensors + stem.json."""
    import torch
    from safetensors.torch import save_file

    tensors: dict[str, Any] = {}
    layout: list[dict[str, Any]] = []
    for k, v in enumerate(values):
        if isinstance(v, torch.Tensor):
            v = v.detach().cpu()
            n = v.untyped_storage().nbytes() // max(1, v.element_size())
            base = torch.empty(0, dtype=v.dtype).set_(v.untyped_storage(), 0, (n,), (1,)).clone()
            tensors[f"v{k}"] = base
            layout.append({"tensor": f"v{k}", "size": list(v.shape), "stride": list(v.stride()), "offset": v.storage_offset()})
        else:
            layout.append({"value": _plain(v, f"{stem.name} item {k}"), "tuple": isinstance(v, tuple)})
    stem.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(stem.with_suffix(".safetensors")))
    stem.with_suffix(".json").write_text(json.dumps(layout), encoding="utf-8")


def load_values(stem: Path) -> list[Any]:
    """The values save_values wrote; raises ValueError naming the file when it is missing or bad."""
    from safetensors.torch import load_file

    try:
        layout = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        tensors = load_file(str(stem.with_suffix(".safetensors")))
        out: list[Any] = []
        for item in layout:
            if "tensor" in item:
                base = tensors[item["tensor"]]
                out.append(base.as_strided([int(s) for s in item["size"]], [int(s) for s in item["stride"]], int(item["offset"])))
            else:
                value = item["value"]
                out.append(tuple(value) if item.get("tuple") and isinstance(value, list) else value)
        return out
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise ValueError(f"{stem}: cannot read the handed-over values ({type(exc).__name__}: {exc})") from None


def flat_tensors(x: Any) -> list[Any]:
    """A model's output as a flat list of tensors (numbers become 0-d tensors), as compared."""
    import torch

    if isinstance(x, (list, tuple)):
        return [t for item in x for t in flat_tensors(item)]
    if isinstance(x, torch.Tensor):
        return [x.detach()]
    return [torch.as_tensor(x)]
