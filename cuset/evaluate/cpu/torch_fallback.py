"""The torch build path of a load_inline call (the fallback when g++ says the host code uses ATen
the shim lacks: torch::matmul, x + y, ...): torch's own load_inline builds the same sources as a
CPU extension, the CUDA translated and compiled against the emulator's runtime header
(include/torch/cuset_fallback/). `TorchModule` registers the caller's tensors as device memory
for each call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cuset.evaluate.cpu import build as cpu_build
from cuset.evaluate.cpu.inline_call import FALLBACK_INCLUDE_DIR, INCLUDE_DIR, InlineCall, _line_in, _plain_quotes, _workdir
from cuset.evaluate.cpu.shim import _shim_flags
from cuset.evaluate.cpu.translate import analyse, translate


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
