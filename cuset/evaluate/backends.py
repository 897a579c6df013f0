"""The `compile` and `cuda` backends' candidate-side programs (the `cpu` one is cpu/kernelbench.py).

    python -m cuset.evaluate.backends compile SOLUTION.py             # nvcc only: does it build?
    python -m cuset.evaluate.backends cuda SOLUTION.py TASK.py [--trials 5] [--handover DIR] [--timing-runs 20]   # a real GPU

Both run inside cuset.evaluate.sandbox (cuset.evaluate.check starts them) and print one JSON
record as their last stdout line, with the fields of the cpu backend's record.

compile: the solution module is executed with `load_inline` replaced by a stand-in that
compiles every cuda_sources part with nvcc and every cpp_sources part with the host compiler,
against torch's own headers, as load_inline would, and then stops: nothing is linked, loaded or
run. Status "compiled" or "compile_error" (messages point at the solution file's lines);
`correct` is None. nvcc comes from $CUDA_HOME, /usr/local/cuda or the `nvidia-cuda-nvcc` wheel.

cuda: KernelBench's own way on a GPU: torch's load_inline, models and inputs on the GPU, the
same protocol as the cpu backend (cpu/kernelbench.run_solution with device="cuda": trial inputs
handed over, outputs handed back for the verdict, the poisoned run through the wrapped
load_inline module), plus the runtime of ModelNew and of Model (median of `timing_runs` calls:
CUDA events on the default stream, the L2 cache flushed before each, the device synchronised
before the end event; cpu/kernelbench._gpu_time) for speedups. A speedup over 10x is flagged
(KernelBench's excessive-speedup check; verdict.speedup_flag). The timings are taken in the
candidate's process, so they are evidence to look at, not a verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu.kernelbench import InlineCall, KernelBenchOptions, _error_text, run_solution

NVCC_TIMEOUT_S = 600


class _Stop(Exception):
    """Raised by the compile-only load_inline once the sources are compiled."""


def nvcc_path() -> str:
    for base in filter(None, [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]):
        if (Path(base) / "bin" / "nvcc").exists():
            return str(Path(base) / "bin" / "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    try:
        import nvidia.cuda_nvcc  # type: ignore[import-not-found]

        cand = Path(next(iter(nvidia.cuda_nvcc.__path__))) / "bin" / "nvcc"
        if cand.exists():
            return str(cand)
    except ImportError:
        pass
    raise FileNotFoundError("nvcc not found: install the CUDA toolkit, set CUDA_HOME, or `pip install nvidia-cuda-nvcc`")


def _torch_flags() -> list[str]:
    import sysconfig

    import torch.utils.cpp_extension as cpp_ext

    incs = [f"-I{p}" for p in cpp_ext.include_paths()] + [f"-I{sysconfig.get_paths()['include']}"]
    return incs + ["-D_GLIBCXX_USE_CXX11_ABI=1", "-DTORCH_EXTENSION_NAME=cuset_check", "-DTORCH_API_INCLUDE_EXTENSION_H"]


def compile_only(solution: Path) -> dict[str, Any]:
    """Execute the solution with a load_inline that compiles and stops; return the record."""
    import torch.utils.cpp_extension as cpp_ext

    record: dict[str, Any] = {"status": "compile_error", "compiled": False, "correct": None, "message": "", "path": "nvcc",
                              "compile_s": 0.0, "max_abs_error": None}
    text = solution.read_text(encoding="utf-8")
    work = Path.cwd() / "nvcc-build"
    work.mkdir(exist_ok=True)
    calls = []

    def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None, functions: Any = None, extra_cflags: Any = None,
                    extra_cuda_cflags: Any = None, extra_include_paths: Any = None, **_: Any) -> Any:
        call = InlineCall.from_args(name, cpp_sources, cuda_sources, functions, extra_cflags, extra_cuda_cflags,
                                    extra_include_paths, solution.name, text)
        calls.append(call)
        flags = _torch_flags() + [f"-I{p}" for p in call.include_dirs] + [f"-D{d}" for d in call.defines]
        jobs = []
        if call.cuda:
            cu = work / f"{call.name}_cuda.cu"
            cu.write_text("#include <torch/types.h>\n" + call.located(call.cuda, "cuda_sources") + "\n")
            jobs.append([nvcc_path(), "-c", "-std=c++20", "--expt-relaxed-constexpr", *flags, str(cu), "-o", str(cu.with_suffix(".o"))])
        if call.cpp:
            cc = work / f"{call.name}_main.cpp"
            cc.write_text("#include <torch/extension.h>\n" + call.located(call.cpp, "cpp_sources") + "\n")
            jobs.append([os.environ.get("CXX", "g++"), "-c", "-std=c++20", "-fPIC", *flags, str(cc), "-o", str(cc.with_suffix(".o"))])
        t0 = time.perf_counter()
        for argv in jobs:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
            if proc.returncode != 0:
                errors = [ln for ln in (proc.stderr + proc.stdout).splitlines() if "error" in ln]
                record["message"] = "\n".join((errors or (proc.stderr + proc.stdout).splitlines())[:20])
                record["compile_s"] = round(record["compile_s"] + time.perf_counter() - t0, 3)
                raise _Stop
        record["compile_s"] = round(record["compile_s"] + time.perf_counter() - t0, 3)
        raise _Stop  # one extension compiled: stop before the module would be loaded and run

    cpp_ext.load_inline = load_inline
    try:
        exec(compile(text, str(solution), "exec"), {"__name__": "__cuset_solution__", "__file__": str(solution)})  # noqa: S102 - sandboxed
    except _Stop:
        pass
    except SyntaxError as exc:
        record["message"] = f"the solution is not valid Python: {_error_text(exc)}"
        return record
    except Exception as exc:  # noqa: BLE001 - a bad candidate is a result
        if not calls:
            record.update(status="runtime_error", message=f"the solution failed before load_inline: {_error_text(exc)}")
            return record
    if not calls:
        record.update(status="runtime_error", message="the solution never calls load_inline")
    elif not record["message"]:
        record.update(status="compiled", compiled=True)
    return record


def cuda_check(solution: Path, task: Path, trials: int, timing_runs: int = 20, handover: Path | None = None, seed: int = 42,
               poison: bool = True) -> dict[str, Any]:
    """The cpu backend's protocol on a real GPU, plus runtimes for speedup/fast_p."""
    import torch

    if not torch.cuda.is_available():
        return {"status": "runtime_error", "compiled": False, "correct": False, "message": "the cuda backend needs a CUDA GPU; none is visible"}
    opts = KernelBenchOptions(trials=trials, device="cuda", timing_runs=timing_runs, seed=seed, poison=poison)
    return run_solution(solution, task, opts, handover=handover)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cuset.evaluate.backends", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("backend", choices=("compile", "cuda"))
    ap.add_argument("solution")
    ap.add_argument("task", nargs="?")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--handover", type=Path, help="inputs in, outputs out (cuset.evaluate.check makes the verdict)")
    ap.add_argument("--no-poison", action="store_true")
    ap.add_argument("--timing-runs", type=int, default=20, help="cuda: timed calls of ModelNew and Model (0: none, as under compute-sanitizer)")
    args = ap.parse_args(argv)
    if args.backend == "compile":
        record = compile_only(Path(args.solution))
    else:
        if not args.task:
            ap.error("the cuda backend needs TASK.py")
        record = cuda_check(Path(args.solution), Path(args.task), args.trials, timing_runs=args.timing_runs, handover=args.handover,
                            seed=args.seed, poison=not args.no_poison)
    sys.stdout.flush()
    print("\n" + json.dumps(record, default=str), flush=True)
    return 0


if __name__ == "__main__":
    # No interpreter teardown after the record: a CUDA context or an extension's destructor that
    # crashes at exit would make the run "crashed", which cuset.evaluate.check never judges.
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
