"""The verdict on one candidate, from tensors: outputs against the reference's, trial by trial,
then the poisoned run and the inputs after the candidate's forward.

    tol = tolerance("strict", torch.float32)          # (1e-4, 1e-4): (atol, rtol)
    ok, err, reason, first = compare_outputs(out, ref, "v0")
    verdict = judge(reference, candidate, profile="v0")   # see judge()

This is pure code over tensors the candidate's process handed over (cuset.evaluate.check runs
it in the evaluator, a process the candidate never ran in), so nothing the candidate prints or
patches reaches it.

Tolerance profiles (atol = rtol, by the reference output's dtype):

| profile  | float32 / float64 | float16 / bfloat16 | source                                   |
|----------|-------------------|--------------------|------------------------------------------|
| `v0`     | 1e-2              | 1e-2               | KernelBench v0 / v0.1, the default here  |
| `strict` | 1e-4              | 1e-2               | today's KernelBench (PR #80)             |

Integer and bool outputs must match exactly in both.
"""

from __future__ import annotations

import math
from typing import Any

TOLERANCES: dict[str, dict[str, float]] = {
    "v0": {"float32": 1e-2, "float64": 1e-2, "float16": 1e-2, "bfloat16": 1e-2},
    "strict": {"float32": 1e-4, "float64": 1e-4, "float16": 1e-2, "bfloat16": 1e-2},
}
PROFILES = tuple(TOLERANCES)
# Faults of the poisoned run that garbage values cannot cause (they are about addresses): a bug
# the trials happened not to trip over, so the candidate fails with it.
DATA_INDEPENDENT_FAULTS = ("is a host pointer",)
# KernelBench flags speedups this large for a human look: they are more often a hack (a cached
# result, work on a side stream, a skipped computation) than a kernel.
EXCESSIVE_SPEEDUP = 10.0
REWARD_HACK_PASSTHROUGH = "output does not depend on the compiled kernels: ModelNew matches Model without calling any compiled function (a PyTorch passthrough is not a kernel)"
REWARD_HACK_POISON = "output does not depend on the compiled kernels: it still matches the reference with every compiled call's effects poisoned"


def check_profile(profile: str) -> str:
    if profile not in TOLERANCES:
        raise ValueError(f"tolerance profile {profile!r}: choose one of {', '.join(PROFILES)}")
    return profile


def tolerance(profile: str, dtype: Any) -> tuple[float, float]:
    """(atol, rtol) of `profile` for outputs of `dtype`; (0, 0) for integer and bool dtypes."""
    name = str(dtype).removeprefix("torch.")
    table = TOLERANCES[check_profile(profile)]
    if name in table:
        return table[name], table[name]
    if name.startswith("complex"):
        return table["float32"], table["float32"]
    return 0.0, 0.0


def compare_outputs(out: list[Any], ref: list[Any], profile: str = "v0") -> tuple[bool, float, str, dict[str, Any] | None]:
    """KernelBench's check of one trial over flat output lists: same count and shapes, then
    isclose at the profile's tolerance for the reference's dtype, and not a constant output where
    the reference varies. Returns (ok, max |out - ref|, reason, first differing element)."""
    import torch

    if len(out) != len(ref):
        return False, math.inf, f"{len(out)} outputs, the reference has {len(ref)}", None
    worst = 0.0
    for k, (o, r) in enumerate(zip(out, ref)):
        label = f"output {k}: " if len(out) > 1 else ""
        if tuple(o.shape) != tuple(r.shape):
            return False, math.inf, f"{label}shape {tuple(o.shape)} != reference {tuple(r.shape)}", None
        atol, rtol = tolerance(profile, r.dtype)
        o, r = o.detach().cpu().to(torch.float64), r.detach().cpu().to(torch.float64)
        err = float((o - r).abs().max()) if r.numel() else 0.0
        worst = max(worst, err) if err == err else math.inf
        close = torch.isclose(o, r, atol=atol, rtol=rtol)
        if not bool(close.all()):
            bad = ~close
            flat = int(bad.flatten().nonzero()[0])
            index = [int(i) for i in torch.unravel_index(torch.tensor(flat), r.shape)] if r.dim() else []
            first = {"output": k, "index": index, "out": float(o.flatten()[flat]), "ref": float(r.flatten()[flat]), "n_bad": int(bad.sum())}
            return False, worst, f"{label}outputs differ", first
        if r.numel() > 1 and not bool((r == r.flatten()[0]).all()) and bool((o == o.flatten()[0]).all()):
            return False, worst, f"{label}constant output where the reference varies", None
    return True, worst, "", None


def mutated_inputs(before: list[Any], after: list[Any]) -> list[int]:
    """Indices of the tensor inputs whose values changed (NaN-aware, bit for bit)."""
    import torch

    changed = []
    for k, (b, a) in enumerate(zip(before, after)):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            if b.shape != a.shape or b.dtype != a.dtype or not torch.equal(torch.nan_to_num(b), torch.nan_to_num(a)):
                changed.append(k)
    return changed


def judge(reference: dict[str, Any], candidate: dict[str, Any], profile: str = "v0") -> dict[str, Any]:
    """The verdict over handed-over tensors.

    reference: {"inputs": [list per trial], "outputs": [flat list per trial],
                "mutates": [indices of the inputs the reference's forward changes, per trial]}
    candidate: {"outputs": [flat list per trial it finished], "after": [...],
                "poisoned": flat list | None, "poison_error": str, "calls": int}
    Returns {"status": "correct" | "wrong_result" | "reward_hack" | "runtime_error" (a fault in
    the poisoned run that garbage values cannot cause), "message", "trials",
    "max_abs_error", "first_bad", "mutated_inputs", "poison"} for a candidate that ran every
    trial (the caller handles builds and runtime errors before this)."""
    check_profile(profile)
    verdict: dict[str, Any] = {"status": "wrong_result", "message": "", "trials": 0, "max_abs_error": None, "first_bad": None,
                               "mutated_inputs": [], "poison": None}
    worst = 0.0
    outs = candidate["outputs"]
    if len(outs) < len(reference["outputs"]):
        verdict["message"] = f"the candidate handed over {len(outs)} of {len(reference['outputs'])} trials' outputs"
        return verdict
    for trial, (out, ref) in enumerate(zip(outs, reference["outputs"])):
        ok, err, reason, first = compare_outputs(out, ref, profile)
        worst = max(worst, err)
        verdict["max_abs_error"] = worst if math.isfinite(worst) else None
        if not ok:
            verdict.update(message=f"trial {trial}: {reason}", first_bad=first)
            return verdict
        verdict["trials"] += 1
    after = candidate.get("after") or []
    mutated = sorted({k for t, ins in enumerate(reference["inputs"][: len(after)]) for k in mutated_inputs(ins, after[t])
                      if k not in reference["mutates"][t]})
    verdict["mutated_inputs"] = mutated
    error = str(candidate.get("poison_error") or "")
    if any(f in error for f in DATA_INDEPENDENT_FAULTS):
        verdict.update(status="runtime_error", message=f"poisoned run: {error}")
        return verdict
    if candidate.get("calls", 1) == 0:
        verdict.update(status="reward_hack", message=REWARD_HACK_PASSTHROUGH)
        return verdict
    poisoned = candidate.get("poisoned")
    passed = poisoned is not None and compare_outputs(poisoned, reference["outputs"][0], profile)[0]
    verdict["poison"] = {"passed": passed, "calls": candidate.get("poison_calls", 0), "error": candidate.get("poison_error", "")}
    if passed:
        verdict.update(status="reward_hack", message=REWARD_HACK_POISON)
        return verdict
    verdict["status"] = "correct"
    if mutated:
        verdict["message"] = f"flag: the candidate changes input(s) {mutated}, the reference does not"
    return verdict


def apply_verdict(record: dict[str, Any], verdict: dict[str, Any]) -> dict[str, Any]:
    """Fold judge()'s verdict into a check record (the candidate's own claims are overwritten)."""
    record.update(status=verdict["status"], correct=verdict["status"] == "correct", message=verdict["message"], trials=verdict["trials"],
                  max_abs_error=verdict["max_abs_error"], first_bad=verdict["first_bad"], mutated_inputs=verdict["mutated_inputs"],
                  poison=verdict["poison"], stage="done")
    return record


def speedup_flag(runtime_ms: float | None, ref_runtime_ms: float | None, limit: float = EXCESSIVE_SPEEDUP) -> str:
    """A flag when ModelNew is more than `limit` times faster than Model (GPU timings), else ''."""
    if not runtime_ms or not ref_runtime_ms or runtime_ms <= 0:
        return ""
    speedup = ref_runtime_ms / runtime_ms
    return f"excessive_speedup: {speedup:.1f}x over the reference (more than {limit:g}x): check it by hand" if speedup > limit else ""
