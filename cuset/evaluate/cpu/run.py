"""Run CUDA programs on the CPU emulator, under chosen schedules and fill patterns.

    result = run_program([Path("prog.cu")], args=["100"])
    result.status            # built | compile_error | unsupported | backend_error  (no run)
                             # ok | exit | device_fault | crashed | timeout          (ran)
    report = race_check(binary)      # same program, several thread orders: outputs differ -> race
    report = fill_check(binary)      # two garbage patterns: outputs differ -> uninitialised read

The emulator's knobs are environment variables read by the runtime header:
CUSET_SCHEDULE (forward | reverse | random:SEED), CUSET_FILL (0xNN | zero | random),
CUSET_WORKERS (OS threads running blocks), CUSET_FIBERS (auto | always).
Programs here are the user's own (`cuset run-cuda`); untrusted candidates go through
cuset.evaluate.sandbox instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuset.evaluate.cpu.build import EXIT_DEVICE_FAULT, Build, build_program

SCHEDULES = ("forward", "reverse", "random:1", "random:2")
FILLS = ("0xCD", "0x5A")
# CUDA programs rarely free everything; a 50 GB request must fail, not be attempted.
ASAN_OPTIONS = "detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=8192"


@dataclass
class RunOptions:
    """How the emulator runs a program (see the module docstring for each knob)."""

    schedule: str = "forward"
    fill: str = "0xCD"
    workers: int | None = None
    fibers: str = "auto"

    def __post_init__(self) -> None:
        if self.schedule not in ("forward", "reverse") and not self.schedule.startswith("random"):
            raise ValueError(f"schedule {self.schedule!r}: use forward, reverse or random:SEED")
        if self.fibers not in ("auto", "always"):
            raise ValueError(f"fibers {self.fibers!r}: use auto or always")

    def env(self) -> dict[str, str]:
        env = {"CUSET_SCHEDULE": self.schedule, "CUSET_FILL": self.fill, "CUSET_FIBERS": self.fibers, "ASAN_OPTIONS": ASAN_OPTIONS}
        if self.workers:
            env["CUSET_WORKERS"] = str(self.workers)
        return env


@dataclass
class ProgramResult:
    status: str
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    build: Build | None = None
    message: str = ""
    wall_s: float = 0.0  # the program's own run, wall clock (the build is in build.compile_s)

    @property
    def ran(self) -> bool:
        return self.exit_code is not None


def execute(binary: Path, args: list[str] = (), options: RunOptions | None = None, timeout: float = 60.0, input_bytes: bytes | None = None,
            cwd: Path | None = None) -> ProgramResult:
    """Run a built program (in `cwd`, default: here) and name what happened."""
    env = {**os.environ, **(options or RunOptions()).env()}
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(binary), *args], stdin=subprocess.PIPE if input_bytes else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True, cwd=cwd)
    try:
        out, err = proc.communicate(input_bytes, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return ProgramResult("timeout", None, out.decode(errors="replace"), err.decode(errors="replace"), message=f"no exit within {timeout:g} s",
                             wall_s=time.perf_counter() - t0)
    result = _classify(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))
    result.wall_s = time.perf_counter() - t0
    return result


def _classify(code: int, stdout: str, stderr: str) -> ProgramResult:
    if code == 0:
        return ProgramResult("ok", 0, stdout, stderr)
    if code == EXIT_DEVICE_FAULT:
        msg = next((ln for ln in stderr.splitlines() if ln.startswith("cuset-cuda: error:")), "device fault")
        return ProgramResult("device_fault", code, stdout, stderr, message=msg.removeprefix("cuset-cuda: error: "))
    asan = sanitizer_report(stderr)
    if asan:
        return ProgramResult("crashed", code, stdout, stderr, message=asan)
    if code < 0:
        return ProgramResult("crashed", code, stdout, stderr, message=f"killed by {signal.Signals(-code).name}")
    return ProgramResult("exit", code, stdout, stderr, message=f"exit code {code}")


def sanitizer_report(stderr: str) -> str:
    """One line from an AddressSanitizer/UBSan report: what, and where in the user's code."""
    lines = stderr.splitlines()
    head = next((i for i, ln in enumerate(lines) if "ERROR: AddressSanitizer" in ln or ": runtime error:" in ln), None)
    if head is None:
        return ""
    what = lines[head].split("ERROR: ")[-1].split(" on address")[0].strip()
    access = next((ln.strip() for ln in lines[head + 1 : head + 3] if ln.strip().startswith(("READ", "WRITE"))), "")
    frame = next((ln.strip() for ln in lines[head + 1 :] if ln.strip().startswith("#") and "cuset_" not in ln and "/usr/" not in ln and " in " in ln), "")
    where = frame.split(" in ", 1)[-1] if frame else ""
    return "; ".join(x for x in (what, access.split(" at ")[0], where) if x)


def run_program(
    sources: list[Path],
    args: list[str] = (),
    include_dirs: list[Path] = (),
    defines: list[str] = (),
    sanitize: bool = False,
    options: RunOptions | None = None,
    timeout: float = 60.0,
) -> ProgramResult:
    """Build (cached) and run; a build that fails comes back with the build's status."""
    build = build_program(list(sources), include_dirs=list(include_dirs), defines=list(defines), sanitize=sanitize)
    if not build.ok:
        return ProgramResult(build.status, None, "", build.message, build=build, message=build.message)
    result = execute(build.binary, list(args), options, timeout)
    result.build = build
    return result


@dataclass
class VariantReport:
    """The same program under several settings; `differs` when their outputs disagree."""

    kind: str
    results: dict[str, ProgramResult] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        outs = {(r.status, r.stdout) for r in self.results.values()}
        return len(outs) > 1

    def summary(self) -> str:
        if not self.differs:
            return f"{self.kind}: same output under " + ", ".join(self.results)
        lines = [f"{self.kind}: outputs differ"]
        for name, r in self.results.items():
            first = (r.stdout.strip().splitlines() or [r.status])[0][:100]
            lines.append(f"  {name}: {r.status}: {first}")
        return "\n".join(lines)


def race_check(binary: Path, args: list[str] = (), schedules: tuple[str, ...] = SCHEDULES, timeout: float = 60.0) -> VariantReport:
    """Run under several thread orders (one worker, so block order is fixed): a race between
    threads of a block shows up as outputs that change with the order."""
    rep = VariantReport("race check")
    for s in schedules:
        rep.results[s] = execute(binary, list(args), RunOptions(schedule=s, workers=1), timeout)
    return rep


def fill_check(binary: Path, args: list[str] = (), fills: tuple[str, ...] = FILLS, timeout: float = 60.0) -> VariantReport:
    """Run with different garbage in fresh device and shared memory: a read of memory nobody
    wrote shows up as outputs that change with the pattern."""
    rep = VariantReport("uninitialised-memory check")
    for f in fills:
        rep.results[f] = execute(binary, list(args), RunOptions(fill=f, workers=1), timeout)
    return rep
