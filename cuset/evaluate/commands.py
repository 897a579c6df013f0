"""`cuset run-cuda` and `cuset check`: the CPU backend from the command line.

    cuset run-cuda saxpy.cu util.cpp -I include -D N=1024 -- 3 4
    cuset run-cuda reduce.cu --race-check          # several thread orders; differing output = race
    cuset run-cuda reduce.cu --sanitize            # AddressSanitizer + bounds checks
    cuset check solution.py --task task.py --backend cpu --json

`run-cuda` builds the way nvcc would and exits with the program's own exit code; when the
program did not run it exits with a code of its own and one line on stderr: 120 compile error,
121 unsupported construct, 122 outputs differ under --race-check/--fill-check, 125 the backend
itself failed. A fault the emulated GPU detects (illegal address, barrier divergence, deadlock,
host dereference of a device pointer) ends the program with 101.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu.build import EXIT_BACKEND, EXIT_COMPILE_ERROR, EXIT_UNSUPPORTED, build_program
from cuset.evaluate.cpu.run import SCHEDULES, RunOptions, fill_check, race_check

EXIT_DIFFERS = 122
BUILD_EXIT = {"compile_error": EXIT_COMPILE_ERROR, "unsupported": EXIT_UNSUPPORTED, "backend_error": EXIT_BACKEND}


def add_evaluate_commands(sub: Any) -> None:
    """Add `run-cuda` and `check` to the `cuset` parser's subcommands."""
    p = sub.add_parser("run-cuda", help="build and run a CUDA program on the CPU emulator (no GPU needed)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE", help=".cu/.cpp sources (headers they include are found as nvcc would)")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include folder")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE", help="preprocessor definition")
    p.add_argument("-o", dest="output", metavar="FILE", help="also keep the built executable here")
    p.add_argument("--sanitize", action="store_true", help="AddressSanitizer + UBSan; shared memory from the heap")
    p.add_argument("--schedule", default="forward", help="thread order between barriers: forward, reverse, random:SEED")
    p.add_argument("--fill", default="0xCD", help="garbage byte for fresh device/shared memory: 0xNN, zero, random")
    p.add_argument("--workers", type=int, help="OS threads running blocks (default: all cores)")
    p.add_argument("--race-check", action="store_true", help=f"run under {', '.join(SCHEDULES)} and compare outputs")
    p.add_argument("--fill-check", action="store_true", help="run with two garbage patterns and compare outputs")
    p.set_defaults(func=cmd_run_cuda, program_args=[])

    p = sub.add_parser("check", help="check a KernelBench-format solution (ModelNew) against its task")
    p.add_argument("solution", help="the solution .py (defines ModelNew)")
    p.add_argument("--task", required=True, help="the task .py (defines Model, get_inputs, get_init_inputs)")
    p.add_argument("--backend", default="cpu", choices=("cpu",), help="cpu: the emulator (the cuda backend comes with evaluation)")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--timeout", type=float, default=120.0, help="wall-clock limit of the candidate process, seconds")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_check)


def split_program_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """`run-cuda ... -- ARGS`: the program's arguments are everything after the first `--`."""
    if argv and argv[0] == "run-cuda" and "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def cmd_run_cuda(args: argparse.Namespace) -> int:
    build = build_program([Path(f) for f in args.files], include_dirs=[Path(d) for d in args.include], defines=args.define,
                          sanitize=args.sanitize, output=Path(args.output) if args.output else None)
    if not build.ok:
        print(f"cuset run-cuda: {build.status.replace('_', ' ')}:\n{build.message}", file=sys.stderr)
        return BUILD_EXIT[build.status]
    if args.race_check or args.fill_check:
        report = race_check(build.binary, args.program_args) if args.race_check else fill_check(build.binary, args.program_args)
        first = next(iter(report.results.values()))
        sys.stdout.write(first.stdout)
        print(f"cuset run-cuda: {report.summary()}", file=sys.stderr)
        return EXIT_DIFFERS if report.differs else (first.exit_code if first.exit_code is not None else EXIT_BACKEND)
    try:
        opts = RunOptions(schedule=args.schedule, fill=args.fill, workers=args.workers)
    except ValueError as e:
        print(f"cuset run-cuda: error: {e}", file=sys.stderr)
        return 2
    import os

    proc = subprocess.run([str(build.binary), *args.program_args], env={**os.environ, **opts.env()})
    code = proc.returncode
    if code < 0:  # as a shell reports a signal
        print(f"cuset run-cuda: program killed by {signal.Signals(-code).name}", file=sys.stderr)
        return 128 - code
    return code


def cmd_check(args: argparse.Namespace) -> int:
    from cuset.evaluate.check import check_solution

    result = check_solution(Path(args.solution), Path(args.task), backend=args.backend, trials=args.trials, timeout=args.timeout)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(f"{result['status']}: {result['message']}")
        for key in ("compiled", "correct", "max_abs_error", "path"):
            print(f"  {key}: {result.get(key)}")
    return 0 if result.get("correct") else 1
