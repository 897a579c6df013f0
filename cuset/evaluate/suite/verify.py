"""Check that the harness judges a bundled task's solutions as the suite says: the reference is
`correct`, each planted wrong solution gets its expected failing status.

    from cuset.evaluate.suite import load_suite, verify_task
    for row in verify_task(load_suite()[0], Path("/tmp/x")):
        print(row["solution"], row["expect"], row["status"], row["ok"])

    python -m cuset.evaluate.suite --verify --level 1      # the same over the suite, one line per solution

Every solution runs through `cuset.evaluate.check.check_solution` (sandboxed), so this is also
the end-to-end test of the CPU backend on KernelBench-format code.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cuset.evaluate.suite.bundled import Task


def verify_task(task: Task, folder: Path, backend: str = "cpu", trials: int = 5, timeout: float = 120.0) -> list[dict[str, Any]]:
    """One row per solution of `task` (reference first): solution, bug, expect, status, ok,
    message, wall_s. Wrong solutions are written into `folder` to be checked."""
    from cuset.evaluate.check import check_solution

    if task.reference_path is None:
        raise ValueError(f"{task.id}: has no reference solution to verify (KernelBench tasks ship none).")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    task_file = task.task_file(folder)
    runs = [("reference", "", "correct", task.reference_path)]
    runs += [(w.name, w.bug, w.expect, w.write(folder, prefix=f"{task.id}_")) for w in task.wrong]
    rows = []
    for name, bug, expect, path in runs:
        t0 = time.perf_counter()
        result = check_solution(path, task_file, backend=backend, trials=trials, timeout=timeout)
        rows.append({"task": task.id, "solution": name, "bug": bug, "expect": expect, "status": result["status"],
                     "ok": result["status"] == expect, "message": result.get("message", ""), "first_bad": result.get("first_bad"),
                     "wall_s": round(time.perf_counter() - t0, 2)})
    return rows
