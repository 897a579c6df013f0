"""The reference side of a check: trial inputs and the task's `Model` outputs, computed in a
process no candidate code runs in, and handed to the candidate (inputs only) and the verdict.

    python -m cuset.evaluate.reference TASK.py --out DIR [--trials 5] [--seed 42] [--device cpu]
    # DIR/inputs/trial_K.*  the inputs of trial K (what the candidate gets)
    # DIR/ref/trial_K.*     the reference's outputs (what the candidate never sees)
    # DIR/meta.json         per trial: seed, distribution, redrawn inputs, fallback; the inputs
    #                       the reference's own forward changes; the last stdout line is a record

    ref = compute_reference(task_namespace, trials=5, seed=42)   # the same, in this process

Protocol (KernelBench's): seed 42 before get_init_inputs() and before the model; trial K's
inputs come from cuset.evaluate.inputs.draw_inputs with the K-th trial seed and the K-th
distribution. A redrawn trial whose reference output is not finite (while the task's own draw
gives finite outputs) falls back to the task's own distribution under its seed, and says so.
Task code is project code (trusted), but it still runs in its own process, so that the
evaluator never executes a task's forward and the reference outputs never enter a sandbox
that a candidate runs in.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cuset.evaluate.inputs import DISTRIBUTIONS, draw_inputs, flat_tensors, load_values, save_values, trial_seeds
from cuset.evaluate.taskcode import cpu_mode, error_text, exec_file
from cuset.evaluate.verdict import mutated_inputs


def _finite(outputs: list[Any]) -> bool:
    import torch

    return all(bool(torch.isfinite(t).all()) for t in outputs if t.is_floating_point() or t.is_complex())


def _clone(values: list[Any]) -> list[Any]:
    import torch

    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def build_model(task: dict[str, Any], seed: int = 42, device: str = "cpu") -> tuple[Any, list[Any]]:
    """The task's Model, built as KernelBench builds it (seed before the init inputs and the model)."""
    import torch

    torch.manual_seed(seed)
    init_inputs = task["get_init_inputs"]()
    torch.manual_seed(seed)
    model = task["Model"](*init_inputs).eval()
    return (model.cuda() if device == "cuda" else model), init_inputs


def to_device(values: list[Any], device: str) -> list[Any]:
    import torch

    return [v.cuda() if device == "cuda" and isinstance(v, torch.Tensor) else v for v in values]


def compute_reference(task: dict[str, Any], trials: int = 5, seed: int = 42, device: str = "cpu") -> dict[str, Any]:
    """Inputs, reference outputs and input mutations of every trial, for a loaded task namespace.
    Returns {"inputs": [[...]] (on the CPU), "outputs": [[flat tensors]], "mutates": [[int]],
    "info": [{"seed", "distribution" (drawn), "planned", "redrawn", "fallback"?}]}."""
    import torch

    model, _ = build_model(task, seed, device)
    ref: dict[str, Any] = {"inputs": [], "outputs": [], "mutates": [], "info": []}
    task_draw_finite = True
    for k, trial_seed in enumerate(trial_seeds(seed, trials)):
        distribution = DISTRIBUTIONS[k % len(DISTRIBUTIONS)]
        for attempt in (distribution, "task"):
            inputs, info = draw_inputs(task["get_inputs"], trial_seed, attempt)
            kept = _clone(inputs)
            run_on = to_device(inputs, device)
            with torch.no_grad():
                outputs = [t.cpu() for t in flat_tensors(model(*run_on))]
            if attempt == "task" or _finite(outputs) or not task_draw_finite:
                break
        info["planned"] = distribution
        if attempt != distribution:
            info["fallback"] = f"{distribution}: the reference output is not finite on it; the task's own draw instead"
        if k == 0:
            task_draw_finite = _finite(outputs)
        ref["inputs"].append(kept)
        ref["outputs"].append(outputs)
        ref["mutates"].append(mutated_inputs(kept, [v.cpu() if isinstance(v, torch.Tensor) else v for v in run_on]))
        ref["info"].append(info)
    return ref


def write_reference(ref: dict[str, Any], out: Path) -> None:
    for k, (inputs, outputs) in enumerate(zip(ref["inputs"], ref["outputs"])):
        save_values(out / "inputs" / f"trial_{k}", inputs)
        save_values(out / "ref" / f"trial_{k}", outputs)
    (out / "meta.json").write_text(json.dumps({"trials": ref["info"], "mutates": ref["mutates"]}), encoding="utf-8")


def read_reference(folder: Path) -> dict[str, Any]:
    """What write_reference wrote (the verdict's `reference` argument, plus "info")."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    n = len(meta["trials"])
    return {"inputs": [load_values(folder / "inputs" / f"trial_{k}") for k in range(n)],
            "outputs": [load_values(folder / "ref" / f"trial_{k}") for k in range(n)],
            "mutates": meta["mutates"], "info": meta["trials"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cuset.evaluate.reference", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = ap.parse_args(argv)
    import contextlib

    record: dict[str, Any] = {"status": "ok", "message": ""}
    try:
        with cpu_mode() if args.device == "cpu" else contextlib.nullcontext():
            task = exec_file(args.task, "__cuset_task__")
            ref = compute_reference(task, args.trials, args.seed, args.device)
        write_reference(ref, args.out)
        record["trials"] = ref["info"]
    except Exception as exc:  # noqa: BLE001 - a broken task is a record too
        record = {"status": "error", "message": f"the task failed: {error_text(exc)}"}
    sys.stdout.flush()
    print("\n" + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
