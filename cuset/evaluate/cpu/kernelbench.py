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

A load_inline call is built one of two ways, and the record's `path` says which ran:

- "shim": the CUDA sources (translated like any emulator build) and the C++ sources compiled by
  g++ against include/torch/extension.h, a small stand-in for torch's C++ API, plus C-ABI
  wrappers generated here (include/torch/cuset_bind.h) and called through ctypes. With a
  precompiled header this takes about a second; torch's own headers take about twenty.
- "torch": when g++ says the host code uses ATen the shim lacks (torch::matmul, x + y, ...),
  torch's own load_inline builds the same sources as a CPU extension, the CUDA translated and
  compiled against the emulator's runtime header (include/torch/cuset_fallback/).

Tensors: inputs are torch CPU tensors standing for CUDA ones (`.cuda()`, `.to("cuda")` and
`device="cuda"` map to the CPU while the solution runs); they are passed zero copy and
registered as device memory for the call. Tensors the C++ code creates come from emulated
device memory filled with a garbage byte (0xCD), as fresh GPU memory is not zeros, so an output
the kernels do not fully write shows up as wrong; returned tensors are copied into torch ones.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import json
import math
import numbers
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu import build as cpu_build
from cuset.evaluate.cpu.translate import analyse, translate
from cuset.evaluate.inputs import flat_tensors, load_values, save_values
from cuset.evaluate.poison import CompiledCalls
from cuset.evaluate.reference import build_model, compute_reference, to_device

# Under their names from before they moved to cuset.evaluate.taskcode: cuset.evaluate.backends and
# the suite's validator import them from here.
from cuset.evaluate.taskcode import MESSAGE_CHARS
from cuset.evaluate.taskcode import cpu_mode as _cpu_mode
from cuset.evaluate.taskcode import error_text as _error_text
from cuset.evaluate.taskcode import exec_file as _exec_file
from cuset.evaluate.verdict import DATA_INDEPENDENT_FAULTS, apply_verdict, check_profile, judge, tolerance

INCLUDE_DIR = cpu_build.INCLUDE_DIR
FALLBACK_INCLUDE_DIR = INCLUDE_DIR / "torch" / "cuset_fallback"
# "ran": the candidate ran every trial and handed its tensors over; the caller makes the verdict.
STATUSES = ("compile_error", "runtime_error", "unsupported", "wrong_result", "reward_hack", "correct", "ran")
PATHS = ("auto", "shim", "torch")  # how load_inline builds: shim then real torch, or one of them
# torch's load_inline compiles CUDA with these (COMMON_NVCC_FLAGS): no implicit __half arithmetic.
TORCH_CUDA_DEFINES = ["__CUDA_NO_HALF_OPERATORS__", "__CUDA_NO_HALF_CONVERSIONS__", "__CUDA_NO_BFLOAT16_CONVERSIONS__", "__CUDA_NO_HALF2_OPERATORS__"]
MAX_RESULTS = 64
# Shim builds: -O1 compiles the runtime header's launch machinery ~0.6 s faster than -O2 and
# runs KernelBench-sized inputs about as fast; undefined symbols fail the link, not the load.
SHIM_FLAGS = ["-O1", "-Wl,-z,defs"]
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


class BuildFailed(RuntimeError):
    """load_inline could not build the sources; carries the record."""

    def __init__(self, record: BuildRecord) -> None:
        super().__init__(record.message)
        self.record = record


# ---------------------------------------------------------------- load_inline calls


def _as_list(sources: Any) -> list[str]:
    if sources is None:
        return []
    return [sources] if isinstance(sources, str) else [str(s) for s in sources]


_PYBIND_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]pybind11/[^>\"]*[>\"]", re.M)
_DEF = re.compile(r"\.\s*def\s*\(\s*\"(\w+)\"\s*,\s*(?:torch::wrap_pybind_function\s*\(\s*)?&?\s*([\w:]+)")


@dataclass
class InlineCall:
    """The arguments of one load_inline call that matter here, and the solution file they came
    from (`origin`, `origin_text`), so that compiler messages can name its lines."""

    name: str
    cpp: list[str]
    cuda: list[str]
    functions: dict[str, str]  # Python name -> C++ function
    defines: list[str] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    origin: str = "<solution>"
    origin_text: str = ""

    @classmethod
    def from_args(cls, name: str, cpp_sources: Any, cuda_sources: Any = None, functions: Any = None,
                  extra_cflags: Any = None, extra_cuda_cflags: Any = None, extra_include_paths: Any = None,
                  origin: str = "<solution>", origin_text: str = "") -> InlineCall:
        cpp, cuda = _as_list(cpp_sources), _as_list(cuda_sources)
        if isinstance(functions, str):
            functions = [functions]
        if functions is None:
            fns = {py: cxx for py, cxx in _DEF.findall("\n".join(cpp + cuda))}
        else:
            fns = {f: f for f in functions}
        flags = [str(f) for f in list(extra_cflags or []) + list(extra_cuda_cflags or [])]
        defines = [f[2:] for f in flags if f.startswith("-D") and len(f) > 2]
        return cls(str(name), cpp, cuda, fns, defines, [Path(p) for p in extra_include_paths or []], origin, origin_text)

    def digest(self) -> str:
        h = hashlib.sha256(json.dumps([self.name, self.cpp, self.cuda, self.functions, self.defines,
                                       [str(p) for p in self.include_dirs], self.origin]).encode())
        return h.hexdigest()[:20]

    def located(self, parts: list[str], label: str, shim: bool = False) -> str:
        """The parts joined as load_inline joins them, each after a #line naming its place in
        the solution file, so compiler messages point there. With `shim`, pybind11's headers are
        commented out (the shim's torch/extension.h has the stand-in; only real torch has them)."""
        out = []
        for k, part in enumerate(parts):
            line = _line_in(self.origin_text, part)
            where = (line, self.origin) if line else (1, f"{label}[{k}]")
            if shim:
                part = _PYBIND_INCLUDE.sub(r"// \g<0> (the torch shim stands in)", part)
            out.append(f'#line {where[0]} "{_c_string(where[1])}"\n{part}')
        return "\n".join(out)


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _line_in(text: str, snippet: str) -> int | None:
    """1-based line of `snippet` in `text`: the source strings of a solution are usually
    triple-quoted literals, found verbatim; otherwise by their first three non-blank lines."""
    if not text or not snippet.strip():
        return None
    at = text.find(snippet)
    if at >= 0:
        return text.count("\n", 0, at) + 1
    lines = snippet.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return None
    probe = "\n".join(lines[first : first + 3])
    at = text.find(probe)
    return text.count("\n", 0, at) + 1 - first if at >= 0 else None


def _workdir(kind: str, digest: str) -> Path:
    d = cpu_build.cache_dir().parent / f"kernelbench-{kind}" / digest
    d.mkdir(parents=True, exist_ok=True)
    return d


def _write(path: Path, text: str) -> Path:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        part = path.with_suffix(path.suffix + f".part{os.getpid()}")
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    return path


def _plain_quotes(text: str) -> str:
    return text.replace("\u2018", "'").replace("\u2019", "'")


# ---------------------------------------------------------------- shim path


def _shim_flags(defines: list[str]) -> list[str]:
    return [f"-D{d}" for d in ["CUSET_SHARED_LIBRARY", *TORCH_CUDA_DEFINES, *defines]]


def _pch_dir(defines: list[str]) -> Path | None:
    """A folder holding `cuset_cuda.h.gch`: the runtime header and the torch shim precompiled with
    the flags of a shared build, found by g++ ahead of the plain header when the folder comes
    first on the include path. Looked up in the build cache and the read-only caches
    ($CUSET_BUILD_CACHE_RO), else built (~5 s). None if it cannot be built (builds then parse
    the headers, ~1 s more)."""
    try:
        gxx, cuda_inc = cpu_build.compiler(), cpu_build.cuda_include_dir()
    except cpu_build.BackendError:
        return None
    flags = cpu_build.BASE_FLAGS + cpu_build.OPT_FLAGS + ["-fPIC"] + SHIM_FLAGS + _shim_flags(defines)
    flags = [f for f in flags if not f.startswith("-Wl,")]  # linker flags would make g++ link the header
    key = hashlib.sha256(" ".join(flags + [gxx, str(INCLUDE_DIR), cpu_build._header_hash()]).encode()).hexdigest()[:20]
    name = f"kernelbench-pch-{key}"  # inside the build cache, so a sandbox's harvest shares it
    read_only = [Path(p) for p in os.environ.get("CUSET_BUILD_CACHE_RO", "").split(os.pathsep) if p]
    for folder in [cpu_build.cache_dir(), *read_only]:
        if (folder / name / "cuset_cuda.h.gch").exists():
            return folder / name
    d = cpu_build.cache_dir() / name
    d.mkdir(parents=True, exist_ok=True)
    gch = d / "cuset_cuda.h.gch"
    wrapper = _write(d / "cuset_cuda.h", f'#include "{INCLUDE_DIR / "cuset_cuda.h"}"\n#include <cuda.h>\n#include <torch/extension.h>\n#include <torch/cuset_bind.h>\n')
    part = d / f"cuset_cuda.h.gch.part{os.getpid()}"
    cmd = [gxx, *flags, "-I", str(INCLUDE_DIR), "-I", str(cuda_inc), "-x", "c++-header", str(wrapper), "-o", str(part)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=cpu_build.COMPILE_TIMEOUT_S)
    if proc.returncode != 0:
        part.unlink(missing_ok=True)
        return None
    os.replace(part, gch)
    return d


def _bindings(functions: dict[str, str]) -> str:
    lines = ['#line 1 "<cuset bindings>"', "#include <torch/cuset_bind.h>"]
    for py, cxx in functions.items():
        lines.append(f'extern "C" int cuset_call_{py}(const cuset_value* a, int n, cuset_value* o, int m, int* s) '
                     f'{{ return cuset_bind::call(&{cxx}, "{py}", a, n, o, m, s); }}')
    lines.append("CUSET_BIND_RUNTIME()")
    return "\n".join(lines) + "\n"


_DEFINED = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)
# Merged sources clash where torch's separate .cpp and .cu files would not.
_CLASH = re.compile(r"redefinition of|conflicting declaration|previous definition|was previously declared|redeclared as different")


def build_shim(call: InlineCall) -> cpu_build.Build:
    """Compile the call's sources against the torch shim into a shared library.

    load_inline compiles the C++ and the CUDA sources as two units; here the CUDA file is
    included into the C++ one (its macros #undef'd after it), which saves a second pass over
    the runtime header, about 0.7 s. If that makes names clash, the two are built apart."""
    d = _workdir("src", call.digest())
    cuda = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n" + call.located(call.cuda, "cuda_sources", shim=True) + "\n"
    cpp = "#include <torch/extension.h>\n" + call.located(call.cpp, "cpp_sources", shim=True) + "\n" + _bindings(call.functions)
    pch = _pch_dir(call.defines)
    extra = (["-I", str(pch)] if pch else []) + SHIM_FLAGS + _shim_flags(call.defines)
    if not call.cuda:
        return cpu_build.build_program([_write(d / "main.cpp", cpp)], include_dirs=call.include_dirs, extra_flags=extra, shared=True)
    _write(d / "cuda.cuh", cuda)
    undefs = "".join(f"#undef {m}\n" for m in dict.fromkeys(_DEFINED.findall("\n".join(call.cuda))))
    merged = _write(d / "merged.cpp", f'#include "cuda.cuh"\n{undefs}{cpp}')
    built = cpu_build.build_program([merged], include_dirs=call.include_dirs, extra_flags=extra, shared=True)
    if built.status == "compile_error" and _CLASH.search(_plain_quotes(built.message)):
        sources = [_write(d / "cuda.cu", cuda), _write(d / "main.cpp", cpp)]
        built = cpu_build.build_program(sources, include_dirs=call.include_dirs, extra_flags=extra, shared=True)
    return built


class _Value(ctypes.Structure):
    """Mirror of `cuset_value` in include/torch/cuset_bind.h."""

    _fields_ = [
        ("kind", ctypes.c_int32), ("dtype", ctypes.c_int32), ("i", ctypes.c_int64), ("d", ctypes.c_double),
        ("data", ctypes.c_void_p), ("sizes", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("storage", ctypes.c_void_p), ("storage_bytes", ctypes.c_int64), ("device", ctypes.c_int32), ("pad", ctypes.c_int32),
    ]


K_NONE, K_TENSOR, K_INT, K_FLOAT, K_BOOL, K_INTS, K_FLOATS, K_TENSORS, K_STR, K_DTYPE = range(10)
SHAPE_SINGLE, SHAPE_TUPLE, SHAPE_LIST, SHAPE_NOTHING = range(4)
_EXCEPTIONS: dict[int, type[Exception]] = {1: RuntimeError, 2: TypeError, 3: ValueError, 4: IndexError, 5: NotImplementedError}


def _dtype_codes() -> dict[Any, int]:
    import torch

    return {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
            torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}


class ShimModule:
    """What load_inline returns on the shim path: one callable attribute per bound function."""

    def __init__(self, library: Path, name: str, functions: dict[str, str], wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._lib = ctypes.CDLL(str(library))
        self._name = name
        if self._lib.cuset_value_size() != ctypes.sizeof(_Value):
            raise RuntimeError("cuset_value in cuset_bind.h and _Value in kernelbench.py differ; keep them in step.")
        self._lib.cuset_error_text.restype = ctypes.c_char_p
        self._lib.cuset_release.argtypes = [ctypes.c_void_p]
        self._codes = _dtype_codes()
        self._dtypes = {v: k for k, v in self._codes.items()}
        for py in functions:
            fn = getattr(self._lib, f"cuset_call_{py}")
            fn.argtypes = [ctypes.POINTER(_Value), ctypes.c_int, ctypes.POINTER(_Value), ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
            fn.restype = ctypes.c_int
            setattr(self, py, wrap(self._bound(py, fn)))

    def __repr__(self) -> str:
        return f"<cuset shim extension {self._name!r}>"

    def _bound(self, py: str, fn: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                raise TypeError(f"{py}(): incompatible function arguments (load_inline bindings take positional arguments only)")
            keep: list[Any] = []
            values = (_Value * max(1, len(args)))()
            for k, a in enumerate(args):
                self._fill(values[k], a, keep, k)
            out = (_Value * MAX_RESULTS)()
            shape = ctypes.c_int(0)
            n = fn(values, len(args), out, MAX_RESULTS, ctypes.byref(shape))
            if n < 0:
                kind = self._lib.cuset_error_kind()
                raise _EXCEPTIONS.get(kind, RuntimeError)(self._lib.cuset_error_text().decode(errors="replace"))
            try:
                items = [self._take(out[k]) for k in range(n)]
            finally:
                for k in range(n):
                    if out[k].kind == K_TENSOR:
                        self._lib.cuset_release(out[k].storage)
            if shape.value == SHAPE_NOTHING:
                return None
            if shape.value == SHAPE_TUPLE:
                return tuple(items)
            if shape.value == SHAPE_LIST:
                return items
            return items[0]

        call.__name__ = py
        return call

    def _fill(self, v: _Value, a: Any, keep: list[Any], index: int) -> None:
        import torch

        if a is None:
            v.kind = K_NONE
        elif isinstance(a, torch.Tensor):
            if a.device.type != "cpu":
                raise TypeError(f"argument {index + 1}: the CPU backend takes CPU tensors, got one on {a.device}")
            if a.dtype not in self._codes:
                raise TypeError(f"argument {index + 1}: dtype {a.dtype} is not supported by the CPU backend's torch shim")
            sizes = (ctypes.c_int64 * max(1, a.dim()))(*a.shape)
            strides = (ctypes.c_int64 * max(1, a.dim()))(*a.stride())
            keep += [sizes, strides, a]
            storage = a.untyped_storage()
            v.kind, v.dtype, v.i, v.device = K_TENSOR, self._codes[a.dtype], a.dim(), 1
            v.data, v.sizes, v.strides = a.data_ptr(), sizes, strides
            v.storage, v.storage_bytes = storage.data_ptr(), storage.nbytes()
        elif isinstance(a, bool):
            v.kind, v.i = K_BOOL, int(a)
        elif isinstance(a, numbers.Integral):
            v.kind, v.i = K_INT, int(a)
        elif isinstance(a, numbers.Real):
            v.kind, v.d = K_FLOAT, float(a)
        elif isinstance(a, str):
            raw = a.encode()
            buf = ctypes.create_string_buffer(raw)
            keep.append(buf)
            v.kind, v.i, v.data = K_STR, len(raw), ctypes.addressof(buf)
        elif isinstance(a, torch.dtype):
            if a not in self._codes:
                raise TypeError(f"argument {index + 1}: dtype {a} is not supported by the CPU backend's torch shim")
            v.kind, v.dtype = K_DTYPE, self._codes[a]
        elif isinstance(a, (list, tuple)):
            if all(isinstance(x, torch.Tensor) for x in a) and a:
                items = (_Value * len(a))()
                for k, x in enumerate(a):
                    self._fill(items[k], x, keep, index)
                keep.append(items)
                v.kind, v.i, v.data = K_TENSORS, len(a), ctypes.addressof(items)
            elif all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in a):
                arr = (ctypes.c_int64 * max(1, len(a)))(*[int(x) for x in a])
                keep.append(arr)
                v.kind, v.i, v.data = K_INTS, len(a), ctypes.addressof(arr)
            elif all(isinstance(x, numbers.Real) for x in a):
                arr = (ctypes.c_double * max(1, len(a)))(*[float(x) for x in a])
                keep.append(arr)
                v.kind, v.i, v.data = K_FLOATS, len(a), ctypes.addressof(arr)
            else:
                raise TypeError(f"argument {index + 1}: a list the CPU backend's bindings cannot pass ({[type(x).__name__ for x in a][:4]})")
        else:
            raise TypeError(f"argument {index + 1}: type {type(a).__name__} is not supported by the CPU backend's bindings")

    def _take(self, v: _Value) -> Any:
        import torch

        if v.kind == K_NONE:
            return None
        if v.kind == K_BOOL:
            return bool(v.i)
        if v.kind == K_INT:
            return int(v.i)
        if v.kind == K_FLOAT:
            return float(v.d)
        dtype = self._dtypes[v.dtype]
        sizes = [v.sizes[k] for k in range(v.i)]
        strides = [v.strides[k] for k in range(v.i)]
        if math.prod(sizes) == 0:
            return torch.empty(sizes, dtype=dtype)
        span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
        itemsize = torch.empty((), dtype=dtype).element_size()
        raw = (ctypes.c_char * (span * itemsize)).from_address(v.data)
        flat = torch.frombuffer(raw, dtype=torch.uint8).view(dtype)
        return flat.as_strided(sizes, strides).clone()


# ---------------------------------------------------------------- torch path (fallback)


class TorchModule:
    """What load_inline returns on the torch path: the real extension's functions, called with
    the caller's tensors registered as device memory and the garbage-filling allocator on."""

    def __init__(self, ext: Any, functions: dict[str, str], wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._ext = ext
        for py in functions:
            setattr(self, py, wrap(self._bound(getattr(ext, py))))

    def _bound(self, fn: Any) -> Callable[..., Any]:
        import torch

        ext = self._ext

        def tensors(x: Any) -> list[Any]:
            if isinstance(x, torch.Tensor):
                return [x]
            if isinstance(x, (list, tuple)):
                return [t for item in x for t in tensors(item)]
            return []

        def call(*args: Any, **kwargs: Any) -> Any:
            bases = []
            for t in tensors(list(args) + list(kwargs.values())):
                st = t.untyped_storage()
                if st.data_ptr():
                    ext._cuset_register(st.data_ptr(), st.nbytes())
                    bases.append(st.data_ptr())
            ext._cuset_enter()
            try:
                return fn(*args, **kwargs)
            finally:
                ext._cuset_exit()
                for b in bases:
                    ext._cuset_unregister(b)

        return call


def _torch_error(exc: BaseException) -> str:
    """The compiler's error lines from torch's build exception (all of it when there are none)."""
    text = _plain_quotes(str(exc))
    errors = [ln for ln in text.splitlines() if re.search(r"\berror\b|undefined symbol|undefined reference", ln)]
    return "\n".join(errors[:20]) if errors else text[-3000:]


def build_torch(call: InlineCall, wrap: Callable[[Callable[..., Any]], Callable[..., Any]], load_inline: Callable[..., Any] | None = None) -> tuple[TorchModule | None, str, str]:
    """Build the call's sources with torch's load_inline (`load_inline`: the real one, when
    torch's is patched) as a CPU extension. Returns (module or None, status, message)."""
    if load_inline is None:
        import torch.utils.cpp_extension as cpp_ext

        load_inline = cpp_ext.load_inline
    program = analyse(call.cuda)
    parts = []
    for k, src in enumerate(call.cuda):
        line = _line_in(call.origin_text, src)
        t = translate(src, call.origin if line else f"cuda_sources[{k}]", first_line=line or 1, program=program)
        if t.unsupported:
            return None, "unsupported", "unsupported by the CPU backend: " + "; ".join(str(u) for u in t.unsupported)
        parts.append(t.text)
    digest = call.digest()
    functions = dict(call.functions)
    for hook in ("_cuset_enter", "_cuset_exit", "_cuset_register", "_cuset_unregister"):
        functions[hook] = hook
    cpp = [f'#include "{FALLBACK_INCLUDE_DIR / "cuset_fallback.h"}"', *parts, call.located(call.cpp, "cpp_sources")]
    build_dir = _workdir("torch", digest)
    flags = ["-O2", "-std=c++20", "-include", str(INCLUDE_DIR / "cuset_cuda.h"), *_shim_flags(call.defines)]
    try:
        ext = load_inline(
            name=f"cuset_{digest}", cpp_sources=cpp, functions=list(functions), extra_cflags=flags,
            extra_include_paths=[str(FALLBACK_INCLUDE_DIR), str(cpu_build.cuda_include_dir()), *map(str, call.include_dirs)],
            build_directory=str(build_dir), with_cuda=False, verbose=False,
        )
    except Exception as exc:  # a bad candidate is a result, not a crash
        return None, "compile_error", _torch_error(exc)
    return TorchModule(ext, call.functions, wrap), "built", ""


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
