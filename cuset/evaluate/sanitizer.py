"""compute-sanitizer after the correctness trials, on the `cuda` backend.

    from cuset.evaluate.sanitizer import sanitize
    sanitize(result, solution, task, limits, env)   # result: a check_solution record; changed in place

A GPU run that matches the reference can still be wrong: a race that did not bite this time, a
write past the end of a tensor that landed inside torch's allocation granule. So a candidate the
trials judged `correct` runs once more (one trial, no poisoned run, inputs of its own) under
NVIDIA's compute-sanitizer, one tool at a time, stopping at the first finding:

    tool        finding -> status    what it sees
    racecheck   race                 shared-memory hazards between threads (a missing __syncthreads)
    memcheck    memory_error         out-of-bounds and misaligned accesses, errors of CUDA calls
    synccheck   sync_error           barriers some threads of a block or warp never reach
    initcheck   memory_error         reads of device memory never written (off by default: torch's
                                     own uninitialised buffers, torch.empty, are read legitimately)

A finding is the tool's error count above 0 in its "ERROR SUMMARY: N errors" line (or its error
exit code); the verdict's message is the tool's first report line. The run is the cuda backend's
own program in the same sandbox as the trials (cuset.evaluate.sandbox: its own namespaces, uid
nobody, limits), all tools in one working folder so the extension is built once, with torch's caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1) so that
memcheck sees each tensor's own bounds. A tool that runs past its time (the sanitizer slows
kernels 10-100x) or ends without its summary leaves the verdict as it was and says so in
`result["sanitizer"]["runs"]`: an unchecked candidate is not a finding.

The record gets `sanitizer` ({"tools", "runs": [{"tool", "errors", "s", "ending"}], "finding",
"note"}) and `sanitizer_s`, the time of these runs, kept apart from the trials' wall_s.

The executable: $CUSET_COMPUTE_SANITIZER, then $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH.
Not found, the verdict stands and `sanitizer.note` says where it looked (never a silent skip).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from cuset.evaluate.sandbox import Limits, run, scratch

TOOLS = {"racecheck": "race", "memcheck": "memory_error", "synccheck": "sync_error", "initcheck": "memory_error"}
DEFAULT_TOOLS = ("racecheck", "memcheck", "synccheck")
STATUSES = ("race", "memory_error", "sync_error")
ERROR_EXITCODE = 86
# The sanitizer slows kernels 10-100x and starts a CUDA context under instrumentation: each
# tool's run gets this many times the check's own timeout, and at least MIN_WALL_S.
WALL_SCALE = 4.0
MIN_WALL_S = 300.0
CUDA_DEFAULT = "/usr/local/cuda"  # looked in after $CUDA_HOME
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_PREFIX = "========="


def find_executable() -> tuple[str | None, list[str]]:
    """(path or None, the places looked in, in order)."""
    looked: list[str] = []
    explicit = os.environ.get("CUSET_COMPUTE_SANITIZER", "").strip()
    if explicit:
        looked.append(f"$CUSET_COMPUTE_SANITIZER={explicit}")
        return (explicit if os.access(explicit, os.X_OK) else None), looked
    for base in filter(None, [os.environ.get("CUDA_HOME"), CUDA_DEFAULT]):
        cand = Path(base) / "bin" / "compute-sanitizer"
        looked.append(str(cand))
        if os.access(cand, os.X_OK):
            return str(cand), looked
    looked.append("PATH")
    return shutil.which("compute-sanitizer"), looked


def check_tools(tools: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        raise ValueError(f"sanitizer tools {list(tools)}: choose from {', '.join(TOOLS)}")
    return tuple(tools)


def parse(output: str) -> tuple[int | None, str]:
    """(the error count of the ERROR SUMMARY line, or None without one; the tool's first report
    line, without the ========= prefix). The banner, blank prefix lines, the per-tool summaries
    and the ERROR SUMMARY itself are not report lines."""
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


def command(exe: str, tool: str, trials_argv: list[str]) -> list[str]:
    """The sanitizer's argv around the cuda backend's program (`trials_argv` minus python)."""
    return [exe, "--tool", tool, "--error-exitcode", str(ERROR_EXITCODE), "--print-limit", "20", sys.executable, *trials_argv]


def run_tool(exe: str, tool: str, folder: Path, limits: Limits, env: dict[str, str], seed: int = 42) -> dict[str, Any]:
    """One tool over the candidate in `folder` (solution.py, task.py), sandboxed: {"tool",
    "errors" (int or None), "first" (its first report line), "s", "ending" (clean | finding |
    timeout: ... | no summary: ...)}."""
    argv = command(exe, tool, ["-m", "cuset.evaluate.backends", "cuda", "solution.py", "task.py", "--trials", "1",
                               "--seed", str(seed), "--no-poison"])
    t0 = time.perf_counter()
    outcome = run(argv, cwd=folder, limits=limits, env={**env, "TMPDIR": str(folder), "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
                  keep_paths=[Path(os.path.realpath(exe)).parent])
    seconds = round(time.perf_counter() - t0, 3)
    errors, first = parse(outcome.stdout + "\n" + outcome.stderr)
    if outcome.status == "timeout":
        ending = f"timeout: {outcome.message}"
    elif (errors or 0) > 0 or outcome.returncode == ERROR_EXITCODE:
        ending = "finding"
    elif errors == 0:
        ending = "clean"
    else:
        ending = f"no summary: the sanitizer {outcome.message}"
    return {"tool": tool, "errors": errors, "first": first[:500], "s": seconds, "ending": ending}


def stage(result: dict[str, Any], backend: str, on: bool, solution: Path, task: Path, timeout: float, env: dict[str, str],
          tools: tuple[str, ...] = DEFAULT_TOOLS, seed: int = 42) -> dict[str, Any]:
    """check_solution's last stage: on the cuda backend, `sanitize` (or, off, a record that says
    so); other backends are left as they are (the cpu emulator checks races and bounds itself)."""
    if backend != "cuda":
        return result
    if not on:
        result.update(sanitizer={"tools": [], "runs": [], "finding": None, "note": "off (sanitizer=False, --no-sanitizer)"}, sanitizer_s=0.0)
        return result
    return sanitize(result, solution, task, timeout, env, tools, seed)


def sanitize(result: dict[str, Any], solution: Path, task: Path, timeout: float, env: dict[str, str],
             tools: tuple[str, ...] = DEFAULT_TOOLS, seed: int = 42) -> dict[str, Any]:
    """Run `tools` in order over a candidate `result` says is correct; the first finding turns
    it into that tool's status (not correct). Records `sanitizer` and `sanitizer_s` either way."""
    tools = check_tools(tools)
    info: dict[str, Any] = {"tools": list(tools), "runs": [], "finding": None, "note": ""}
    result["sanitizer"], result["sanitizer_s"] = info, 0.0
    if result.get("status") != "correct":
        info["note"] = f"not run: the candidate is {result.get('status')}, not correct"
        return result
    exe, looked = find_executable()
    if exe is None:
        info["note"] = f"compute-sanitizer not found (looked in {', '.join(looked)}): the verdict is the trials' alone"
        return result
    wall = max(MIN_WALL_S, timeout * WALL_SCALE)
    limits = Limits(wall_s=wall, cpu_s=wall * 2, memory_mb=None, processes=256, file_mb=512, output_kb=1024)
    # One folder for all the tools: HOME is the working folder, so torch's extension build
    # (~/.cache/torch_extensions, ~50 s with nvcc) is made by the first tool and reused.
    with scratch(prefix="cuset-sanitize-") as folder:
        shutil.copyfile(solution, folder / "solution.py")
        shutil.copyfile(task, folder / "task.py")
        for tool in tools:
            record = run_tool(exe, tool, folder, limits, env, seed)
            info["runs"].append(record)
            result["sanitizer_s"] = round(result["sanitizer_s"] + record["s"], 3)
            if record["ending"] == "finding":
                said = record["first"] or f"{record['errors']} error(s), no report line"
                info["finding"] = tool
                result.update(status=TOOLS[tool], correct=False, message=f"compute-sanitizer {tool}: {said}")
                return result
    unchecked = [f"{r['tool']} ({r['ending']})" for r in info["runs"] if r["ending"] != "clean"]
    info["note"] = f"unchecked: {', '.join(unchecked)}" if unchecked else "clean"
    return result
