"""One `torch.utils.cpp_extension.load_inline` call as the CPU backend sees it (`InlineCall`: its
sources, bound functions, defines and the solution file they came from), and what every build
path shares: the include folders, the build folders of the cache, `#line`-located sources.

The two build paths are cpu/shim.py (the small stand-in for torch's C++ API) and
cpu/torch_fallback.py (torch's own load_inline as a CPU extension); cpu/load_inline.py picks
between them for one call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuset.evaluate.cpu import build as cpu_build

INCLUDE_DIR = cpu_build.INCLUDE_DIR
FALLBACK_INCLUDE_DIR = INCLUDE_DIR / "torch" / "cuset_fallback"
PATHS = ("auto", "shim", "torch")  # how load_inline builds: shim then real torch, or one of them
# torch's load_inline compiles CUDA with these (COMMON_NVCC_FLAGS): no implicit __half arithmetic.
TORCH_CUDA_DEFINES = ["__CUDA_NO_HALF_OPERATORS__", "__CUDA_NO_HALF_CONVERSIONS__", "__CUDA_NO_BFLOAT16_CONVERSIONS__", "__CUDA_NO_HALF2_OPERATORS__"]


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
