"""Build a CUDA program for the CPU emulator: translate every CUDA file, then one g++ call.

    build = build_program([Path("saxpy.cu")], include_dirs=[...], defines=["N=4"])
    build.status        # "built" | "compile_error" | "unsupported" | "backend_error"
    build.binary        # the executable (in the build cache) when built

Sources and the local headers they include (quoted includes, or angle includes found in an
`-I` folder) are translated into a mirror of their absolute paths under a scratch folder, so
relative includes resolve exactly as they would for nvcc; each translated file starts with a
`#line` directive naming the original, so g++'s messages point at the user's files and lines.
Binaries are cached by a hash of the translated sources, the flags and the runtime headers.

g++ needs CUDA's host headers (cuda_runtime.h, cuda_fp16.h, ...): from $CUDA_HOME, from
/usr/local/cuda, or from the `nvidia-cuda-runtime` wheel; libcudart is never linked.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuset.evaluate.cpu.translate import Unsupported, analyse, translate

INCLUDE_DIR = Path(__file__).parent / "include"
CUDA_SUFFIXES = {".cu", ".cuh"}
HEADER_SUFFIXES = {".h", ".hpp", ".cuh", ".inl"}
BASE_FLAGS = ["-std=c++20", "-pthread", "-fno-strict-aliasing", "-w"]
OPT_FLAGS = ["-O2"]
SANITIZE_FLAGS = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-DCUSET_SANITIZE"]
COMPILE_TIMEOUT_S = 300

# Exit codes of `cuset run-cuda` when the program itself did not run.
EXIT_DEVICE_FAULT = 101  # set by the runtime header: illegal address, divergence, deadlock, ...
EXIT_COMPILE_ERROR = 120
EXIT_UNSUPPORTED = 121
EXIT_BACKEND = 125


class BackendError(RuntimeError):
    """The emulator itself cannot work here (no g++, no CUDA headers)."""


def cuda_include_dir() -> Path:
    """Where CUDA's host headers are; raises BackendError with what was tried."""
    tried = []
    for base in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        inc = Path(base) / "include"
        tried.append(str(inc))
        if (inc / "cuda_runtime.h").exists():
            return inc
    try:
        import nvidia.cuda_runtime  # type: ignore[import-not-found]

        inc = Path(next(iter(nvidia.cuda_runtime.__path__))) / "include"
        tried.append(str(inc))
        if (inc / "cuda_runtime.h").exists():
            return inc
    except ImportError:
        tried.append("the nvidia-cuda-runtime wheel (not installed)")
    raise BackendError("CUDA host headers (cuda_runtime.h) not found; tried " + ", ".join(tried) + ". Set CUDA_HOME or `pip install nvidia-cuda-runtime`.")


def compiler() -> str:
    gxx = os.environ.get("CUSET_CXX") or shutil.which("g++")
    if not gxx:
        raise BackendError("g++ not found: install it (Debian: apt-get install g++) or set CUSET_CXX.")
    return gxx


def cache_dir() -> Path:
    """Where builds are cached: $CUSET_BUILD_CACHE, else the workspace's cache/cpu-build."""
    if os.environ.get("CUSET_BUILD_CACHE"):
        return Path(os.environ["CUSET_BUILD_CACHE"])
    from cuset.workspace import workspace_dir

    return workspace_dir() / "cache" / "cpu-build"


def _cached(digest: str, name: str) -> Path | None:
    """A cached build: in cache_dir(), or in a read-only cache named by $CUSET_BUILD_CACHE_RO
    (a sandboxed candidate reads the shared cache but writes only into its own folder)."""
    dirs = [cache_dir()] + [Path(p) for p in os.environ.get("CUSET_BUILD_CACHE_RO", "").split(os.pathsep) if p]
    for d in dirs:
        if (d / digest / name).exists():
            return d / digest / name
    return None


@dataclass
class Build:
    status: str
    binary: Path | None = None
    message: str = ""
    unsupported: list[Unsupported] = field(default_factory=list)
    compile_s: float = 0.0
    cached: bool = False
    kernels: dict[str, bool] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "built"


_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def _collect(sources: list[Path], include_dirs: list[Path]) -> list[Path]:
    """The sources plus every local header they include, transitively."""
    seen: dict[Path, None] = {}
    todo = [p.resolve() for p in sources]
    while todo:
        p = todo.pop(0)
        if p in seen:
            continue
        seen[p] = None
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for kind, name in _INCLUDE.findall(text):
            cands = ([p.parent / name] if kind == '"' else []) + [d / name for d in include_dirs]
            for c in cands:
                if c.is_file() and c.suffix in HEADER_SUFFIXES | CUDA_SUFFIXES:
                    todo.append(c.resolve())
                    break
    return list(seen)


def _header_hash() -> str:
    """Every file under include/, by its path: headers without a suffix (`cuda/barrier`) count
    too, and a file moved between folders changes the hash."""
    h = hashlib.sha256()
    for f in sorted(p for p in INCLUDE_DIR.rglob("*") if p.is_file()):
        h.update(f.relative_to(INCLUDE_DIR).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def translate_tree(files: list[Path], root: Path) -> tuple[dict[Path, Path], list[Unsupported], dict[str, bool]]:
    """Translate `files` into mirrors under `root`; returns original -> mirror paths."""
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in files}
    program = analyse(list(texts.values()))
    mirrors, unsupported, kernels = {}, [], {}
    for f, text in texts.items():
        t = translate(text, str(f), program=program)
        for u in t.unsupported:
            u.text = f"{f.name}:{u.line}: {u.text.strip()[:80]}"
        unsupported += t.unsupported
        kernels.update(t.kernels)
        m = root / str(f).lstrip("/")
        m.parent.mkdir(parents=True, exist_ok=True)
        m.write_text(t.text, encoding="utf-8")
        mirrors[f] = m
    return mirrors, unsupported, kernels


def build_program(
    sources: list[Path],
    include_dirs: list[Path] = (),
    defines: list[str] = (),
    sanitize: bool = False,
    extra_flags: list[str] = (),
    output: Path | None = None,
    shared: bool = False,
) -> Build:
    """Translate and compile `sources` (.cu/.cuh/.cpp/.cc) into one executable (or, with
    `shared`, a shared library). Never raises for problems in the sources: they come back as
    the Build's status and message."""
    for s in sources:
        if not Path(s).is_file():
            return Build("backend_error", message=f"{s}: no such file")
    include_dirs = [Path(d).resolve() for d in include_dirs]
    try:
        gxx, cuda_inc = compiler(), cuda_include_dir()
    except BackendError as e:
        return Build("backend_error", message=str(e))
    files = _collect([Path(s) for s in sources], include_dirs)
    with tempfile.TemporaryDirectory(prefix="cuset-build-") as tmp:
        root = Path(tmp) / "src"
        mirrors, unsupported, kernels = translate_tree(files, root)
        if unsupported:
            msg = "unsupported by the CPU backend: " + "; ".join(f"{u.feature} at {u.text}" for u in unsupported)
            return Build("unsupported", message=msg, unsupported=unsupported, kernels=kernels)
        flags = BASE_FLAGS + (SANITIZE_FLAGS if sanitize else OPT_FLAGS) + (["-shared", "-fPIC"] if shared else []) + list(extra_flags)
        flags += [f"-D{d}" for d in defines]
        incs = []
        for d in include_dirs:
            incs += ["-I", str(root / str(d).lstrip("/")), "-I", str(d)]
        incs += ["-I", str(INCLUDE_DIR), "-I", str(cuda_inc)]
        # The key ignores where the sources lie (a sandboxed check builds in a fresh scratch
        # folder each time): paths relative to their common folder, that folder's name
        # blanked in the translated text, folders in flags by their last part.
        base = Path(os.path.commonpath([str(f.parent) for f in files]))
        key = hashlib.sha256()
        for f in files:
            key.update(str(f.relative_to(base)).encode())
            key.update(mirrors[f].read_bytes().replace(str(base).encode(), b"<src>"))
        key.update(" ".join([Path(x).name if x.startswith("/") else x for x in flags] + [gxx, _header_hash()]).encode())
        digest = key.hexdigest()[:24]
        name = "lib.so" if shared else "prog"
        hit = _cached(digest, name)
        if hit is not None:
            return _deliver(Build("built", binary=hit, cached=True, kernels=kernels), output)
        cached = cache_dir() / digest / name
        units = [mirrors[Path(s).resolve()] for s in sources if Path(s).suffix not in HEADER_SUFFIXES]
        out = Path(tmp) / name
        cmd = [gxx, *flags, *incs, "-include", "cuset_cuda.h", "-x", "c++", *map(str, units), "-x", "none", "-o", str(out)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Build("compile_error", message=f"g++ did not finish within {COMPILE_TIMEOUT_S} s", kernels=kernels)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            return Build("compile_error", message=_clean(proc.stderr, root), compile_s=dt, kernels=kernels)
        cached.parent.mkdir(parents=True, exist_ok=True)
        part = cached.with_suffix(f".part{os.getpid()}")
        shutil.copy2(out, part)
        os.replace(part, cached)
        return _deliver(Build("built", binary=cached, compile_s=dt, kernels=kernels), output)


def _deliver(b: Build, output: Path | None) -> Build:
    if output is not None and b.binary is not None:
        shutil.copy2(b.binary, output)
        b.binary = output
    return b


_LINKER = re.compile(r"undefined reference to|multiple definition of|^\S*\bld(\.\w+)?: |first defined here|relocation .* against")
_TMP_OBJECT = re.compile(r"/tmp/cc\w+\.o: ")


def _clean(stderr: str, root: Path) -> str:
    """g++'s and the linker's errors, mirror paths mapped back to the user's files.

    Kept: every `error:` line; the linker's own lines (the undefined or doubly defined symbol
    and the function that refers to it: "collect2: ld returned 1" alone tells nobody what is
    missing); and before an error inside a system or emulator header (deep in <tuple>, say)
    the user's line that instantiated it ("required from here"). Other lines of the emulator's
    headers are dropped."""
    text = _TMP_OBJECT.sub("", stderr.replace(str(root), ""))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    out: list[str] = []
    instantiated_at = ""
    for ln in lines:
        user = not (str(INCLUDE_DIR) in ln or "cuset_cuda.h" in ln or "cuset_runtime_api.h" in ln or ln.startswith("/usr/"))
        if _LINKER.search(ln) or ln.startswith("collect2:"):
            out.append(ln.strip())
        elif ": error:" in ln or ": fatal error:" in ln:
            if not user and instantiated_at:
                out.append(instantiated_at)
            out.append(ln)
            instantiated_at = ""
        elif "required from here" in ln and user:
            instantiated_at = ln
    if not out:
        out = [ln for ln in lines if str(INCLUDE_DIR) not in ln][:20]
    return "\n".join(list(dict.fromkeys(out))[:30])
