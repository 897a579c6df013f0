"""The shim build path of a load_inline call: the CUDA sources (translated like any emulator build)
and the C++ sources compiled by g++ against include/torch/extension.h, a small stand-in for
torch's C++ API, plus C-ABI wrappers generated here (include/torch/cuset_bind.h) and called
through ctypes (`ShimModule`). With a precompiled header this takes about a second; torch's own
headers take about twenty.

Tensors are passed zero copy; tensors the C++ code creates come from emulated device memory
filled with a garbage byte (0xCD), and returned tensors are copied into torch ones.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import numbers
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu import build as cpu_build
from cuset.evaluate.cpu.inline_call import INCLUDE_DIR, TORCH_CUDA_DEFINES, InlineCall, _plain_quotes, _workdir, _write

MAX_RESULTS = 64
# Shim builds: -O1 compiles the runtime header's launch machinery ~0.6 s faster than -O2 and
# runs KernelBench-sized inputs about as fast; undefined symbols fail the link, not the load.
SHIM_FLAGS = ["-O1", "-Wl,-z,defs"]


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
            raise RuntimeError("cuset_value in cuset_bind.h and _Value in cpu/shim.py differ; keep them in step.")
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
