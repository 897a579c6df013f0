"""Name tables for CUDA-sensitive calls and the regex fallback for text the parser cannot use.

`classify_call` decides the category of a called function from its name alone (the syntax
pass calls it for every ``call_expression``). `lexical_spans` finds keyword-like spans
(qualifiers, memory spaces, builtins, sensitive calls, ``<<<...>>>``) by regex; it runs only
over ERROR regions of the syntax tree and over macro bodies (``#define`` text is not parsed),
with comments and string literals blanked first. Index math, guards and loops need the tree
and are not attempted lexically.
"""

from __future__ import annotations

import re

POSITION_BUILTINS = frozenset({"threadIdx", "blockIdx"})
DIMENSION_BUILTINS = frozenset({"blockDim", "gridDim", "warpSize"})
BUILTINS = POSITION_BUILTINS | DIMENSION_BUILTINS

SYNC_NAMES = frozenset(
    {
        "__syncthreads",
        "__syncthreads_count",
        "__syncthreads_and",
        "__syncthreads_or",
        "__syncwarp",
        "__threadfence",
        "__threadfence_block",
        "__threadfence_system",
        "__barrier_sync",
        "arrive_and_wait",
    }
)
_WARP_RE = re.compile(
    r"__(shfl(_up|_down|_xor)?(_sync)?|ballot(_sync)?|any(_sync)?|all(_sync)?|uni_sync"
    r"|activemask|reduce_(add|min|max|and|or|xor)_sync|match_(any|all)_sync|lanemask_\w+)"
)
_ATOMIC_RE = re.compile(r"atomic[A-Z]\w*")
_MEMORY_API_RE = re.compile(
    r"cuda[A-Z]\w*|cu[A-Z][a-z]\w*|CUDA_CHECK\w*|CUDA_SAFE_CALL|CUDA_CALL|CUDA_RT_CALL|CUDACHECK"
    r"|CHECK_CUDA_ERROR\w*|CUDA_ERROR_CHECK|checkCuda\w*|check_cuda_error|gpuErrchk|gpuErrorCheck"
    r"|HANDLE_ERROR|cutilSafeCall|getLastCudaError|C10_CUDA_\w+|AT_CUDA_CHECK|TORCH_CUDA_CHECK"
    r"|getCurrentCUDAStream|getDefaultCUDAStream|getStreamFromPool"
)
_FAST_MATH = frozenset(
    {
        "rsqrtf",
        "rsqrt",
        "rcbrtf",
        "rcbrt",
        "rhypotf",
        "rhypot",
        "rnormf",
        "rnorm3df",
        "rnorm4df",
        "hexp",
        "hexp2",
        "hexp10",
        "hlog",
        "hlog2",
        "hlog10",
        "hsqrt",
        "hrsqrt",
        "hrcp",
        "hsin",
        "hcos",
        "h2exp",
        "h2exp2",
        "h2log",
        "h2log2",
        "h2sqrt",
        "h2rsqrt",
        "h2rcp",
        "h2sin",
        "h2cos",
    }
)
_NOT_INTRINSIC_PREFIXES = ("__builtin", "__assert", "__trap", "__nanosleep", "__cuda", "__launch")
CEIL_DIV_NAMES = frozenset({"cdiv", "ceil_div", "ceildiv", "CEIL_DIV", "DIV_UP", "div_up", "DIVUP", "CeilDiv", "DIV_ROUND_UP"})

# Cooperative-groups methods, by what they stand for.
CG_POSITION = frozenset({"thread_rank", "meta_group_rank", "group_index", "thread_index", "block_rank", "block_index"})
CG_DIMENSION = frozenset({"size", "num_threads", "meta_group_size", "group_dim", "dim_threads", "num_blocks", "dim_blocks"})
CG_SYNC = frozenset({"sync", "barrier_wait", "barrier_arrive"})
CG_WARP = frozenset({"shfl", "shfl_down", "shfl_up", "shfl_xor", "ballot", "any", "all", "match_any", "match_all"})
CG_COLLECTIVES = frozenset({"reduce", "inclusive_scan", "exclusive_scan"})
_CG_DECL_RE = re.compile(
    r"\b(?:thread_block_tile\s*<[^<>;]*>|thread_block|grid_group|coalesced_group|thread_group"
    r"|cluster_group|multi_grid_group)\s*(?:const\s*)?&?\s*(\w+)\s*[=;,)]"
)
_CG_FACTORY = (
    r"(?:this_grid|this_thread_block|tiled_partition|coalesced_threads|this_cluster"
    r"|binary_partition|labeled_partition)"
)
_CG_AUTO_RE = re.compile(r"\b(\w+)\s*=\s*(?:\w+::)*" + _CG_FACTORY + r"\b")
_CG_FACTORY_CALL_RE = re.compile(r"(?:\w+::)*" + _CG_FACTORY + r"\b.*\)\s*$", re.S)


def cg_group_names(code: str) -> frozenset[str]:
    """Names of cooperative-groups group variables declared anywhere in ``code``."""
    if "group" not in code and "thread_block" not in code and "partition" not in code:
        return frozenset()
    names = {m.group(1) for m in _CG_DECL_RE.finditer(code)}
    names.update(m.group(1) for m in _CG_AUTO_RE.finditer(code))
    return frozenset(names)


def classify_call(callee: str, cg_names: frozenset[str] = frozenset()) -> str | None:
    """Category of a call from its callee text (``__syncthreads``, ``cg::sync``, ``g.sync``).

    Method calls on cooperative-groups variables map to ``thread_index`` (ranks and sizes),
    ``sync`` or ``warp_intrinsic``; anything unknown is ``None``.
    """
    callee = re.sub(r"<[^<>]*>", "", callee).replace(" ", "")
    for sep in (".", "->"):
        if sep in callee:
            obj, _, method = callee.rpartition(sep)
            if method == "arrive_and_wait":
                return "sync"
            if obj in cg_names or _CG_FACTORY_CALL_RE.match(obj):
                if method in CG_POSITION or method in CG_DIMENSION:
                    return "thread_index"
                if method in CG_SYNC:
                    return "sync"
                if method in CG_WARP:
                    return "warp_intrinsic"
            return None
    scope, _, name = callee.rpartition("::")
    if name in SYNC_NAMES:
        return "sync"
    if scope.endswith(("cg", "cooperative_groups")):
        if name in CG_SYNC:
            return "sync"
        if name in CG_COLLECTIVES:
            return "warp_intrinsic"
        return None
    if _WARP_RE.fullmatch(name):
        return "warp_intrinsic"
    if _ATOMIC_RE.fullmatch(name):
        return "atomic"
    if _MEMORY_API_RE.fullmatch(name):
        return "memory_api"
    if name in CEIL_DIV_NAMES:
        return "launch_config"
    if name in _FAST_MATH or (
        name.startswith("__") and not name.endswith("__") and len(name) > 3 and not name.startswith(_NOT_INTRINSIC_PREFIXES)
    ):
        return "intrinsic_math"
    return None


def cg_seed_kind(callee: str, cg_names: frozenset[str]) -> str | None:
    """``"pos"`` / ``"dim"`` when the call is a cooperative-groups rank / size query."""
    obj, dot, method = callee.replace(" ", "").rpartition(".")
    if not dot or not (obj in cg_names or _CG_FACTORY_CALL_RE.match(obj)):
        return None
    if method in CG_POSITION:
        return "pos"
    if method in CG_DIMENSION:
        return "dim"
    return None


_BLANK_RE = re.compile(r"//[^\n]*|/\*.*?(?:\*/|$)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_LEXICAL_RE = re.compile(
    r"(?P<qualifier>\b(?:__global__|__device__|__host__|__forceinline__|__noinline__|__restrict__"
    r"|__grid_constant__)\b|\b__launch_bounds__\s*\([^()]*\))"
    r"|(?P<memory_space>\b(?:extern\s+)?(?:__shared__|__constant__|__managed__)\b)"
    r"|(?P<thread_index>\b(?:threadIdx|blockIdx|blockDim|gridDim)\b(?:\s*\.\s*[xyz]\b)?|\bwarpSize\b)"
    r"|(?P<launch_config><<<[^;{}]*?>>>)"
    r"|(?P<call>\b[A-Za-z_]\w*)(?=\s*\()"
    r"|(?P<cuda_name>\bcuda[A-Z]\w*)"
)


def blank_comments_and_strings(code: str) -> str:
    """``code`` with comments and string/char literals replaced by spaces (offsets kept)."""
    return _BLANK_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)


def lexical_spans(code: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Keyword-like spans in ``code[start:end]`` as ``(start, end, category)`` char offsets."""
    region = blank_comments_and_strings(code[start:end])
    out: list[tuple[int, int, str]] = []
    for m in _LEXICAL_RE.finditer(region):
        kind = m.lastgroup
        if kind == "call":
            category = classify_call(m.group(0))
            if category is None or category == "launch_config":
                continue
        elif kind == "cuda_name":
            category = "memory_api"
        else:
            category = kind
        out.append((start + m.start(), start + m.end(), category))
    return out
