"""Evaluate many candidates at once: each is checked in its own sandboxed process, in parallel.

    cands = [Candidate(task_id="L1-relu", sample=0, code=solution_text, task_text=task_text, level=1, family="elementwise")]
    records = evaluate_candidates(cands, backend="cpu", workers=2, progress=lambda done, total: ...)

A record is a dict with the columns of cuset.evaluate.results (status, compiled, correct,
message, error_line, max_abs_error, ..., code, reply). A candidate that hangs, crashes or eats
memory ends as its own record (timeout, runtime_error, resource_limit) and the run goes on.
A reply with no code is a compile_error with the message "no code in the reply", as
KernelBench counts it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuset.evaluate.check import BACKENDS, check_solution
from cuset.evaluate.sanitizer import DEFAULT_TOOLS

_LINE = re.compile(r"solution\.py:(\d+)")
# What a record keeps about how far the verdict can be trusted (stored as JSON in `integrity`).
INTEGRITY_FIELDS = ("static", "static_policy", "poison", "inputs", "mutated_inputs", "flags", "ext_calls", "sanitizer", "sanitizer_s")


@dataclass
class Candidate:
    """One solution to judge, with where it came from."""

    task_id: str
    sample: int
    code: str
    task_text: str
    level: int | None = None
    family: str = ""
    split: str = ""
    reply: str = ""


def default_workers() -> int:
    """Candidates checked at once: one per core (each check runs its blocks on one core)."""
    return max(1, os.cpu_count() or 1)


def evaluate_one(c: Candidate, backend: str = "cpu", trials: int = 5, timeout: float = 120.0, emulator_workers: int = 1,
                 tolerance: str = "v0", static_policy: str = "strict", sanitizer: bool = True,
                 sanitizer_tools: tuple[str, ...] = DEFAULT_TOOLS) -> dict[str, Any]:
    base = {"task_id": c.task_id, "sample": c.sample, "level": c.level, "family": c.family, "split": c.split, "code": c.code, "reply": c.reply}
    if not c.code.strip():
        return {**base, "status": "compile_error", "compiled": False, "correct": False, "message": "no code in the reply"}
    with tempfile.TemporaryDirectory(prefix="cuset-eval-") as tmp:
        sol, task = Path(tmp) / "solution.py", Path(tmp) / "task.py"
        sol.write_text(c.code, encoding="utf-8")
        task.write_text(c.task_text, encoding="utf-8")
        result = check_solution(sol, task, backend=backend, trials=trials, timeout=timeout, workers=emulator_workers,
                                tolerance_profile=tolerance, static_policy=static_policy, sanitizer=sanitizer,
                                sanitizer_tools=sanitizer_tools)
    m = _LINE.search(result.get("message") or "")
    return {
        **base,
        "status": result["status"],
        "compiled": bool(result.get("compiled")),
        "correct": bool(result.get("correct")),
        "message": (result.get("message") or "")[:4000],
        "error_line": int(m.group(1)) if m else result.get("error_line"),
        "max_abs_error": result.get("max_abs_error"),
        "max_rel_error": result.get("max_rel_error"),
        "first_diff": str(result.get("first_diff") or ""),
        "path": result.get("path") or "",
        "atol": result.get("atol"),
        "rtol": result.get("rtol"),
        "runtime_ms": result.get("runtime_ms"),
        "ref_runtime_ms": result.get("ref_runtime_ms"),
        "wall_s": result.get("wall_s"),
        "tolerance": result.get("tolerance") or tolerance,
        "integrity": json.dumps({k: result.get(k) for k in INTEGRITY_FIELDS}, default=str),
    }


def evaluate_candidates(
    candidates: list[Candidate],
    backend: str = "cpu",
    trials: int = 5,
    timeout: float = 120.0,
    workers: int = 0,
    progress: Callable[[int, int], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    tolerance: str = "v0",
    static_policy: str = "strict",
    sanitizer: bool = True,
    sanitizer_tools: tuple[str, ...] = DEFAULT_TOOLS,
) -> list[dict[str, Any]]:
    """Check every candidate; records come back in the candidates' order. `on_record` sees
    each record as soon as it is done (to store results while the run goes on)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    workers = workers or default_workers()
    per = max(1, (os.cpu_count() or 1) // workers)
    out: list[dict[str, Any] | None] = [None] * len(candidates)
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(evaluate_one, c, backend, trials, timeout, per, tolerance, static_policy, sanitizer, sanitizer_tools): i for i, c in enumerate(candidates)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                rec = fut.result()
            except Exception as exc:  # noqa: BLE001 - our own failure still leaves a record
                c = candidates[i]
                rec = {"task_id": c.task_id, "sample": c.sample, "level": c.level, "family": c.family, "split": c.split,
                       "status": "runtime_error", "compiled": False, "correct": False, "message": f"evaluator error: {exc}",
                       "code": c.code, "reply": c.reply}
            out[i] = rec
            done += 1
            if on_record:
                on_record(rec)
            if progress:
                progress(done, len(candidates))
    return [r for r in out if r is not None]
