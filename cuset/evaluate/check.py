"""Check one KernelBench-format solution against its task, the candidate in a sandbox and the
verdict outside it.

    result = check_solution(Path("solution.py"), Path("task.py"), backend="cpu", tolerance="v0")
    result["status"]    # compile_error | runtime_error | timeout | resource_limit |
                        # unsupported | wrong_result | reward_hack | race | memory_error |
                        # sync_error (cuda + compute-sanitizer) | correct
    result["compiled"], result["correct"], result["message"], result["max_abs_error"],
    result["path"]      # "shim" or "torch": how the CPU backend built the CUDA extension
                        # ("nvcc" for the compile backend, "cuda" on a GPU)
    result["tolerance"], result["inputs"], result["poison"], result["static"], result["mutated_inputs"]
    result["sanitizer"], result["sanitizer_s"]   # compute-sanitizer's verdict and runs (cuda), their seconds

Backends: `cpu` (the emulator, cuset.evaluate.cpu), `compile` (nvcc with torch's headers,
nothing run: status "compiled" or "compile_error"), `cuda` (a real GPU, KernelBench's way, with
runtimes for speedups); see cuset.evaluate.backends.

Three processes, so that nothing the candidate prints, writes or patches can forge its verdict:

1. The reference (cuset.evaluate.reference, sandboxed too) draws every trial's inputs and runs
   the task's `Model`; its outputs stay in a folder only this user reads (0700, outside every
   sandbox's view), cached per task (see _private_root).
2. The candidate (`python -m cuset.evaluate.cpu.kernelbench ... --handover`, or the cuda
   backend's program) runs inside cuset.evaluate.sandbox with limits on wall time, CPU, memory,
   processes, file size and output, in a scratch folder holding copies of the two files and
   the inputs only. It writes its outputs, its inputs after the forward and the poisoned run's
   outputs as safetensors files (no pickle). Builds go to the scratch folder and are moved into
   the shared build cache afterwards (the sandbox only reads the cache).
3. This process compares those tensors with the reference's (cuset.evaluate.verdict), after the
   static checks (cuset.evaluate.static_checks). The candidate's own JSON line is read for its
   build record, for failures before any output (a forged failure only hurts it) and for what
   only its process saw: how many compiled calls the trials made and what the poisoned run
   raised. A harness killed by a signal is a runtime_error: neither its stdout nor its outputs
   are judged.
4. On the cuda backend a candidate judged correct runs its first trial once more in the same
   scratch folder, sandboxed the same way, under compute-sanitizer (cuset.evaluate.sanitizer).

Whatever the candidate does, the result is a record, never an exception.

Limitation: the candidate's code shares its process with the harness code that reports those
two facts, so a program written to attack this harness (one that finds the report pipe, writes
a record with calls and a poisoned-run error of its own, and exits) can claim them, and with
right outputs computed by torch pass as correct. Nothing a model writes by chance does this;
closing it needs the poisoned run in a process of its own whose only evidence is a file.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cuset.evaluate import static_checks
from cuset.evaluate.cpu.build import cache_dir
from cuset.evaluate.inputs import load_values
from cuset.evaluate.sandbox import MEMORY_MARKERS, PROCESS_MARKERS, SANDBOX_GID, SANDBOX_UID, Limits, Outcome, run, scratch
from cuset.evaluate.sanitizer import DEFAULT_TOOLS, check_tools
from cuset.evaluate.sanitizer import stage as sanitizer_stage
from cuset.evaluate.verdict import apply_verdict, check_profile, judge, speedup_flag, tolerance

CATEGORIES = ("compile_error", "runtime_error", "timeout", "resource_limit", "unsupported", "wrong_result", "reward_hack", "race",
              "memory_error", "sync_error", "correct", "compiled")
# What a candidate's own record may tell: how far it got before any output. A verdict it prints is ignored.
CANDIDATE_FAILURES = ("compile_error", "runtime_error", "unsupported")
BACKENDS = ("cpu", "compile", "cuda")
# nvcc with torch's headers takes 40-90 s and ~2 GB here; CUDA maps terabytes of virtual memory
# (no address-space limit for it: the wall, CPU and process limits still hold)
BACKEND_LIMITS = {"cpu": (1.0, 8192), "compile": (4.0, 6144), "cuda": (1.0, None)}
LIMIT_STATUSES = {"memory_limit": "memory", "process_limit": "processes", "file_limit": "file size", "output_limit": "output"}


def check_solution(solution: Path, task: Path, backend: str = "cpu", trials: int = 5, timeout: float = 120.0,
                   memory_mb: int = 8192, workers: int | None = None, tolerance_profile: str = "v0",
                   static_policy: str = "strict", poison: bool = True, seed: int = 42, sanitizer: bool = True,
                   sanitizer_tools: tuple[str, ...] = DEFAULT_TOOLS) -> dict[str, Any]:
    """Build, run and judge one solution; see the module docstring for the record.
    tolerance_profile: "v0" or "strict" (cuset.evaluate.verdict); static_policy: "strict" or
    "lenient" (cuset.evaluate.static_checks); poison: run the poisoned run (on by default);
    sanitizer: on the cuda backend, a correct candidate then runs under compute-sanitizer's
    `sanitizer_tools` in its trials' folder (cuset.evaluate.sanitizer: a finding is race,
    memory_error or sync_error, a sanitizer past its time limit timeout; sanitizer_s apart)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    check_profile(tolerance_profile)
    static_checks.check_policy(static_policy)
    sanitizer_tools = check_tools(sanitizer_tools)
    for label, path in (("solution", solution), ("task", task)):
        if not Path(path).is_file():
            raise ValueError(f"{label} file {path}: not found")
    text = Path(solution).read_text(encoding="utf-8", errors="replace")
    findings = static_checks.scan(text)
    shared_cache = cache_dir()
    shared_cache.mkdir(parents=True, exist_ok=True)
    scale, memory = BACKEND_LIMITS[backend]
    wall = timeout * scale
    limits = Limits(wall_s=wall, cpu_s=wall * 2, memory_mb=memory and max(memory, memory_mb), processes=256, file_mb=512, output_kb=1024)
    env = _environment(workers)
    reference, ref_s = None, 0.0
    if backend != "compile":
        t0 = time.perf_counter()
        reference = _reference(Path(task), trials, seed, "cuda" if backend == "cuda" else "cpu", limits, env)
        ref_s = time.perf_counter() - t0
        if "error" in reference:
            result = {"status": "runtime_error", "compiled": False, "correct": False, "message": reference["error"], "max_abs_error": None,
                      "path": None, "backend": backend, "tolerance": tolerance_profile, "static": findings, "reference_s": round(ref_s, 3)}
            return sanitizer_stage(result, backend, sanitizer, Path(), timeout, env, sanitizer_tools, seed)
    with scratch(prefix="cuset-check-") as tmp:
        shutil.copyfile(solution, tmp / "solution.py")
        shutil.copyfile(task, tmp / "task.py")
        module = {"cpu": ["cuset.evaluate.cpu.kernelbench"], "compile": ["cuset.evaluate.backends", "compile"],
                  "cuda": ["cuset.evaluate.backends", "cuda"]}[backend]
        argv = [sys.executable, "-m", *module, "solution.py"]
        if reference is not None:
            _hand_inputs(reference["folder"] / "inputs", tmp / "handover")
            argv += ["task.py", "--trials", str(trials), "--seed", str(seed), "--handover", "handover"] + ([] if poison else ["--no-poison"])
        outcome = run(argv, cwd=tmp, limits=limits, env=_sandbox_env(env, tmp, shared_cache), keep_paths=[shared_cache])
        _harvest(tmp / "cache", shared_cache)
        result = _record(outcome, solution)
        if reference is not None:
            _judge_handover(result, reference, tmp / "handover" / "out", trials, tolerance_profile, poison)
        _finish(result, backend, findings, ref_s, static_policy)
        # in the trials' own folder: their handed-over inputs, and torch's extension build (HOME/.cache) reused
        return sanitizer_stage(result, backend, sanitizer, tmp, timeout, env, sanitizer_tools, seed)


def _finish(result: dict[str, Any], backend: str, findings: list[dict[str, Any]], ref_s: float, static_policy: str) -> None:
    """The record's times, the static checks' verdict and the speedup flag, after the handover's verdict."""
    result["backend"] = backend
    result["static"] = findings
    result["reference_s"] = round(ref_s, 3)
    # where the candidate's time went: its builds (load_inline), and the rest of its process
    result["build_s"] = round(float(result.get("compile_s") or 0.0), 3)
    result["run_s"] = round(max(0.0, float(result.get("wall_s") or 0.0) - result["build_s"]), 3)
    static_checks.apply(result, findings, static_policy)
    flag = speedup_flag(result.get("runtime_ms"), result.get("ref_runtime_ms"))
    if flag:
        result["flags"] = [*result.get("flags", []), flag]


def _environment(workers: int | None) -> dict[str, str]:
    env = {"OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "CUSET_WORKERS": str(workers or min(2, os.cpu_count() or 1))}
    for name in ("CUSET_KERNELBENCH_PATH", "CUDA_HOME", "CUSET_CXX"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def _hand_inputs(inputs: Path, handover: Path) -> None:
    """The trial inputs (only them) into the candidate's scratch folder, readable by the sandbox
    user, and an empty out/ it can write to."""
    shutil.copytree(inputs, handover / "inputs")
    (handover / "out").mkdir()
    for path in [handover, *handover.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        if os.geteuid() == 0:
            os.chown(path, SANDBOX_UID, SANDBOX_GID)


def _sandbox_env(env: dict[str, str], tmp: Path, shared_cache: Path) -> dict[str, str]:
    return {**env, "CUSET_BUILD_CACHE": str(tmp / "cache"), "CUSET_BUILD_CACHE_RO": str(shared_cache), "TMPDIR": str(tmp)}


# ---------------------------------------------------------------- the reference side

_REF_LOCK = threading.Lock()
_REF_KEYS: dict[str, threading.Lock] = {}
_REF_ROOTS: dict[str, Path] = {}


def _private_root() -> Path:
    """Where reference outputs are kept, readable by this process's user only (0700).

    As root, candidates run as nobody, so a persistent folder inside the build cache is safe
    and saves the reference process (~2-3 s) on every later check of the task. Otherwise a
    candidate runs under this same uid, so the folder is a fresh one under the host's temp
    folder (which every sandbox sees replaced by its own tmpfs), removed when this process exits."""
    key = str(cache_dir()) if os.geteuid() == 0 else ""
    with _REF_LOCK:
        if key not in _REF_ROOTS:
            if key:
                root = cache_dir() / "references"
                root.mkdir(parents=True, exist_ok=True)
            else:
                root = Path(tempfile.mkdtemp(prefix="cuset-references-"))
                atexit.register(shutil.rmtree, root, True)
            os.chmod(root, 0o700)
            _REF_ROOTS[key] = root
        return _REF_ROOTS[key]


def _reference_version() -> bytes:
    """What the reference's files depend on besides the task: the code that draws and runs them."""
    import torch

    from cuset.evaluate import inputs, reference

    return b"".join(Path(m.__file__).read_bytes() for m in (inputs, reference)) + torch.__version__.encode()


def _reference(task: Path, trials: int, seed: int, device: str, limits: Limits, env: dict[str, str]) -> dict[str, Any]:
    """The task's trial inputs and reference outputs, computed once per (task text, trials,
    seed, device, reference code) and kept (see _private_root): {"folder", "reference"
    (tensors), "info"} or {"error"}."""
    from cuset.evaluate.reference import read_reference

    text = task.read_bytes()
    key = hashlib.sha256(b"\0".join([text, str(trials).encode(), str(seed).encode(), device.encode(), _reference_version()])).hexdigest()[:24]
    with _REF_LOCK:
        lock = _REF_KEYS.setdefault(key, threading.Lock())
    with lock:
        folder = _private_root() / key
        if not (folder / "meta.json").exists():
            with scratch(prefix="cuset-reference-") as tmp:
                shutil.copyfile(task, tmp / "task.py")
                argv = [sys.executable, "-m", "cuset.evaluate.reference", "task.py", "--out", "ref", "--trials", str(trials),
                        "--seed", str(seed), "--device", device]
                outcome = run(argv, cwd=tmp, limits=limits, env={**env, "TMPDIR": str(tmp)})
                line = next((ln for ln in reversed(outcome.stdout.splitlines()) if ln.startswith("{")), "")
                record = json.loads(line) if line else {"status": "error", "message": ""}
                if record.get("status") != "ok" or not (tmp / "ref" / "meta.json").exists():
                    tail = [ln for ln in outcome.stderr.splitlines() if ln.strip()][-1:] or [outcome.message]
                    return {"error": record.get("message") or f"the task's reference failed ({outcome.status}): {tail[0]}"}
                part = folder.with_name(f"{folder.name}.part{os.getpid()}")
                shutil.rmtree(part, ignore_errors=True)
                shutil.copytree(tmp / "ref", part)
                try:
                    os.replace(part, folder)
                except OSError:  # another process stored it first
                    shutil.rmtree(part, ignore_errors=True)
        reference = read_reference(folder)
    return {"folder": folder, "reference": reference, "info": reference["info"]}


def _judge_handover(result: dict[str, Any], reference: dict[str, Any], out: Path, trials: int, profile: str, poison: bool) -> None:
    """The verdict from the tensors the candidate handed over; its own claims are overwritten.
    A failure it reports before its outputs stands; a process that ended during the poisoned
    run (garbage made it crash or hang) is judged on its trials, the poisoned run failed."""
    import torch

    atol, rtol = tolerance(profile, "float32")
    result.update(tolerance=profile, atol=atol, rtol=rtol, inputs=reference["info"])
    result["correct"] = False
    # compiled: at least one extension built and none failed (a reply that dies before its first
    # load_inline, e.g. on an invented torch.cuda.load_inline, compiled nothing)
    result["compiled"] = bool(result.get("builds")) and all(b.get("status") == "built" for b in result["builds"])
    if result["status"] in CANDIDATE_FAILURES:
        return
    complete = all((out / f"{kind}_{k}.json").exists() for k in range(trials) for kind in ("trial", "after"))
    if not complete:
        if result["status"] not in ("timeout", "resource_limit"):
            result.update(status="runtime_error", message=result.get("message") or "the candidate ended without handing over its outputs")
        return
    poison_error = str(result.get("poison_error") or "")
    if result["status"] != "ran" or result.get("stage") != "done":
        poison_error = poison_error or f"the candidate's process ended in the poisoned run ({result['status']}: {result.get('message', '')})"
    try:
        poisoned = load_values(out / "poisoned") if poison and (out / "poisoned.json").exists() else None
        cand = {"outputs": [load_values(out / f"trial_{k}") for k in range(trials)],
                "after": [load_values(out / f"after_{k}") for k in range(trials)],
                "calls": int(result.get("ext_calls") or 0), "poisoned": poisoned, "poison_error": poison_error,
                "poison_calls": int(result.get("poison_calls") or 0)}
    except (ValueError, TypeError) as exc:
        result.update(status="runtime_error", message=f"the candidate handed over no usable outputs: {exc}")
        return
    if not all(isinstance(t, torch.Tensor) for trial in cand["outputs"] + [poisoned or []] for t in trial):
        result.update(status="runtime_error", message="the candidate handed over outputs that are not tensors")
        return
    apply_verdict(result, judge(reference["reference"], cand, profile))


def _harvest(new: Path, shared: Path) -> None:
    """Move builds the candidate made into the shared cache (each entry is a whole folder)."""
    for entry in new.iterdir() if new.exists() else []:
        dest = shared / entry.name
        if not dest.exists() and entry.is_dir():
            # a temp folder of its own: checks of one process run in threads, and two of them may
            # harvest the same build at once (a name from the pid alone collided)
            tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=shared))
            try:
                shutil.copytree(entry, tmp, dirs_exist_ok=True)
                os.replace(tmp, dest)
            except OSError:  # another check stored it first
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
    """The harness's own JSON line when it got that far; otherwise the sandbox's ending.

    A harness killed by a signal proves nothing: the candidate runs in its forked child, which
    can kill it (and print a verdict-shaped line first), and that child, orphaned, goes on
    writing outputs until the sandbox ends it; how far it gets is a race. Such a run is a
    runtime_error whatever its stdout says, and nothing it handed over is judged."""
    base = {"status": "runtime_error", "compiled": False, "correct": False, "message": "", "max_abs_error": None, "path": None,
            "sandbox": outcome.status, "wall_s": round(outcome.wall_s, 3)}
    lines = [] if outcome.status == "crashed" else outcome.stdout.strip().splitlines()
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(data, dict) and data.get("status") in (*CATEGORIES, "ran"):
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
    if outcome.status == "crashed":
        said = f"{fault}; " if fault else ""
        return {**base, "status": "runtime_error",
                "message": f"{solution.name}: {said}the evaluation process was {outcome.message}; its stdout and outputs are not judged"}
    message = fault or (tail[-1] if tail else outcome.message)
    return {**base, "status": "runtime_error", "message": f"{solution.name}: {message}"}
