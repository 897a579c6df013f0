"""Running a KernelBench file (a task or a solution) in this process: loaded into a namespace
(`exec_file`), with CUDA devices meaning the CPU where there is no GPU (`cpu_mode`), and a
failure as one bounded line of a result record (`error_text`).

    with cpu_mode():                                   # .cuda(), device="cuda", .to("cuda") -> the CPU
        task = exec_file(Path("task.py"), "__cuset_task__")

Shared by the reference process (cuset.evaluate.reference), the CPU backend
(cuset.evaluate.cpu.kernelbench) and the suite's validator, so that none of them imports another
for it. Executing a file runs its code: a candidate's only ever in a sandboxed child process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MESSAGE_CHARS = 4000  # a result record's message is cut here


def is_cuda(device: Any) -> bool:
    """`device` names a CUDA device: torch.device('cuda'), 'cuda', 'cuda:N', or a bare index."""
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, int) and not isinstance(device, bool)  # torch reads a bare index as cuda:N


def cpu_mode() -> Any:
    """A TorchFunctionMode under which CUDA devices mean the CPU."""
    import torch
    from torch.overrides import TorchFunctionMode

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if name == "cuda" and args and isinstance(args[0], torch.Tensor):
                return args[0]
            if "device" in kwargs and is_cuda(kwargs["device"]):
                kwargs["device"] = "cpu"
            if name == "to" and len(args) > 1 and is_cuda(args[1]):
                args = (args[0], "cpu", *args[2:])
            return func(*args, **kwargs)

    return CudaOnCpu()


def exec_file(path: Path, label: str) -> dict[str, Any]:
    """The namespace the file's code leaves, run as a module named `label`."""
    text = path.read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": label, "__file__": str(path)}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - running the candidate is the point
    return namespace


def error_text(exc: BaseException) -> str:
    """'ExceptionType: message', cut to MESSAGE_CHARS."""
    return f"{type(exc).__name__}: {exc}"[:MESSAGE_CHARS]
