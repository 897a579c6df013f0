"""CPU backend: CUDA translated to C++ and run on the project's emulator runtime (include/).

Its face, three calls (imported on first use, so that `import cuset.evaluate.cpu` stays cheap):

    from cuset.evaluate.cpu import build_program, run_program, evaluate
    built = build_program([Path("saxpy.cu")])            # translate + g++ (cached) -> Build (status, binary, message)
    ran = run_program([Path("saxpy.cu")], ["3", "4"])    # build, then run with limits -> ProgramResult (exit code, output)
    record = evaluate("solution.py", "task.py")          # check a KernelBench solution (forked) -> dict

Behind it: translate.py and ptx.py (the CUDA rewrite), build.py (g++ and the build cache),
run.py (running, race and fill checks), kernelbench.py (the KernelBench protocol) with its build
paths inline_call.py, shim.py, torch_fallback.py and load_inline.py. The reference is README.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_FACE = {
    "build_program": "build", "Build": "build", "BackendError": "build",
    "run_program": "run", "RunOptions": "run", "ProgramResult": "run",
    "evaluate": "kernelbench", "run_solution": "kernelbench", "KernelBenchOptions": "kernelbench",
}
__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    if name not in _FACE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_FACE[name]}"), name)
