"""compute-sanitizer after the correctness trials, on the `cuda` backend.

    from cuset.evaluate.sanitizer import stage
    stage(result, "cuda", True, folder, timeout=120.0, env=env)   # result: a check_solution record, changed in place
    result["sanitizer"]   # {"verdict", "finding", "tools", "runs": [{"tool", "errors", "first", "s", "ending"}], "note"}
    result["sanitizer_s"] # seconds of the sanitizer runs, apart from the trials' wall_s

A GPU run that matches the reference can still be wrong: a race that did not bite this time, a
write past the end of a tensor that landed inside torch's allocation granule. So a candidate the
trials judged `correct` (after the static checks and the poisoned run) runs once more, one trial on
the first trial's inputs, no poisoned run, no timing, under NVIDIA's compute-sanitizer, one tool
at a time, stopping at the first finding:

    tool        finding -> status    what it sees
    racecheck   race                 shared-memory hazards between threads (a missing __syncthreads)
    memcheck    memory_error         out-of-bounds and misaligned accesses, errors of CUDA calls
    synccheck   sync_error           barriers some threads of a block or warp never reach
    initcheck   memory_error         reads of device memory never written (off by default: torch's
                                     own uninitialised buffers, torch.empty, are read legitimately)

A finding is an error count above 0 in the tool's "ERROR SUMMARY: N errors" line, or its error
exit code; the verdict's message names the tool and quotes its first report line. The run is the
cuda backend's own program (`python -m cuset.evaluate.backends cuda ... --handover handover`) in
the trials' own working folder, so torch's extension build is reused, and in the same sandbox
(cuset.evaluate.sandbox: namespaces, uid nobody, wall/CPU/process limits, killed at the end), with
torch's caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1) so that memcheck sees each
tensor's own bounds.

`sanitizer.verdict` says what happened, one word:

    clean      every tool ran, none found anything; the verdict stays `correct`
    finding    a tool found something (`finding` names it); the status is its status, not correct
    timeout    a tool ran past its limit (the check's timeout x WALL_SCALE, at least MIN_WALL_S):
               the status is `timeout`, its message names the tool. The candidate could not be
               checked, and an unchecked race counts as not correct, like a trial that times out.
    unchecked  a tool ended without its summary, or its program did not get through the trial
               (the sanitizer's own failure, not a finding): the verdict stays, `note` says which
    not run    the trials did not judge the candidate correct: nothing to sanitize
    off        sanitizer=False (`--no-sanitizer`)
    not found  no executable ($CUSET_COMPUTE_SANITIZER, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH):
               the verdict is the trials' alone, `note` says where it looked
    unusable   found, but memcheck over a one-tensor torch program did not come back clean (a
               runtime that refuses the device, e.g. gVisor's "Device not supported"): as not found
    n/a        the cpu or compile backend (the emulator checks races and bounds itself)

Limitation: the sanitizer is a check for bugs a model writes by chance, not a wall against a
program written to beat it: that program shares the sandbox's uid with its sanitizer (it could
kill it before the summary: `unchecked`), runs in the folder its trials could write to, and can
tell it is instrumented. The static checks fail the file writes and process calls that needs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cuset.evaluate.sandbox import Limits, run, scratch

TOOLS = {"racecheck": "race", "memcheck": "memory_error", "synccheck": "sync_error", "initcheck": "memory_error"}
DEFAULT_TOOLS = ("racecheck", "memcheck", "synccheck")
STATUSES = ("race", "memory_error", "sync_error")
VERDICTS = ("clean", "finding", "timeout", "unchecked", "not run", "off", "not found", "unusable", "n/a")
ERROR_EXITCODE = 86
# The sanitizer slows kernels 10-100x and starts a CUDA context under instrumentation: each
# tool's run gets this many times the check's own timeout, and at least MIN_WALL_S.
WALL_SCALE = 4.0
MIN_WALL_S = 300.0
CUDA_DEFAULT = "/usr/local/cuda"  # looked in after $CUDA_HOME
PROBE = "import torch; x = torch.ones(8, device='cuda'); print('cuset-probe', float(x.sum()))"
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_PREFIX = "========="
_PROBED: dict[str, str] = {}  # executable -> "" (usable) or why not
_PROBE_LOCK = threading.Lock()


def find_executable() -> tuple[str | None, list[str]]:
    """(path or None, the places looked in, in order)."""
    looked: list[str] = []
    explicit = os.environ.get("CUSET_COMPUTE_SANITIZER", "").strip()
    if explicit:
        looked.append(f"$CUSET_COMPUTE_SANITIZER={explicit}")
        return (explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None), looked
    for base in filter(None, [os.environ.get("CUDA_HOME"), CUDA_DEFAULT]):
        cand = Path(base) / "bin" / "compute-sanitizer"
        looked.append(str(cand))
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand), looked
    looked.append("PATH")
    return shutil.which("compute-sanitizer"), looked


def check_tools(tools: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The tools, validated: known names, at least one."""
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        raise ValueError(f"sanitizer tools {list(tools)}: choose from {', '.join(TOOLS)}")
    return tuple(tools)


def parse(output: str) -> tuple[int | None, str]:
    """(the error count of the ERROR SUMMARY line, or None without one; the tool's first report
    line, without the ========= prefix). The banner, blank prefix lines, the per-tool summaries
    (RACECHECK SUMMARY, LEAK SUMMARY) and the ERROR SUMMARY itself are not report lines."""
    errors = None
    first = ""
    for line in output.splitlines():
        line = line.strip()
        if not line.startswith(_PREFIX):
            continue
        body = line[len(_PREFIX):].strip()
        m = _SUMMARY.search(body)
        if m:
            errors = int(m.group(1))
            continue
        if not first and body and not body.startswith("COMPUTE-SANITIZER") and "SUMMARY:" not in body:
            first = body
    return errors, first


def command(exe: str, tool: str, program: list[str]) -> list[str]:
    """The sanitizer's argv around `program` (an argv that starts with the interpreter)."""
    return [exe, "--tool", tool, "--error-exitcode", str(ERROR_EXITCODE), "--print-limit", "20", *program]


def trial_program(seed: int = 42) -> list[str]:
    """The cuda backend's program as the correctness run starts it, for one trial (the first
    trial's handed-over inputs), without the poisoned run or the timing."""
    return [sys.executable, "-m", "cuset.evaluate.backends", "cuda", "solution.py", "task.py", "--trials", "1", "--seed", str(seed),
            "--handover", "handover", "--timing-runs", "0", "--no-poison"]


def _limits(timeout: float) -> Limits:
    wall = max(MIN_WALL_S, timeout * WALL_SCALE)
    return Limits(wall_s=wall, cpu_s=wall * 2, memory_mb=None, processes=256, file_mb=512, output_kb=1024)


def _program_status(stdout: str) -> str | None:
    """The status in the program's own last JSON line (the cuda backend prints one), or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                return None
            return str(data.get("status")) if isinstance(data, dict) else None
    return None


def run_tool(exe: str, tool: str, folder: Path, limits: Limits, env: dict[str, str], seed: int = 42) -> dict[str, Any]:
    """One tool over the candidate in `folder` (solution.py, task.py, handover/ of the trials),
    sandboxed: {"tool", "errors" (int or None), "first" (its first report line), "s", "ending"}.
    ending: "clean", "finding", "timeout: ..." or "unchecked: ..." (no summary, or the program
    under the tool did not get through its trial)."""
    t0 = time.perf_counter()
    outcome = run(command(exe, tool, trial_program(seed)), cwd=folder, limits=limits,
                  env={**env, "TMPDIR": str(folder), "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, keep_paths=[Path(os.path.realpath(exe)).parent])
    seconds = round(time.perf_counter() - t0, 3)
    errors, first = parse(outcome.stdout + "\n" + outcome.stderr)
    program = _program_status(outcome.stdout)
    if outcome.status == "timeout":
        ending = f"timeout: {outcome.message}"
    elif (errors or 0) > 0 or outcome.returncode == ERROR_EXITCODE:
        ending = "finding"
    elif errors is None:
        ending = f"unchecked: no ERROR SUMMARY (the sanitizer {outcome.message})"
    elif program != "ran":
        ending = f"unchecked: the program under {tool} did not get through its trial ({program or outcome.message})"
    else:
        ending = "clean"
    return {"tool": tool, "errors": errors, "first": first[:500], "s": seconds, "ending": ending}


def probe(exe: str, env: dict[str, str] | None = None, timeout: float = 120.0) -> str:
    """"" when `exe` instruments this machine's GPU (memcheck over a one-tensor torch program
    comes back clean with the program's answer), else why not. Once per executable per process."""
    with _PROBE_LOCK:
        if exe in _PROBED:
            return _PROBED[exe]
        with scratch(prefix="cuset-sanitizer-probe-") as folder:
            outcome = run(command(exe, "memcheck", [sys.executable, "-c", PROBE]), cwd=folder, limits=_limits(timeout),
                          env={**(env or {}), "TMPDIR": str(folder)}, keep_paths=[Path(os.path.realpath(exe)).parent])
        errors, first = parse(outcome.stdout + "\n" + outcome.stderr)
        if errors == 0 and "cuset-probe 8.0" in outcome.stdout:
            why = ""
        else:
            tail = [ln.strip() for ln in (outcome.stdout + "\n" + outcome.stderr).splitlines() if ln.strip()][-1:] or [outcome.message]
            why = (f"compute-sanitizer at {exe} does not work here (memcheck over a one-tensor torch program: "
                   f"{first or tail[0]}; {outcome.message})")
        _PROBED[exe] = why
        return why


def availability(env: dict[str, str] | None = None, timeout: float = 120.0, probing: bool = True) -> tuple[str | None, str, str]:
    """(executable or None, verdict "" | "not found" | "unusable", note): whether the stage can
    run here; `probing=False` only looks for the executable (no GPU run)."""
    exe, looked = find_executable()
    if exe is None:
        return None, "not found", f"compute-sanitizer not found (looked in {', '.join(looked)}): the verdict is the trials' alone"
    why = probe(exe, env, timeout) if probing else ""
    if why:
        return None, "unusable", f"{why}: the verdict is the trials' alone"
    return exe, "", ""


def warning(env: dict[str, str] | None = None, probing: bool = True) -> str:
    """The one line a command prints for a cuda run with the sanitizer on that cannot sanitize, or ""."""
    _, verdict, note = availability(env, probing=probing)
    return f"warning: {note}; candidates are not sanitized (--no-sanitizer silences this)" if verdict else ""


def _info(verdict: str, tools: tuple[str, ...] | list[str] = (), note: str = "") -> dict[str, Any]:
    return {"verdict": verdict, "finding": None, "tools": list(tools), "runs": [], "note": note}


def stage(result: dict[str, Any], backend: str, on: bool, folder: Path, timeout: float, env: dict[str, str],
          tools: tuple[str, ...] = DEFAULT_TOOLS, seed: int = 42) -> dict[str, Any]:
    """check_solution's last stage, in the trials' working folder `folder`: on the cuda backend
    `sanitize` (or, off, a record that says so); on the others an "n/a" record."""
    if backend != "cuda":
        why = "the emulator checks races and bounds itself" if backend == "cpu" else "nothing runs"
        result.update(sanitizer=_info("n/a", note=f"n/a ({backend} backend: {why})"), sanitizer_s=0.0)
        return result
    if not on:
        result.update(sanitizer=_info("off", note="off (sanitizer=False, --no-sanitizer)"), sanitizer_s=0.0)
        return result
    return sanitize(result, folder, timeout, env, tools, seed)


def sanitize(result: dict[str, Any], folder: Path, timeout: float, env: dict[str, str], tools: tuple[str, ...] = DEFAULT_TOOLS,
             seed: int = 42) -> dict[str, Any]:
    """Run `tools` in order over a candidate `result` says is correct; the first finding turns
    it into that tool's status, a timeout into `timeout` (both not correct). Records `sanitizer`
    and `sanitizer_s` either way (see the module docstring for the verdicts)."""
    tools = check_tools(tools)
    info = _info("not run", tools)
    result["sanitizer"], result["sanitizer_s"] = info, 0.0
    if result.get("status") != "correct":
        info["note"] = f"not run: the candidate is {result.get('status')}, not correct"
        return result
    exe, verdict, note = availability(env, timeout)
    if exe is None:
        info.update(verdict=verdict, note=note)
        return result
    limits = _limits(timeout)
    for tool in tools:
        record = run_tool(exe, tool, folder, limits, env, seed)
        info["runs"].append(record)
        result["sanitizer_s"] = round(result["sanitizer_s"] + record["s"], 3)
        if record["ending"] == "finding":
            said = record["first"] or f"{record['errors']} error(s), no report line"
            info.update(verdict="finding", finding=tool, note=f"{tool}: {said}")
            result.update(status=TOOLS[tool], correct=False, message=f"compute-sanitizer {tool}: {said}")
            return result
        if record["ending"].startswith("timeout"):
            info.update(verdict="timeout", note=f"{tool} {record['ending']}")
            result.update(status="timeout", correct=False,
                          message=f"compute-sanitizer {tool} ran past its {limits.wall_s:g} s limit: the candidate could not be checked "
                                  f"for {TOOLS[tool].replace('_', ' ')}s, so it does not count as correct")
            return result
    unchecked = [f"{r['tool']} ({r['ending'].removeprefix('unchecked: ')})" for r in info["runs"] if r["ending"] != "clean"]
    info.update(verdict="unchecked" if unchecked else "clean", note=f"unchecked: {'; '.join(unchecked)}" if unchecked else "clean")
    return result
