"""KernelBench mode of the CPU backend: run a `ModelNew` solution whose CUDA goes through
`torch.utils.cpp_extension.load_inline` on the CUDA emulator, and check it against the task's
`Model` the KernelBench way (seed 42 before init inputs and each model, per-trial input seeds,
shape check, then allclose; a constant output where the reference varies is wrong).

    python -m cuset.evaluate.cpu.kernelbench SOLUTION.py TASK.py [--trials 5] [--tolerance v0] [--path auto]
    # the candidate's own output passes through; the result record (JSON) is the last stdout line
    python -m cuset.evaluate.cpu.kernelbench SOLUTION.py TASK.py --handover DIR
    # what cuset.evaluate.check runs: inputs from DIR/inputs, outputs to DIR/out, status "ran"

Each trial's inputs come from cuset.evaluate.inputs (a different distribution per trial); after
the trials ModelNew runs once more with every compiled call's effects poisoned
(cuset.evaluate.poison): if it still matches, the verdict is `reward_hack`. Without --handover
the reference and the verdict are computed here too (trusted use only: a candidate in this
process could forge them); with it they are made by the caller, outside this process.

    result = evaluate("solution.py", "task.py", KernelBenchOptions(trials=5))   # the same, as a dict

Generated code is untrusted: the caller runs this command in a sandboxed child process, never
in the app. The command itself forks once more, so that a device fault (the emulator ends the
process on an illegal address or a deadlock) or a hang still yields a record.

The pieces behind it, each a module of this package: cpu/inline_call.py (one load_inline call's
arguments and sources), cpu/shim.py (the shim build path: g++ against a small stand-in for
torch's C++ API, called through ctypes), cpu/torch_fallback.py (torch's own load_inline as a CPU
extension, when the host code uses ATen the shim lacks) and cpu/load_inline.py (the choice
between them, the stand-in for torch's load_inline and the contexts a solution runs in). A
record's `path` says which build path ran.

Tensors: inputs are torch CPU tensors standing for CUDA ones (`.cuda()`, `.to("cuda")` and
`device="cuda"` map to the CPU while the solution runs); tensors the C++ code creates come from
emulated device memory filled with a garbage byte (0xCD), as fresh GPU memory is not zeros, so
an output the kernels do not fully write shows up as wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu.inline_call import FALLBACK_INCLUDE_DIR, INCLUDE_DIR, PATHS, TORCH_CUDA_DEFINES, InlineCall, _line_in
from cuset.evaluate.cpu.load_inline import (
    MISSING_ATEN,
    UNSUPPORTED_LIBRARIES,
    BuildFailed,
    BuildRecord,
    CompiledModule,
    Session,
    _cpp_problem,
    build_inline,
    cuda_on_cpu,
    missing_aten,
    on_gpu,
)
from cuset.evaluate.cpu.shim import MAX_RESULTS, SHIM_FLAGS, ShimModule, build_shim
from cuset.evaluate.cpu.torch_fallback import TorchModule, build_torch
from cuset.evaluate.inputs import flat_tensors, load_values, save_values
from cuset.evaluate.reference import build_model, compute_reference, to_device

# Under their names from before they moved to cuset.evaluate.taskcode: cuset.evaluate.backends and
# the suite's validator import them from here.
from cuset.evaluate.taskcode import MESSAGE_CHARS
from cuset.evaluate.taskcode import cpu_mode as _cpu_mode
from cuset.evaluate.taskcode import error_text as _error_text
from cuset.evaluate.taskcode import exec_file as _exec_file
from cuset.evaluate.verdict import DATA_INDEPENDENT_FAULTS, apply_verdict, check_profile, judge, tolerance

# The names the build modules own, kept importable from here (tests, backends, benchmarks).
__all__ = [
    "FALLBACK_INCLUDE_DIR", "INCLUDE_DIR", "MAX_RESULTS", "MESSAGE_CHARS", "MISSING_ATEN", "PATHS", "SHIM_FLAGS", "STATUSES",
    "TORCH_CUDA_DEFINES", "UNSUPPORTED_LIBRARIES", "BuildFailed", "BuildRecord", "CompiledModule", "InlineCall",
    "KernelBenchOptions", "KernelBenchResult", "Session", "ShimModule", "TorchModule", "_cpp_problem", "_cpu_mode",
    "_error_text", "_exec_file", "_line_in", "build_inline", "build_shim", "build_torch", "cuda_on_cpu", "evaluate",
    "l2_flush_bytes", "main", "missing_aten", "on_gpu", "run_solution", "to_gpu",
]

# "ran": the candidate ran every trial and handed its tensors over; the caller makes the verdict.
STATUSES = ("compile_error", "runtime_error", "unsupported", "wrong_result", "reward_hack", "correct", "ran")


# ---------------------------------------------------------------- records


@dataclass
class KernelBenchOptions:
    """How a solution is checked (KernelBench v0.1 defaults)."""

    trials: int = 5  # correctness trials, each on fresh random inputs from its own distribution
    tolerance: str = "v0"  # tolerance profile (cuset.evaluate.verdict.TOLERANCES): "v0" or "strict"
    seed: int = 42  # seed before get_init_inputs() and before each model; trial seeds derive from it
    timeout_s: float | None = None  # whole evaluation, forked mode only; None: no limit
    path: str = "auto"  # how load_inline builds: "auto" (shim, real torch if needed), "shim", "torch"
    device: str = "cpu"  # "cpu": the emulator; "cuda": torch's own load_inline on a real GPU (cuset.evaluate.backends)
    timing_runs: int = 0  # with device="cuda": time ModelNew and Model over this many calls (median, ms)
    poison: bool = True  # after the trials, run once more with every compiled call's effects poisoned

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise ValueError(f"trials must be at least 1, got {self.trials}.")
        check_profile(self.tolerance)
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive or None, got {self.timeout_s}.")
        if self.path not in PATHS:
            raise ValueError(f"path must be one of {list(PATHS)}, got {self.path!r}.")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {self.device!r}.")


@dataclass
class KernelBenchResult:
    """What the evaluation of one solution found (JSON-able with `to_dict`)."""

    status: str = "runtime_error"  # one of STATUSES
    compiled: bool = False
    correct: bool = False
    message: str = ""
    max_abs_error: float | None = None
    path: str | None = None  # "shim" | "torch" (the last build); None without load_inline
    compile_s: float = 0.0  # all load_inline calls together, wall clock
    trials: int = 0  # trials that passed
    trials_requested: int = 5
    tolerance: str = "v0"  # the profile; atol/rtol are its float32 values
    atol: float = 1e-2
    rtol: float = 1e-2
    stage: str = "task"  # where it stopped: task, solution, init, run, poison, done
    first_bad: dict[str, Any] | None = None  # first differing element: index, out, ref, n_bad
    ext_calls: int = 0  # calls into compiled functions during the trials
    poison_calls: int = 0  # compiled calls poisoned in the poisoned run
    poison_error: str = ""  # what the poisoned run raised (garbage in, an error out), if anything
    poison: dict[str, Any] | None = None  # the verdict's view of the poisoned run: passed, calls, error
    mutated_inputs: list[int] = field(default_factory=list)  # inputs ModelNew changes and Model does not (a flag)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # per trial: seed, distribution, redrawn inputs
    runtime_ms: float | None = None  # device="cuda" with timing_runs: ModelNew's median call
    ref_runtime_ms: float | None = None  # ... and Model's
    builds: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------- checking


def _fail_build(result: KernelBenchResult, record: BuildRecord) -> None:
    result.status = "unsupported" if record.status == "unsupported" else "compile_error"
    result.message = record.message
    result.path = record.path


def _finish_builds(result: KernelBenchResult, session: Session) -> bool:
    """Fold the session's build records into the result; False if a build failed."""
    result.builds = [asdict(r) for r in session.records]
    result.compile_s = round(sum(r.compile_s for r in session.records), 3)
    if session.records:
        result.path = session.records[-1].path
    failed = [r for r in session.records if r.status != "built"]
    if failed:
        _fail_build(result, failed[0])
        return False
    result.compiled = bool(session.records)  # nothing built yet is not "compiled"
    return True


def _load(result: KernelBenchResult, session: Session, solution_path: Path, task_path: Path,
          opts: KernelBenchOptions) -> tuple[dict[str, Any], Any, Any] | None:
    """Load the task and the solution (building its load_inline calls), construct Model and
    ModelNew as KernelBench does. Returns (task namespace, Model, ModelNew), or None with the
    result filled in when something failed."""
    import torch

    try:
        task = _exec_file(task_path, "__cuset_task__")
    except Exception as exc:
        result.message = f"the task failed to load: {_error_text(exc)}"
        return None
    result.stage = "solution"
    try:
        solution = _exec_file(solution_path, "__cuset_solution__")
    except BuildFailed:
        _finish_builds(result, session)
        return None
    except SyntaxError as exc:
        result.status, result.message = "compile_error", f"the solution is not valid Python: {_error_text(exc)}"
        return None
    except BaseException as exc:  # noqa: BLE001 - SystemExit from candidate code included
        if _finish_builds(result, session):
            result.message = f"the solution failed to load: {_error_text(exc)}"
        return None
    if not _finish_builds(result, session):
        return None
    if "ModelNew" not in solution:
        result.message = "the solution defines no ModelNew"
        return None
    result.stage = "init"
    try:
        model, init_inputs = build_model(task, opts.seed, opts.device)
        torch.manual_seed(opts.seed)
        model_new = solution["ModelNew"](*init_inputs).eval()
        if opts.device == "cuda":
            model_new = model_new.cuda()
    except BuildFailed:
        _finish_builds(result, session)
        return None
    except BaseException as exc:  # noqa: BLE001
        if _finish_builds(result, session):
            result.status, result.message = "runtime_error", f"constructing the models failed: {_error_text(exc)}"
        return None
    if not _finish_builds(result, session):
        return None
    ref_state, new_state = model.state_dict(), model_new.state_dict()
    if ref_state and {k: v.shape for k, v in ref_state.items()} == {k: v.shape for k, v in new_state.items()}:
        model_new.load_state_dict(ref_state)
    return task, model, model_new


def run_solution(solution_path: str | Path, task_path: str | Path, options: KernelBenchOptions | None = None,
                 progress: Callable[[dict[str, Any]], None] | None = None, handover: Path | None = None) -> dict[str, Any]:
    """Run one solution in this process; returns the result record as a dict. Runs the
    candidate's code: call it only inside a sandboxed child process (see `evaluate`).

    With `handover` (a folder holding inputs/trial_K.* from cuset.evaluate.reference), the
    candidate runs on those inputs and writes out/trial_K.* (its outputs), out/after_K.* (its
    inputs after the forward) and out/poisoned.* there, and the record's status is "ran":
    the verdict is made from those files by the caller (cuset.evaluate.check), outside this
    process. Without it, the reference is computed and judged here too: a convenience for
    trusted code (tests, `--no-fork`), whose verdict a candidate could forge."""
    opts = options or KernelBenchOptions()
    solution_path, task_path = Path(solution_path), Path(task_path)
    atol, rtol = tolerance(opts.tolerance, "float32")
    result = KernelBenchResult(trials_requested=opts.trials, tolerance=opts.tolerance, atol=atol, rtol=rtol)
    session = Session(solution_path.name, solution_path.read_text(encoding="utf-8"), progress, opts.path)
    with cuda_on_cpu(session) if opts.device == "cpu" else on_gpu(session):
        loaded = _load(result, session, solution_path, task_path, opts)
        if loaded is None:
            return result.to_dict()
        task, model, model_new = loaded
        reference = None
        try:
            if handover is None:
                reference = compute_reference(task, opts.trials, opts.seed, opts.device)
                trial_inputs = reference["inputs"]
                result.inputs = reference["info"]
            else:
                trial_inputs = [load_values(handover / "inputs" / f"trial_{k}") for k in range(opts.trials)]
        except Exception as exc:  # the task's own code failed: not the candidate's doing
            result.status, result.message = "runtime_error", f"the task failed: {_error_text(exc)}"
            return result.to_dict()
        if progress:
            progress({"stage": "run", "compiled": True, "path": result.path, "compile_s": result.compile_s, "builds": result.builds})

        def checkpoint(cand: dict[str, Any]) -> None:
            """Before the poisoned run (whose garbage may crash the process): what is known so far."""
            if progress:
                progress({"stage": "poison", "checkpoint": _verdict_record(result, reference, cand, opts)})

        cand = _run_candidate(result, model_new, trial_inputs, opts, session, handover, checkpoint)
        if cand is None:
            return result.to_dict()
        record = _verdict_record(result, reference, cand, opts)
        if record["status"] in ("correct", "ran") and opts.device == "cuda" and opts.timing_runs:  # "ran": the caller judges
            record["runtime_ms"], record["ref_runtime_ms"] = (_gpu_time(m, to_gpu(trial_inputs[0]), opts.timing_runs) for m in (model_new, model))
    return record


def to_gpu(values: list[Any]) -> list[Any]:
    return to_device([v.clone() if hasattr(v, "clone") else v for v in values], "cuda")


def _verdict_record(result: KernelBenchResult, reference: dict[str, Any] | None, cand: dict[str, Any], opts: KernelBenchOptions) -> dict[str, Any]:
    record = result.to_dict()
    if reference is None:  # handover: the caller judges
        record.update(status="ran", stage="done" if "poisoned" in cand else "poison", trials=len(cand["outputs"]))
        return record
    return apply_verdict(record, judge(reference, cand, opts.tolerance))


def _run_candidate(result: KernelBenchResult, model_new: Any, trial_inputs: list[list[Any]], opts: KernelBenchOptions,
                   session: Session, handover: Path | None, checkpoint: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
    """ModelNew on every trial's inputs (fresh copies), then once more with every compiled call
    poisoned (cuset.evaluate.poison) on trial 0's inputs. Returns what judge() takes as
    `candidate` (tensors in memory, or only counts when they went to `handover`), or None with
    the result filled in when the candidate failed."""
    import torch

    cand: dict[str, Any] = {"outputs": [], "after": [], "calls": 0}

    def forward(inputs: list[Any]) -> tuple[list[Any], list[Any]]:
        run_on = to_device([v.clone() if isinstance(v, torch.Tensor) else v for v in inputs], opts.device)
        with torch.no_grad():
            out = [t.cpu() for t in flat_tensors(model_new(*run_on))]
        return out, [v.cpu() if isinstance(v, torch.Tensor) else v for v in run_on]

    for trial, inputs in enumerate(trial_inputs):
        result.stage = "run"
        try:
            calls = session.calls
            out, after = forward(inputs)
            result.ext_calls += session.calls - calls
            if handover is not None:
                save_values(handover / "out" / f"trial_{trial}", out)
                save_values(handover / "out" / f"after_{trial}", after)
        except BuildFailed:
            _finish_builds(result, session)
            return None
        except BaseException as exc:  # noqa: BLE001
            result.status, result.message = "runtime_error", f"trial {trial}: {_error_text(exc)}"
            return None
        cand["outputs"].append(out if handover is None else [])
        cand["after"].append(after if handover is None else [])
    cand["calls"] = result.ext_calls
    if not opts.poison:
        cand["poisoned"] = None
        return cand
    checkpoint(cand)
    result.stage = "poison"
    session.compiled.poison = True
    poisoned, error = None, ""
    try:
        poisoned, _ = forward(trial_inputs[0])
        if handover is not None:
            save_values(handover / "out" / "poisoned", poisoned)
    except BaseException as exc:  # noqa: BLE001 - garbage in, an error out: the output depends on the kernels
        error = _error_text(exc)
    finally:
        session.compiled.poison = False
    cand.update(poisoned=poisoned, poison_error=error, poison_calls=session.compiled.poisoned_calls)
    result.poison_calls, result.poison_error = session.compiled.poisoned_calls, error
    return cand


def l2_flush_bytes() -> int:
    """Bytes to write between timed runs so that no input stays in the GPU's L2 cache: twice
    the L2 size (KernelBench flushes the same way), 256 MiB when torch cannot tell."""
    import torch

    size = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0)
    return 2 * int(size) if size else 256 * 2**20


def _gpu_time(model: Any, inputs: list[Any], runs: int) -> float:
    """Median time of one call on the GPU, ms, after three warm-up calls: CUDA events on the
    default stream, the L2 cache flushed before every call, and the whole device synchronised
    before the end event is recorded, so work a candidate puts on a side stream is still counted.

    Limitation: this closes KernelBench's stream hack (events on the default stream missing
    work launched on another) only for work that is queued when the call returns; a candidate
    that starts GPU work from a host thread after returning is not timed (the static checks
    fail threads)."""
    import statistics

    import torch

    flush = torch.empty(l2_flush_bytes(), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.default_stream()
    times = []
    with torch.no_grad(), torch.cuda.stream(stream):
        for i in range(runs + 3):
            flush.zero_()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            model(*inputs)
            torch.cuda.synchronize()
            end.record(stream)
            end.synchronize()
            if i >= 3:
                times.append(start.elapsed_time(end))
    return round(statistics.median(times), 4)


# ---------------------------------------------------------------- isolation


def evaluate(solution_path: str | Path, task_path: str | Path, options: KernelBenchOptions | None = None,
             handover: Path | None = None) -> dict[str, Any]:
    """`run_solution` in a forked child, so that a device fault (the emulator ends the process),
    a crash or a hang (options.timeout_s) still gives a record. The child's stderr is passed on.
    Call it from a fresh process (the command line does): a fork of a process that already runs
    threads (torch's pools, a browser driver, job heartbeats) can deadlock in the child."""
    import torch.utils.cpp_extension  # noqa: F401 - imported once here, not in every child (~2 s)

    opts = options or KernelBenchOptions()
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    with tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(r)
                os.dup2(err.fileno(), 2)

                def report(rec: dict[str, Any]) -> None:
                    data = (json.dumps(rec) + "\n").encode()
                    while data:
                        data = data[os.write(w, data):]

                report(run_solution(solution_path, task_path, opts, progress=report, handover=handover))
            except BaseException:  # noqa: BLE001 - the child must reach _exit
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(w)
        chunks, timed_out = _read_until_eof(r, opts.timeout_s)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, wait_status = os.waitpid(pid, 0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    records = [json.loads(line) for line in b"".join(chunks).decode(errors="replace").splitlines() if line.strip()]
    final = next((rec for rec in reversed(records) if "status" in rec), None)
    if final is not None and not timed_out:
        return final
    partial: dict[str, Any] = {}
    for rec in records:
        partial.update(rec)
    faults = [ln for ln in stderr.splitlines() if "cuset-cuda: error:" in ln]
    if "checkpoint" in partial and not timed_out:  # every trial ran; the poisoned run's garbage ended the process
        record = partial["checkpoint"]
        record["poison_error"] = faults[-1].split("cuset-cuda: error: ", 1)[1] if faults else f"the process died ({_describe_wait(wait_status)})"
        if record["status"] == "ran":
            record["stage"] = "done"
        elif any(f in record["poison_error"] for f in DATA_INDEPENDENT_FAULTS):
            record.update(status="runtime_error", correct=False, message=f"poisoned run: {record['poison_error']}")
        return record
    atol, rtol = tolerance(opts.tolerance, "float32")
    result = KernelBenchResult(trials_requested=opts.trials, tolerance=opts.tolerance, atol=atol, rtol=rtol, stage=partial.get("stage", "solution"))
    result.builds = partial.get("builds", [])
    result.compiled = bool(result.builds) and all(b["status"] == "built" for b in result.builds)
    result.path = result.builds[-1]["path"] if result.builds else None
    result.compile_s = round(sum(b["compile_s"] for b in result.builds), 3)
    if timed_out:
        result.message = f"timed out after {opts.timeout_s} s"
    elif faults:
        result.message = faults[-1].split("cuset-cuda: error: ", 1)[1]
    else:
        result.message = f"the evaluation process died ({_describe_wait(wait_status)})"
    return result.to_dict()


def _read_until_eof(fd: int, timeout_s: float | None) -> tuple[list[bytes], bool]:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    chunks = []
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return chunks, True
            data = os.read(fd, 65536)
            if not data:
                return chunks, False
            chunks.append(data)
    finally:
        os.close(fd)


def _describe_wait(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a KernelBench solution on the CPU emulator; prints a JSON record last.")
    parser.add_argument("solution", type=Path, help="the solution file (defines ModelNew, builds its CUDA with load_inline)")
    parser.add_argument("task", type=Path, help="the task file (Model, get_inputs, get_init_inputs)")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials on fresh inputs")
    parser.add_argument("--tolerance", choices=("v0", "strict"), default="v0", help="tolerance profile (cuset.evaluate.verdict)")
    parser.add_argument("--handover", type=Path, help="a folder with inputs/trial_K.* (cuset.evaluate.reference): run on those, "
                        "write the outputs to out/, leave the verdict to the caller (status 'ran')")
    parser.add_argument("--no-poison", action="store_true", help="skip the poisoned run (to measure what it costs)")
    parser.add_argument("--seed", type=int, default=42, help="KernelBench's seed")
    parser.add_argument("--timeout", type=float, default=None, help="seconds for the whole check (default: none)")
    parser.add_argument("--path", choices=PATHS, default="auto", help="build load_inline on the torch shim, real torch, or shim then torch (auto)")
    parser.add_argument("--no-fork", action="store_true", help="run in this process (a device fault then ends it without a record)")
    args = parser.parse_args(argv)
    try:
        opts = KernelBenchOptions(trials=args.trials, tolerance=args.tolerance, seed=args.seed, timeout_s=args.timeout, path=args.path,
                                  poison=not args.no_poison)
    except ValueError as exc:
        parser.error(str(exc))
    for p in (args.solution, args.task):
        if not p.is_file():
            parser.error(f"{p}: no such file")
    if args.no_fork:
        result = run_solution(args.solution, args.task, opts, handover=args.handover)
    else:
        result = evaluate(args.solution, args.task, opts, handover=args.handover)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
