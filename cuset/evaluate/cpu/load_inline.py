"""load_inline while a KernelBench solution runs: one call built on the shim, falling back to
real torch when g++ says the shim lacks the API (`build_inline`, its `BuildRecord` saying which
path ran), the `Session` that stands in for torch's load_inline and keeps every call's record,
and the two contexts a solution runs in: `cuda_on_cpu` (the emulator; CUDA devices mean the CPU)
and `on_gpu` (torch's own load_inline on a real GPU, the `cuda` backend).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from cuset.evaluate.cpu.inline_call import PATHS, InlineCall, _line_in, _plain_quotes
from cuset.evaluate.cpu.shim import ShimModule, build_shim
from cuset.evaluate.cpu.torch_fallback import _torch_error, build_torch
from cuset.evaluate.poison import CompiledCalls
from cuset.evaluate.taskcode import MESSAGE_CHARS
from cuset.evaluate.taskcode import cpu_mode as _cpu_mode

# CUDA libraries and header-only template libraries the emulator does not provide.
UNSUPPORTED_LIBRARIES = re.compile(
    r"#\s*include\s*[<\"](cublas\w*|cublasLt|cudnn\w*|cufft\w*|curand\w*|cusparse\w*|cusolver\w*|nccl|cutlass/[\w/.]+|cute/[\w/.]+|thrust/[\w/.]+|cub/[\w/.]+)"
)
# g++ errors that mean "the host code uses torch API the shim does not have".
MISSING_ATEN = re.compile(
    r"is not a member of '(?:torch|at|c10)(?:::\w+)*'"
    r"|'(?:class|struct) (?:at|c10|torch)::\w+' has no member named"
    r"|no match for '[^']+' \(operand types? (?:are|is) '(?:const )?at::Tensor"
    r"|no match for '[^']+' \(operand types are '[^']+' and '(?:const )?at::Tensor"
    r"|no matching function for call to '(?:at|torch|c10)::"
    r"|(?:torch|ATen|c10|pybind11)/[\w/]+\.h: No such file"
)
# The same messages, each pattern capturing what is missing (for the record's `missing`).
_MISSING_PIECE = (
    (re.compile(r"'(\w+)' is not a member of '((?:torch|at|c10)(?:::\w+)*)'"), "{1}::{0}"),
    (re.compile(r"'(?:class|struct) ((?:at|c10|torch)::\w+)' has no member named '(\w+)'"), "{0}::{1}"),
    (re.compile(r"no match for '([^']+)' \(operand types? (?:are|is) '([^']+)'(?: and '([^']+)')?"), "{0} ({1}{2})"),
    (re.compile(r"no matching function for call to '((?:at|torch|c10)::[\w:]+)\(([^']*)\)'"), "{0}({1})"),
    (re.compile(r"((?:torch|ATen|c10|pybind11)/[\w/]+\.h): No such file"), "header <{0}>"),
)


def missing_aten(message: str) -> str:
    """The torch API a shim build's errors say is missing, one name per distinct piece, in the
    order g++ met them ("at::Tensor::sum; operator/ (at::Tensor, double)"); "" if none.
    Names what a torch-path fallback needed, so the record says what the shim would have to add."""
    found: list[str] = []
    for line in _plain_quotes(message).splitlines():
        if "error" not in line:
            continue
        for pattern, form in _MISSING_PIECE:
            m = pattern.search(line)
            if m:
                groups = [g or "" for g in m.groups()]
                if form.startswith("{0} ({1}{2})"):
                    groups[2] = f", {groups[2]}" if groups[2] else ""
                piece = form.format(*groups)
                if piece not in found:
                    found.append(piece)
                break
    return "; ".join(found)


@dataclass
class BuildRecord:
    """One load_inline call: how it was built and what came of it."""

    name: str
    status: str = "compile_error"  # "built" | "compile_error" | "unsupported"
    path: str | None = None  # "shim" | "torch"
    compile_s: float = 0.0
    cached: bool = False
    message: str = ""
    shim_message: str = ""  # the shim build's errors when it fell back to torch
    missing: str = ""  # when it fell back: the torch API the shim lacks, named (missing_aten)


class BuildFailed(RuntimeError):
    """load_inline could not build the sources; carries the record."""

    def __init__(self, record: BuildRecord) -> None:
        super().__init__(record.message)
        self.record = record


# ---------------------------------------------------------------- one load_inline call


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_CUDA_SYNTAX = re.compile(r"<<<|\b__global__\b|\b__shared__\b")


def _unsupported(call: InlineCall) -> str:
    libs = sorted(set(UNSUPPORTED_LIBRARIES.findall("\n".join(call.cuda + call.cpp))))
    if libs:
        return "unsupported by the CPU backend: CUDA libraries the emulator does not provide (" + ", ".join(libs) + ")"
    return ""


def _cpp_problem(call: InlineCall) -> str:
    """What torch's build would reject before any compiler ran the CUDA: nothing to bind, or CUDA
    syntax in cpp_sources (load_inline compiles those with the host C++ compiler, not nvcc)."""
    if not call.functions:
        return "load_inline: no functions to bind (pass functions=[...] or write a PYBIND11_MODULE with m.def)"
    for k, part in enumerate(call.cpp):
        code = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), part)
        hit = _CUDA_SYNTAX.search(code)
        if hit:
            start = _line_in(call.origin_text, part)
            line = code.count("\n", 0, hit.start()) + (start or 1)
            where = f"{call.origin}:{line}" if start else f"cpp_sources[{k}]:{line}"
            return (f"{where}: error: CUDA syntax '{hit.group(0)}' in cpp_sources: load_inline compiles them with the host C++ "
                    "compiler; kernels and launches belong in cuda_sources")
    return ""


def build_inline(call: InlineCall, wrap: Callable[[Callable[..., Any]], Callable[..., Any]], torch_load_inline: Callable[..., Any] | None = None,
                 path: str = "auto") -> tuple[Any, BuildRecord]:
    """Build one load_inline call: on the shim, and with `path` "auto" on real torch when g++
    says the shim lacks the API ("shim"/"torch": that path only, e.g. to compare them).
    Returns (module or None, record); never raises for problems in the sources."""
    if path not in PATHS:
        raise ValueError(f"unknown build path {path!r}; use one of {list(PATHS)}.")
    record = BuildRecord(call.name)
    t0 = time.perf_counter()
    problem = _unsupported(call)
    if problem:
        record.status, record.message = "unsupported", problem
        return None, record
    problem = _cpp_problem(call)
    if problem:
        record.message = problem
        return None, record
    if path != "torch":
        shim = build_shim(call)
        record.cached = shim.cached
        record.compile_s = round(time.perf_counter() - t0, 3)
        if shim.status == "built":
            try:
                module = ShimModule(shim.binary, call.name, call.functions, wrap)
            except (OSError, AttributeError) as exc:
                record.message = f"loading the built extension failed: {exc}"
                return None, record
            record.status, record.path = "built", "shim"
            return module, record
        message = _plain_quotes(shim.message)
        if path == "shim" or shim.status != "compile_error" or not MISSING_ATEN.search(message):
            unsupported = shim.status in ("unsupported", "backend_error") or "cuset-kernelbench:" in message
            record.status = "unsupported" if unsupported else "compile_error"
            record.message = message[:MESSAGE_CHARS]
            return None, record
        record.shim_message = message[:MESSAGE_CHARS]
        record.missing = missing_aten(message)
    module, record.status, message = build_torch(call, wrap, torch_load_inline)
    record.compile_s = round(time.perf_counter() - t0, 3)
    record.path = "torch"
    record.message = message[:MESSAGE_CHARS]
    return module, record


class Session:
    """Stands in for load_inline while one solution runs; keeps every call's record."""

    def __init__(self, origin: str, origin_text: str, progress: Callable[[dict[str, Any]], None] | None = None, path: str = "auto") -> None:
        self.origin = origin
        self.path = path
        self.origin_text = origin_text
        self.records: list[BuildRecord] = []
        self.compiled = CompiledCalls()  # counts compiled calls; poisons their effects in the poisoned run
        self.progress = progress
        self.torch_load_inline: Callable[..., Any] | None = None  # torch's own, while patched

    @property
    def calls(self) -> int:
        return self.compiled.calls

    def load_inline(self, name: str, cpp_sources: Any, cuda_sources: Any = None, functions: Any = None,
                    extra_cflags: Any = None, extra_cuda_cflags: Any = None, extra_include_paths: Any = None,
                    **_ignored: Any) -> Any:
        call = InlineCall.from_args(name, cpp_sources, cuda_sources, functions, extra_cflags, extra_cuda_cflags,
                                    extra_include_paths, self.origin, self.origin_text)
        module, record = build_inline(call, self.compiled.wrap, self.torch_load_inline, self.path)
        self.records.append(record)
        if self.progress:
            self.progress({"stage": "build", "builds": [asdict(r) for r in self.records]})
        if module is None:
            raise BuildFailed(record)
        return module

    def load(self, name: str, *args: Any, **kwargs: Any) -> Any:
        record = BuildRecord(str(name), status="unsupported",
                             message="torch.utils.cpp_extension.load (source files) is not supported by the CPU backend; use load_inline")
        self.records.append(record)
        raise BuildFailed(record)


# ---------------------------------------------------------------- CUDA on the CPU


@contextlib.contextmanager
def cuda_on_cpu(session: Session):
    """While the solution and the models run: load_inline is the session's, CUDA devices mean
    the CPU, and torch.cuda's synchronisation and queries answer as for one idle GPU."""
    import torch
    import torch.utils.cpp_extension as cpp_ext

    saved_ext = (cpp_ext.load_inline, cpp_ext.load)
    cuda_patches = {"synchronize": lambda *a, **k: None, "empty_cache": lambda *a, **k: None,
                    "set_device": lambda *a, **k: None, "current_device": lambda: 0, "device_count": lambda: 1,
                    "is_available": lambda: True}
    saved_cuda = {k: getattr(torch.cuda, k) for k in cuda_patches}
    session.torch_load_inline = saved_ext[0]
    cpp_ext.load_inline, cpp_ext.load = session.load_inline, session.load
    for k, v in cuda_patches.items():
        setattr(torch.cuda, k, v)
    try:
        with _cpu_mode():
            yield
    finally:
        cpp_ext.load_inline, cpp_ext.load = saved_ext
        for k, v in saved_cuda.items():
            setattr(torch.cuda, k, v)


class CompiledModule:
    """A module torch's load_inline built, as the candidate sees it: every public function
    wrapped (counted, and poisoned during the poisoned run)."""

    def __init__(self, module: Any, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._module = module
        self._wrap = wrap
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if name.startswith("_") or not callable(value):
            return value
        if name not in self._cache:
            self._cache[name] = self._wrap(value)
        return self._cache[name]

    def __repr__(self) -> str:
        return f"<compiled {self._module!r}>"


@contextlib.contextmanager
def on_gpu(session: Session):
    """torch's own load_inline (nvcc, a real GPU), its calls recorded like the emulator's and its
    functions wrapped like theirs (CompiledModule)."""
    import torch.utils.cpp_extension as cpp_ext

    real = cpp_ext.load_inline

    def recorded(name: str, *args: Any, **kwargs: Any) -> Any:
        record = BuildRecord(str(name), path="cuda")
        t0 = time.perf_counter()
        try:
            module = real(name, *args, **kwargs)
        except Exception as exc:  # a bad candidate is a result
            record.message = _torch_error(exc)
            session.records.append(record)
            raise BuildFailed(record) from None
        finally:
            record.compile_s = round(time.perf_counter() - t0, 3)
        record.status = "built"
        session.records.append(record)
        return CompiledModule(module, session.compiled.wrap)

    cpp_ext.load_inline = recorded
    try:
        yield
    finally:
        cpp_ext.load_inline = real
