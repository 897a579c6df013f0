"""Compile every corpus sample's CUDA with nvcc; needs nvcc, not a GPU.

    python -m cuset.data.corpus.verify                 # kernels only, one .cu per family (seconds)
    python -m cuset.data.corpus.verify --full          # whole sources with torch headers (minutes)
    python -m cuset.data.corpus.verify --family scan --keep /tmp/tus

Both modes read the shipped `corpus.jsonl` (not the templates), pull `cuda_source` and
`cpp_source` out of each response with `ast`, and put each sample's code in its own C++
namespace so a whole family compiles as one translation unit (compiling 200 extensions one by
one would take hours on a laptop; the torch headers dominate each compile). `#include` lines
are hoisted to the top and each sample's macros are `#undef`-ed after its namespace.

- default: only the device part of each source (everything before the first host wrapper that
  returns `torch::Tensor`), without torch headers: checks every kernel in a few seconds.
- `--full`: the complete sources with the torch include paths load_inline uses, plus one g++
  syntax check of the pybind11 `main.cpp` that load_inline would generate for every sample.
  The CPU build of torch lacks the generated `c10/cuda/impl/cuda_cmake_macros.h`; a one-line
  stand-in is written to a scratch include folder when it is missing.

Exit status 0 when every unit compiles. Device-side warnings in the corpus's own code are listed.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cuset.data.corpus.build import CORPUS_PATH

_HOST_START = re.compile(r"^(?:torch::Tensor|std::vector<torch::Tensor>|std::tuple<)", re.MULTILINE)
_INCLUDE = re.compile(r"^\s*#include\s+\S+.*$", re.MULTILINE)
_DEFINE = re.compile(r"^\s*#define\s+(\w+)", re.MULTILINE)
_TORCH_HEADER = re.compile(r"#include\s+<(?:torch|ATen|c10)/")
# load_inline's own nvcc flags (torch/utils/cpp_extension.py), so --full sees what it sees.
_TORCH_NVCC_FLAGS = (
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
    "-DTORCH_API_INCLUDE_EXTENSION_H",
    "-DTORCH_EXTENSION_NAME=cuset_verify",
    "-std=c++20",
)


@dataclass
class UnitResult:
    """One compiled translation unit: which samples it held and what nvcc/g++ said."""

    name: str
    sample_ids: list[str]
    ok: bool
    seconds: float
    warnings: list[str] = field(default_factory=list)
    errors: str = ""


def extract_sources(response: str) -> tuple[str, str]:
    """`(cuda_source, cpp_source)` string constants assigned at the top level of a response."""
    found: dict[str, str] = {}
    for node in ast.parse(response).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found[node.targets[0].id] = node.value.value
    missing = [k for k in ("cuda_source", "cpp_source") if k not in found]
    if missing:
        raise ValueError(f"response has no top-level string assignment to {missing}")
    return found["cuda_source"], found["cpp_source"]


def device_part(cuda: str) -> str:
    """The source up to the first host wrapper (the kernels and their device helpers)."""
    match = _HOST_START.search(cuda)
    return cuda if match is None else cuda[: match.start()]


def _namespace(sample_id: str) -> str:
    return "s_" + re.sub(r"\W", "_", sample_id)


def namespaced_unit(parts: list[tuple[str, str]], drop_torch: bool) -> str:
    """One translation unit from (sample_id, source) pairs: hoisted includes, one namespace each."""
    includes: list[str] = []
    blocks: list[str] = []
    for sample_id, source in parts:
        for inc in _INCLUDE.findall(source):
            inc = inc.strip()
            if drop_torch and _TORCH_HEADER.match(inc):
                continue
            if inc not in includes:
                includes.append(inc)
        body = _INCLUDE.sub("", source).strip("\n")
        undefs = "".join(f"#undef {m}\n" for m in _DEFINE.findall(body))
        blocks.append(f"// ---- {sample_id}\nnamespace {_namespace(sample_id)} {{\n{body}\n}}  // namespace\n{undefs}")
    return "\n".join(includes) + "\n\n" + "\n".join(blocks)


def pybind_main(parts: list[tuple[str, str, list[str]]]) -> str:
    """The `main.cpp` load_inline would generate, for many samples at once (namespaced)."""
    blocks = [f"namespace {_namespace(i)} {{\n{cpp.strip()}\n}}" for i, cpp, _ in parts]
    defs = [
        f'    m.def("{_namespace(i)}__{fn}", torch::wrap_pybind_function({_namespace(i)}::{fn}), "{fn}");'
        for i, _, fns in parts
        for fn in fns
    ]
    return (
        "#include <torch/extension.h>\n\n" + "\n".join(blocks)
        + "\n\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + "\n".join(defs) + "\n}\n"
    )


def _torch_includes(scratch: Path) -> list[str]:
    from torch.utils.cpp_extension import include_paths

    paths = list(include_paths())
    flags = [f"-I{p}" for p in paths] + [f"-I{sysconfig.get_paths()['include']}"]
    macros = Path(paths[0]) / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h"
    if not macros.exists():
        shim = scratch / "shim" / "c10" / "cuda" / "impl"
        shim.mkdir(parents=True, exist_ok=True)
        (shim / "cuda_cmake_macros.h").write_text("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        flags.insert(0, f"-I{scratch / 'shim'}")
    return flags


def _own_warnings(stderr: str, path: Path) -> list[str]:
    return [line for line in stderr.splitlines() if str(path) in line and "warning" in line.lower()]


def _run(name: str, ids: list[str], cmd: list[str], path: Path) -> UnitResult:
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    stderr = proc.stdout + proc.stderr
    errors = "" if proc.returncode == 0 else "\n".join(stderr.splitlines()[-60:])
    return UnitResult(name, ids, proc.returncode == 0, seconds, _own_warnings(stderr, path), errors)


def verify(
    corpus: Path = CORPUS_PATH,
    full: bool = False,
    families: list[str] | None = None,
    arch: str = "sm_80",
    jobs: int = 2,
    keep: Path | None = None,
) -> list[UnitResult]:
    """Compile the corpus family by family; returns one result per translation unit."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found on PATH. Install the CUDA toolkit or `pip install nvidia-cuda-nvcc`.")
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_family: dict[str, list[dict]] = defaultdict(list)
    for rec in records:
        if families is None or rec.get("family") in families:
            by_family[rec.get("family", "")].append(rec)
    scratch = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="cuset-verify-"))
    scratch.mkdir(parents=True, exist_ok=True)
    extra = _torch_includes(scratch) + list(_TORCH_NVCC_FLAGS) if full else ["-std=c++17"]
    jobs_list: list[tuple[str, list[str], list[str], Path]] = []
    for family, recs in sorted(by_family.items()):
        parts = []
        for rec in recs:
            cuda, _ = extract_sources(rec["response"])
            parts.append((rec["id"], cuda if full else device_part(cuda)))
        path = scratch / f"{family}{'_full' if full else ''}.cu"
        path.write_text(namespaced_unit(parts, drop_torch=not full))
        cmd = [nvcc, "-c", f"-arch={arch}", "-O2", *extra, str(path), "-o", str(path.with_suffix(".o"))]
        jobs_list.append((family, [r["id"] for r in recs], cmd, path))
    if full:
        parts3 = []
        for recs in by_family.values():
            for rec in recs:
                _, cpp = extract_sources(rec["response"])
                parts3.append((rec["id"], cpp, rec.get("meta", {}).get("functions", [])))
        path = scratch / "main.cpp"
        path.write_text(pybind_main(parts3))
        cxx = shutil.which("g++") or "c++"
        cmd = [cxx, "-fsyntax-only", *[f for f in extra if f.startswith(("-I", "-D", "-std"))], str(path)]
        jobs_list.append(("pybind-main", [p[0] for p in parts3], cmd, path))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda j: _run(*j), jobs_list))
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuset.data.corpus.verify", description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="compile whole sources with torch headers (slow)")
    parser.add_argument("--family", action="append", help="only this family (repeatable)")
    parser.add_argument("--arch", default="sm_80", help="nvcc -arch value (default sm_80)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compiler processes")
    parser.add_argument("--keep", type=Path, help="write the translation units here and keep them")
    parser.add_argument("--corpus", type=Path, default=CORPUS_PATH, help="the JSONL to verify")
    args = parser.parse_args(argv)
    start = time.monotonic()
    results = verify(args.corpus, args.full, args.family, args.arch, args.jobs, args.keep)
    for r in results:
        status = "ok" if r.ok else "FAILED"
        print(f"{r.name:16s} {len(r.sample_ids):4d} samples  {status:6s} {r.seconds:6.1f}s  {len(r.warnings)} warnings")
        for w in r.warnings:
            print(f"    {w}")
        if r.errors:
            print(r.errors)
    n = sum(len(r.sample_ids) for r in results if r.name != "pybind-main")
    failed = [r.name for r in results if not r.ok]
    print(f"{'full' if args.full else 'kernels-only'}: {n} samples in {len(results)} units, "
          f"{len(failed)} failed {failed if failed else ''}, {time.monotonic() - start:.0f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
