"""Task validation (robust-kbench's filters, arXiv 2509.14279): flag tasks a degenerate
candidate could pass because the reference output carries too little information.

    cuset suite validate                 # the bundled suite
    cuset suite validate corpus          # the training corpus's tasks
    cuset suite validate path/to/KernelBench --json
    rows = validate_tasks(load_suite())  # one row per task: id, flags, figures

Filters, each on the reference `Model`'s outputs (seed 42, the task's own get_inputs()):

- near_constant: the output's standard deviation is below REL_SPREAD of its mean magnitude
  (or it has a single value): a constant kernel passes;
- tiny_axis_spread: along some axis of size > 1 the output barely varies (mean spread along
  that axis below REL_SPREAD of the overall spread): a kernel that computes one slice and
  broadcasts it passes;
- input_independent: two different input draws give outputs equal within the v0 tolerance:
  a kernel that ignores its inputs passes;
- weight_independent: a model built under another seed (other initial weights) gives the same
  output on the same inputs, for a task with parameters: a kernel that ignores the weights passes.

A task's documented exception goes in its meta.toml as `validate_ok = ["filter", ...]` with a
`validate_why` line; such flags are reported as accepted instead of flagged. The references run
in one sandboxed child process (`python -m cuset.evaluate.suite.validate FILES...`, one JSON line
per task), never in the caller's.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

REL_SPREAD = 1e-3
FILTERS = ("near_constant", "tiny_axis_spread", "input_independent", "weight_independent")


def output_flags(out: Any, other_inputs: Any, other_weights: Any | None) -> tuple[list[str], dict[str, Any]]:
    """The filters over one task's outputs: `out` (seed 42), `other_inputs` (another input draw),
    `other_weights` (another model seed, same inputs; None for a task without parameters).
    Each argument is a flat list of tensors. Returns (flags, figures)."""
    import torch

    flags: list[str] = []
    figures: dict[str, Any] = {}
    for k, o in enumerate(out):
        x = o.detach().double()
        label = f"output {k}: " if len(out) > 1 else ""
        if x.numel() < 2:
            continue
        spread, scale = float(x.std()), float(x.abs().mean())
        figures[f"std_{k}"] = spread
        if spread <= REL_SPREAD * max(scale, 1e-12) or int(torch.unique(x).numel()) == 1:
            flags.append(f"near_constant: {label}std {spread:.3g} against mean |value| {scale:.3g}")
            continue
        for axis, size in enumerate(x.shape):
            if size > 1 and x.numel() > size:
                along = float(x.std(dim=axis).mean())
                if along <= REL_SPREAD * spread:
                    flags.append(f"tiny_axis_spread: {label}axis {axis} (size {size}): mean spread {along:.3g} against {spread:.3g} overall")
    if _same(out, other_inputs):
        flags.append("input_independent: another input draw gives the same output")
    if other_weights is not None and _same(out, other_weights):
        flags.append("weight_independent: other initial weights give the same output")
    return flags, figures


def _same(a: list[Any], b: list[Any]) -> bool:
    import torch

    return len(a) == len(b) and all(x.shape == y.shape and bool(torch.allclose(x.double(), y.double(), atol=1e-2, rtol=1e-2))
                                    for x, y in zip(a, b))


def probe(task: dict[str, Any], seed: int = 42) -> tuple[list[str], dict[str, Any]]:
    """Run the filters on one loaded task namespace (trusted project code: call in a child)."""
    import torch

    from cuset.evaluate.inputs import flat_tensors
    from cuset.evaluate.reference import build_model

    model, _ = build_model(task, seed)
    other, _ = build_model(task, seed + 1)
    with torch.no_grad():
        torch.manual_seed(seed)
        inputs = task["get_inputs"]()
        kept = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
        out = flat_tensors(model(*inputs))
        torch.manual_seed(seed + 1000)
        out_inputs = flat_tensors(model(*task["get_inputs"]()))
        has_weights = any(p.numel() for p in model.parameters())
        out_weights = flat_tensors(other(*kept)) if has_weights else None
    return output_flags(out, out_inputs, out_weights)


def _accepted(meta_path: Path | None) -> tuple[set[str], str]:
    if meta_path is None or not meta_path.is_file():
        return set(), ""
    meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
    return set(meta.get("validate_ok", [])), str(meta.get("validate_why", ""))


def validate_tasks(tasks: list[Any], timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """One row per task: id, flags (not accepted), accepted (documented in meta.toml), why,
    figures, error. The references run in one sandboxed child process."""
    from cuset.evaluate.sandbox import Limits, run, scratch

    rows: list[dict[str, Any]] = []
    with scratch(prefix="cuset-validate-") as tmp:
        files = []
        for k, t in enumerate(tasks):
            path = tmp / f"task_{k}.py"
            path.write_text(t.task_text, encoding="utf-8")
            files.append(path.name)
        outcome = run([sys.executable, "-m", "cuset.evaluate.suite.validate", *files], cwd=tmp,
                      limits=Limits(wall_s=timeout_s, cpu_s=timeout_s * 2, memory_mb=8192, processes=256), env={"OMP_NUM_THREADS": "1"})
    found = {}
    for line in outcome.stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            found[data["file"]] = data
    for k, t in enumerate(tasks):
        data = found.get(f"task_{k}.py", {"flags": [], "figures": {}, "error": f"no result ({outcome.status}: {outcome.message})"})
        ok, why = _accepted(t.task_path.parent / "meta.toml" if getattr(t, "task_path", None) else None)
        flags = [f for f in data["flags"] if f.split(":")[0] not in ok]
        accepted = [f for f in data["flags"] if f.split(":")[0] in ok]
        rows.append({"id": t.id, "flags": flags, "accepted": accepted, "why": why if accepted else "", "figures": data["figures"],
                     "error": data.get("error", "")})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Child side: probe each task file, one JSON line per file."""
    from cuset.evaluate.cpu.kernelbench import _cpu_mode, _error_text, _exec_file

    for name in argv if argv is not None else sys.argv[1:]:
        row: dict[str, Any] = {"file": name, "flags": [], "figures": {}}
        try:
            with _cpu_mode():
                row["flags"], row["figures"] = probe(_exec_file(Path(name), "__cuset_task__"))
        except Exception as exc:  # noqa: BLE001 - a broken task is a row, not the end of the run
            row["error"] = _error_text(exc)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
