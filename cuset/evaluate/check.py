"""Check one KernelBench-format solution against its task, the candidate in a sandbox.

    result = check_solution(Path("solution.py"), Path("task.py"), backend="cpu")
    result["status"]    # compile_error | runtime_error | timeout | resource_limit |
                        # unsupported | wrong_result | correct
    result["compiled"], result["correct"], result["message"], result["max_abs_error"],
    result["path"]      # "shim" or "torch": how the CPU backend built the CUDA extension
                        # ("nvcc" for the compile backend, "cuda" on a GPU)

Backends: `cpu` (the emulator, cuset.evaluate.cpu), `compile` (nvcc with torch's headers,
nothing run: status "compiled" or "compile_error"), `cuda` (a real GPU, KernelBench's way, with
runtimes for speedups); see cuset.evaluate.backends.

The candidate (its Python, its load_inline build and its kernels) runs as
`python -m cuset.evaluate.cpu.kernelbench` inside `cuset.evaluate.sandbox` with limits on
wall time, CPU, memory, processes, file size and output, in a scratch folder holding copies of
the two files. Builds it makes go to the scratch folder and are moved into the shared build
cache afterwards (the sandbox only reads the cache). Whatever the candidate does, the result
is a record, never an exception.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu.build import cache_dir
from cuset.evaluate.sandbox import MEMORY_MARKERS, PROCESS_MARKERS, Limits, Outcome, run, scratch

CATEGORIES = ("compile_error", "runtime_error", "timeout", "resource_limit", "unsupported", "wrong_result", "correct", "compiled")
BACKENDS = ("cpu", "compile", "cuda")
# nvcc with torch's headers takes 40-90 s and ~2 GB here; CUDA maps terabytes of virtual memory
# (no address-space limit for it: the wall, CPU and process limits still hold)
BACKEND_LIMITS = {"cpu": (1.0, 8192), "compile": (4.0, 6144), "cuda": (1.0, None)}
LIMIT_STATUSES = {"memory_limit": "memory", "process_limit": "processes", "file_limit": "file size", "output_limit": "output"}


def check_solution(solution: Path, task: Path, backend: str = "cpu", trials: int = 5, timeout: float = 120.0,
                   memory_mb: int = 8192, workers: int | None = None) -> dict[str, Any]:
    """Build, run and compare one solution; see the module docstring for the record."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    for label, path in (("solution", solution), ("task", task)):
        if not Path(path).is_file():
            raise ValueError(f"{label} file {path}: not found")
    shared_cache = cache_dir()
    shared_cache.mkdir(parents=True, exist_ok=True)
    with scratch(prefix="cuset-check-") as tmp:
        shutil.copyfile(solution, tmp / "solution.py")
        shutil.copyfile(task, tmp / "task.py")
        env = {
            "CUSET_BUILD_CACHE": str(tmp / "cache"),
            "CUSET_BUILD_CACHE_RO": str(shared_cache),
            "TMPDIR": str(tmp),
            "OMP_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "CUSET_WORKERS": str(workers or min(2, os.cpu_count() or 1)),
        }
        for name in ("CUSET_KERNELBENCH_PATH", "CUDA_HOME", "CUSET_CXX"):
            if os.environ.get(name):
                env[name] = os.environ[name]
        scale, memory = BACKEND_LIMITS[backend]
        wall = timeout * scale
        limits = Limits(wall_s=wall, cpu_s=wall * 2, memory_mb=memory and max(memory, memory_mb), processes=256, file_mb=512, output_kb=1024)
        module = {"cpu": ["cuset.evaluate.cpu.kernelbench"], "compile": ["cuset.evaluate.backends", "compile"],
                  "cuda": ["cuset.evaluate.backends", "cuda"]}[backend]
        argv = [sys.executable, "-m", *module, "solution.py", "task.py", "--trials", str(trials)]
        if backend == "compile":
            argv = argv[:-3]
        outcome = run(argv, cwd=tmp, limits=limits, env=env, keep_paths=[shared_cache])
        _harvest(tmp / "cache", shared_cache)
    result = _record(outcome, solution)
    result["backend"] = backend
    return result


def _harvest(new: Path, shared: Path) -> None:
    """Move builds the candidate made into the shared cache (each entry is a whole folder)."""
    for entry in new.iterdir() if new.exists() else []:
        dest = shared / entry.name
        if not dest.exists() and entry.is_dir():
            tmp = shared / f".{entry.name}.{os.getpid()}"
            shutil.copytree(entry, tmp)
            try:
                os.replace(tmp, dest)
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)


def _limit_hit(outcome: Outcome, message: str) -> str:
    """Which limit a failure came from: the sandbox's ending, or the error text it causes."""
    if outcome.status in LIMIT_STATUSES:
        return LIMIT_STATUSES[outcome.status]
    if any(m in message for m in MEMORY_MARKERS):
        return "memory"
    if any(m in message for m in PROCESS_MARKERS):
        return "processes"
    return ""


def _record(outcome: Outcome, solution: Path) -> dict[str, Any]:
    """The harness's own JSON line when it got that far; otherwise the sandbox's ending."""
    base = {"status": "runtime_error", "compiled": False, "correct": False, "message": "", "max_abs_error": None, "path": None,
            "sandbox": outcome.status, "wall_s": round(outcome.wall_s, 3)}
    for line in reversed(outcome.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(data, dict) and data.get("status") in CATEGORIES:
                record = {**base, **data, "sandbox": outcome.status, "wall_s": base["wall_s"]}
                limit = _limit_hit(outcome, str(record.get("message", "")))
                if record["status"] == "runtime_error" and limit:  # the harness caught the limit's exception
                    record.update(status="resource_limit", message=f"{limit} limit: {record['message']}")
                return record
            break
    fault = next((ln.removeprefix("cuset-cuda: error: ") for ln in outcome.stderr.splitlines() if ln.startswith("cuset-cuda: error:")), "")
    if outcome.status == "timeout":
        return {**base, "status": "timeout", "message": outcome.message}
    if outcome.status in LIMIT_STATUSES:
        return {**base, "status": "resource_limit", "message": f"{LIMIT_STATUSES[outcome.status]} limit: {outcome.message}"}
    tail = [ln for ln in outcome.stderr.strip().splitlines() if ln.strip()]
    message = fault or (outcome.message if outcome.status == "crashed" else "") or (tail[-1] if tail else outcome.message)
    return {**base, "status": "runtime_error", "message": f"{solution.name}: {message}"}
