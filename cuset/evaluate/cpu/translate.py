"""CUDA source -> C++ for the CPU emulator's runtime header (include/cuset_cuda.h).

Only what C++ cannot express is rewritten, found with tree-sitter-cuda; every line keeps its
number, so g++'s messages point at the user's own lines (a `#line` directive names the file):

    k<T><<<grid, block, smem, stream>>>(a, b)
        -> ::cuset::launch<k<T>>(::cuset::KernelInfo{"k<T>", __FILE__, __LINE__, SYNC}, ::cuset::Config(grid, block, smem, stream), a, b)
       (a kernel reached through a function pointer is passed as an ordinary argument instead)
    __shared__ float tile[16][17];            (per block, from the block's arena)
        -> float (&tile)[16][17] = *reinterpret_cast<float (*)[16][17]>(::cuset::shared_static(sizeof(float[16][17]), 16, ID));
    extern __shared__ float buf[];            (the launch's dynamic buffer, 16-byte aligned)
        -> float * const buf = reinterpret_cast<float *>(::cuset::shared_dynamic());

SYNC says whether the kernel, or a function it calls (by name, across every file given to
`analyse`), uses a barrier or warp collective; kernels without run their threads as a plain
loop instead of fibers (arrive/wait barriers and pipelines count as barriers: ASYNC_WAITS).
Members named like the builtins (`params.gridDim`) become `::cuset::field_gridDim(params)`,
since the builtins are macros. A kernel whose address host code takes by name (`(void*)k`, or `k`
passed to cudaLaunchKernel / cudaLaunchCooperativeKernel / cudaLaunchKernelEx) becomes
`::cuset::kernel_ref<k>(info)`, which registers it for launches by address. Inline asm in
device code is PTX: the subset cpu/ptx.py knows becomes C++, any other instruction is refused;
asm in host code is the host compiler's and stays. Features the emulator cannot run faithfully
(PTX outside that subset, wmma/mma, TMA bulk copies, layered/3D/mipmapped textures and
surfaces, graph conditional nodes and device-side graph launch, kernels launching kernels) are returned as `Unsupported` records with their line: the caller
reports them instead of running the code.

    python -m cuset.evaluate.cpu.translate FILE.cu      # prints the translation
"""

from __future__ import annotations

import re
import sys
import zlib
from dataclasses import dataclass, field

from tree_sitter import Node

from cuset.evaluate.cpu.ptx import Operand, PtxUnsupported, translate_asm, unescape
from cuset.sensitivity.treesitter import parser

SYNC_TOKENS = re.compile(
    r"\b(__syncthreads\w*|__syncwarp|__shfl\w*_sync|__ballot_sync|__any_sync|__all_sync|__activemask|"
    r"__reduce_\w+_sync|__match_\w+_sync|this_thread_block|tiled_partition|coalesced_threads|labeled_partition|binary_partition|"
    r"thread_group|thread_block_tile|coalesced_group|inclusive_scan|exclusive_scan)\b|\b(cg|cooperative_groups)::(reduce|sync)\b"
)
# Arrive/wait barriers, block-scope pipelines and group copies park fibers too (cuset_async.h).
ASYNC_WAITS = re.compile(
    r"\.\s*(arrive|arrive_and_wait|arrive_and_drop|wait|wait_parity|producer_acquire|consumer_wait\w*)\s*\(|"
    r"\b(make_pipeline|pipeline_shared_state|wait_prior)\b|\b(cg|cooperative_groups)::(wait|memcpy_async)\b"
)
UNSUPPORTED = [
    ("tensor-core wmma/mma", re.compile(r"\bwmma::|\bnvcuda::|#\s*include\s*<mma\.h>|\bmma\.sync\b|\b__hmma")),
    # memcpy_async, cuda::pipeline, cuda::barrier and __pipeline_* run (cuset_async.h); the
    # tensor-memory accelerator's bulk copies and transaction-counted barriers do not
    ("TMA bulk copies (cuTensorMap, cp.async.bulk, memcpy_async_tx)",
     re.compile(r"cuTensorMap\w*|CUtensorMap|\bcp\.async\.bulk|\bmemcpy_async_tx\b|\bbarrier_arrive_tx\b|\bcp_async_bulk\w*")),
    ("textures: layered, cubemap, 3D, mipmapped or gather fetches",
     re.compile(r"\btex(1D|2D|3D)(Layered|Lod|Grad)\w*|\btex3D\b|\btex2DGather\w*|\btexCubemap\w*|\bcudaMalloc(3D|Mipmapped)Array\b")),
    ("texture references (texture<...>, removed in CUDA 12)", re.compile(r"\btexture\s*<|\bcudaBindTexture\w*")),
    ("surfaces: 3D, layered or cubemap (surf1D/surf2D over 1D/2D arrays work)", re.compile(r"\bsurf(3D|1DLayered|2DLayered|Cubemap)\w*|\bsurface\s*<")),
    # graphs and stream capture run (cuset_graph.h), except what needs a device-side scheduler
    ("CUDA graph conditional nodes (cudaGraphConditionalHandle)", re.compile(r"\bcudaGraphConditionalHandle\w*|\bcudaGraphSetConditional\b")),
    ("device-side graph launch (cudaGraphInstantiateFlagDeviceLaunch)", re.compile(r"\bcudaGraphInstantiateFlagDeviceLaunch\b|\bcudaGraphDeviceNode_t\b")),
    ("CUDA IPC (cudaIpc*)", re.compile(r"\bcudaIpc(Get|Open)\w*")),
]
# Struct members named like the builtins (cudaKernelNodeParams::gridDim), which are macros here.
_BUILTIN_FIELDS = ("gridDim", "blockDim")
# Launch APIs that take a kernel by address, and which argument is the kernel.
_LAUNCH_BY_ADDRESS = {"cudaLaunchKernel": 0, "cudaLaunchCooperativeKernel": 0, "cudaLaunchKernelEx": 1, "cudaLaunchKernelExC": 1}


@dataclass
class Unsupported:
    """A construct the emulator refuses to run, with its 1-based line in the original file."""

    feature: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.feature} ({self.text.strip()[:60]})"


@dataclass
class Translation:
    text: str
    kernels: dict[str, bool] = field(default_factory=dict)  # kernel name -> needs fibers
    unsupported: list[Unsupported] = field(default_factory=list)


@dataclass
class _Function:
    name: str
    qualifiers: set[str]
    body: str
    calls: set[str]
    defaults: list[str | None] = field(default_factory=list)


def _parse(source: str):
    data = source.encode()
    return data, parser().parse(data)


def _walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode(errors="replace")


def _code_only(data: bytes, root: Node) -> str:
    """The source with comments and string literals blanked (newlines kept)."""
    buf = bytearray(data)
    for n in _walk(root):
        if n.type in ("comment", "string_literal", "raw_string_literal", "char_literal"):
            for i in range(n.start_byte, n.end_byte):
                if buf[i] != 0x0A:
                    buf[i] = 0x20
    return buf.decode(errors="replace")


def _declarator_name(node: Node | None, data: bytes) -> str | None:
    while node is not None:
        if node.type in ("identifier", "field_identifier"):
            return _text(data, node)
        if node.type in ("qualified_identifier", "destructor_name", "operator_name"):
            return _text(data, node).split("::")[-1]
        node = node.child_by_field_name("declarator") or (node.named_children[0] if node.named_children else None)
    return None


def _functions(data: bytes, root: Node) -> list[_Function]:
    out = []
    for n in _walk(root):
        if n.type != "function_definition":
            continue
        body = n.child_by_field_name("body")
        if body is None:
            continue
        name = _declarator_name(n.child_by_field_name("declarator"), data)
        if not name:
            continue
        head = data[n.start_byte : body.start_byte].decode(errors="replace")
        quals = {q for q in ("__global__", "__device__", "__host__") if q in head}
        calls = set()
        for c in _walk(body):
            if c.type == "call_expression":
                fn = c.child_by_field_name("function")
                if fn is not None:
                    calls.add(_base_name(_text(data, fn)))
        out.append(_Function(name, quals, _text(data, body), calls, _defaults(n.child_by_field_name("declarator"), data)))
    return out


def _defaults(decl: Node | None, data: bytes) -> list[str | None]:
    """Each parameter's default argument text (None where it has none)."""
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    out: list[str | None] = []
    for p in params.named_children if params is not None else []:
        if p.type == "optional_parameter_declaration":
            d = p.child_by_field_name("default_value")
            out.append(_text(data, d) if d is not None else None)
        elif p.type in ("parameter_declaration", "variadic_parameter_declaration"):
            out.append(None)
    return out


def _base_name(expr: str) -> str:
    expr = re.sub(r"<.*>", "", expr, flags=re.S)
    return re.split(r"::|\.|->", expr.strip())[-1].strip()


@dataclass
class Analysis:
    """What translation needs to know about the whole program."""

    defined: set[str]  # functions defined anywhere in the program
    needs_sync: set[str]  # ... of which use a barrier or warp collective, directly or via calls
    defaults: dict[str, list[str | None]] = field(default_factory=dict)  # kernel -> each parameter's default (None: none)
    kernels: set[str] = field(default_factory=set)  # names of the __global__ functions


def analyse(sources: list[str]) -> Analysis:
    """Find the functions that use a barrier or warp collective, directly or through calls."""
    funcs: list[_Function] = []
    for src in sources:
        data, tree = _parse(src)
        funcs += _functions(data, tree.root_node)
    needs = {f.name for f in funcs if SYNC_TOKENS.search(f.body) or re.search(r"\.\s*sync\s*\(", f.body) or ASYNC_WAITS.search(f.body)}
    changed = True
    while changed:
        changed = False
        for f in funcs:
            if f.name not in needs and f.calls & needs:
                needs.add(f.name)
                changed = True
    kernels: dict[str, list[list[str | None]]] = {}
    for f in funcs:
        if "__global__" in f.qualifiers:
            kernels.setdefault(f.name, []).append(f.defaults)
    # a kernel's defaults, when every definition of that name agrees (overloads: none)
    defaults = {k: v[0] for k, v in kernels.items() if all(d == v[0] for d in v) and any(x is not None for x in v[0])}
    return Analysis({f.name for f in funcs}, needs, defaults, set(kernels))


def _line_of(data: bytes, byte: int) -> int:
    return data.count(b"\n", 0, byte) + 1


def _enclosing_function(node: Node) -> Node | None:
    p = node.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    return p


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


_ALIGN = re.compile(r"__align__\s*\(\s*(\w+)\s*\)|alignas\s*\(\s*(\w+)\s*\)|__attribute__\s*\(\(\s*aligned\s*\(\s*(\w+)\s*\)\s*\)\)")
_FIRST = re.compile(r"^(?P<type>.*?)(?P<ptr>[\s*&]*)\b(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)$", re.S)
_NEXT = re.compile(r"^(?P<ptr>[\s*&]*)(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)$", re.S)


def _shared_initialised(decl: str) -> bool:
    """`__shared__ float x = 0.0f;`: a __shared__ declaration with an initializer (outside
    brackets, so `s[N == 1 ? 2 : 3]` does not count)."""
    depth = 0
    for ch in decl:
        depth += ch in "[(<{"
        depth -= ch in "])>}"
        if ch == "=" and depth <= 0:
            return True
    return False


def _shared_replacement(decl: str, ident: int, file_scope: bool, path: str, next_line: int) -> str | None:
    """The C++ that replaces one `__shared__` declaration, or None when it cannot be parsed."""
    body = decl.strip().rstrip(";")
    is_extern = re.search(r"\bextern\b", body) is not None
    m = _ALIGN.search(body)
    align = next(g for g in m.groups() if g) if m else None
    body = _ALIGN.sub(" ", body)
    body = re.sub(r"\b(extern|__shared__|static)\b", " ", body).strip()
    if "=" in body:
        return None
    parts = _split_top(body)
    first = _FIRST.match(parts[0].strip())
    if not first or not first.group("type").strip():
        return None
    base = first.group("type").strip()
    decls = [(first.group("ptr"), first.group("name"), first.group("dims"))]
    for p in parts[1:]:
        m2 = _NEXT.match(p.strip())
        if not m2:
            return None
        decls.append((m2.group("ptr"), m2.group("name"), m2.group("dims")))
    out = []
    for k, (ptr, name, dims) in enumerate(decls):
        ty = f"{base} {ptr.strip()}".strip()
        dims = re.sub(r"\s+", "", dims)
        al = align or f"alignof({ty})"
        if is_extern:
            inner = re.sub(r"^\[\]", "", dims)
            target = f"{ty} (*){inner}" if inner else f"{ty} *"
            expr = f"reinterpret_cast<{target}>(::cuset::shared_dynamic())"
            out.append(f"#define {name} ({expr})" if file_scope else f"{target.replace('(*)', '(* const ' + name + ')') if inner else ty + ' * const ' + name} = {expr};")
            continue
        sid = (ident * 31 + k) & 0x7FFFFFFF
        size = f"sizeof({ty}{dims})"
        target = f"{ty} (*){dims}" if dims else f"{ty} *"
        expr = f"*reinterpret_cast<{target}>(::cuset::shared_static({size}, {al}, {sid}L))"
        if file_scope:
            out.append(f"#define {name} ({expr})")
        else:
            ref = f"{ty} (&{name}){dims}" if dims else f"{ty} &{name}"
            out.append(f"{ref} = {expr};")
    if file_scope:
        return "\n".join(out) + f'\n#line {next_line} "{path}"'
    return " ".join(out)


_ARCH = "800"  # the compute capability the emulator reports (cudaDeviceProp major 8, minor 0)
_ARCH_DIRECTIVES = ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef")


def _device_context(node: Node, data: bytes) -> bool:
    """Whether a conditional directive sits in device-only code: inside a __global__ or
    __device__ (not __host__) function body, or at file scope with such a function in its
    branch. nvcc compiles that code with __CUDA_ARCH__ defined; host code sees it undefined."""
    outer = _enclosing_function(node)
    if outer is not None:
        head = data[outer.start_byte : (outer.child_by_field_name("body") or outer).start_byte].decode(errors="replace")
        return ("__global__" in head or "__device__" in head) and "__host__" not in head
    for child in node.children:
        if child.type in ("preproc_else", "preproc_elif", "preproc_elifdef"):
            break
        if child.type in ("function_definition", "declaration", "template_declaration"):
            head = _text(data, child).split("{", 1)[0]
            if "__host__" in head:
                return False
            if "__global__" in head or "__device__" in head:
                return True
    return False


def _in_directive(node: Node) -> bool:
    """Whether an identifier is part of a preprocessor directive's condition or name."""
    a = node.parent
    while a is not None:
        if a.type.startswith("preproc"):
            cond = a.child_by_field_name("condition") or a.child_by_field_name("name")
            if cond is not None and cond.start_byte <= node.start_byte < cond.end_byte:
                return True
        a = a.parent
    return False


def resolve_cuda_arch(source: str) -> str:
    """`#if __CUDA_ARCH__ >= 700` and `#ifdef __CUDA_ARCH__` in device-only code, decided as
    nvcc's device pass would (architecture 800). The emulator compiles host and device code
    in one pass without __CUDA_ARCH__, so such code was silently compiled out (an empty
    kernel). Host code, and __host__ __device__ functions, keep the host pass's view."""
    if "__CUDA_ARCH__" not in source:
        return source
    data, tree = _parse(source)
    edits: list[tuple[int, int, str]] = []
    for n in _walk(tree.root_node):
        if n.type == "identifier" and _text(data, n) == "__CUDA_ARCH__" and not _in_directive(n):
            if _enclosing_function(n) is not None and _device_context(n, data):  # a use in device code: its value
                edits.append((n.start_byte, n.end_byte, _ARCH))
            continue
        if n.type not in _ARCH_DIRECTIVES or not _device_context(n, data):
            continue
        if n.type in ("preproc_ifdef", "preproc_elifdef"):
            name = n.child_by_field_name("name")
            if name is None or _text(data, name) != "__CUDA_ARCH__":
                continue
            directive = n.children[0]
            word = _text(data, directive)
            truth = "0" if word.endswith("ndef") else "1"
            keyword = "#elif" if n.type == "preproc_elifdef" else "#if"
            edits.append((directive.start_byte, name.end_byte, f"{keyword} {truth}"))
            continue
        cond = n.child_by_field_name("condition")
        if cond is None:
            continue
        text = _text(data, cond)
        if "__CUDA_ARCH__" not in text:
            continue
        text = re.sub(r"\bdefined\s*\(\s*__CUDA_ARCH__\s*\)|\bdefined\s+__CUDA_ARCH__\b", "1", text)
        edits.append((cond.start_byte, cond.end_byte, re.sub(r"\b__CUDA_ARCH__\b", _ARCH, text)))
    out = bytearray(data)
    for start, end, rep in sorted(edits, reverse=True):
        out[start:end] = rep.encode()
    return out.decode(errors="replace")


def _device_only(node: Node, data: bytes) -> bool:
    """Whether `node` lies in a __global__ or __device__ (not __host__) function body."""
    outer = _enclosing_function(node)
    if outer is None:
        return False
    head = data[outer.start_byte : (outer.child_by_field_name("body") or outer).start_byte].decode(errors="replace")
    return ("__global__" in head or "__device__" in head) and "__host__" not in head


def _asm_edit(node: Node, data: bytes) -> tuple[tuple[int, int, str] | None, str | None]:
    """An asm statement in device code: the edit that replaces it with C++ (cpu/ptx.py), or the
    reason it is refused. Asm in host code is the host compiler's (x86 here), as with nvcc,
    and stays; in a __host__ __device__ function it is translated when it is PTX of the subset
    and otherwise left to the host compiler."""
    outer = _enclosing_function(node)
    if outer is None:
        return None, None
    head = data[outer.start_byte : (outer.child_by_field_name("body") or outer).start_byte].decode(errors="replace")
    device = "__global__" in head or "__device__" in head
    if not device:
        return None, None
    code = node.child_by_field_name("assembly_code")
    template = "".join(unescape(_text(data, c)) for c in _walk(code) if c.type == "string_content") if code is not None else ""
    ops: dict[str, list[Operand]] = {"output_operands": [], "input_operands": []}
    for fname in ops:
        lst = node.child_by_field_name(fname)
        for op in lst.named_children if lst is not None else []:
            cons, val = op.child_by_field_name("constraint"), op.child_by_field_name("value")
            if cons is None or val is None:
                return None, "inline PTX: named asm operands"
            ops[fname].append(Operand(_text(data, cons).strip('"'), _text(data, val)))
    try:
        expr = translate_asm(template.replace("%%", "%"), ops["output_operands"], ops["input_operands"])
    except PtxUnsupported as e:
        return None, None if "__host__" in head else str(e)
    text = _text(data, node)
    return (node.start_byte, node.end_byte, expr + "\n" * text.count("\n")), None


def _kernel_name_node(node: Node | None, data: bytes, kernels: set[str]) -> Node | None:
    """The kernel named by `kernel`, `&kernel`, `(void *)kernel`, `(kernel<T>)`, ... or None."""
    while node is not None:
        if node.type == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "pointer_expression" and _text(data, node).lstrip().startswith("&"):
            node = node.child_by_field_name("argument")
        elif node.type in ("identifier", "template_function", "qualified_identifier"):
            return node if _base_name(_text(data, node)) in kernels else None
        else:
            return None
    return None


def _kernel_ref(data: bytes, node: Node, program: Analysis) -> tuple[int, int, str]:
    """The edit that registers a kernel whose address host code takes (cuset_launch_api.h);
    `&kernel` is replaced whole (the replacement is the kernel's address already)."""
    name = _text(data, node)
    if node.parent is not None and node.parent.type == "pointer_expression":
        node = node.parent
    base = _base_name(name)
    sync = "true" if base in program.needs_sync or base not in program.defined else "false"
    label = re.sub(r"\s+", " ", name).replace('"', "'")
    return (node.start_byte, node.end_byte, f'::cuset::kernel_ref<{name}>(::cuset::KernelInfo{{"{label}", __FILE__, __LINE__, {sync}}})')


def translate(source: str, path: str = "<source>", first_line: int = 1, program: Analysis | None = None) -> Translation:
    """Translate one file. `first_line` is the line of `source`'s first line in `path` (for CUDA
    embedded in a Python string); `program` is `analyse` over every file of the program
    (default: this file alone). Kernels defined outside the program run as fibers."""
    source = resolve_cuda_arch(source)
    data, tree = _parse(source)
    root = tree.root_node
    code = _code_only(data, root)
    program = program if program is not None else analyse([source])
    result = Translation(text="")
    lines = source.splitlines()
    esc_path = path.replace("\\", "\\\\").replace('"', '\\"')

    for feature, rx in UNSUPPORTED:
        for m in rx.finditer(code):
            line = code.count("\n", 0, m.start()) + first_line
            result.unsupported.append(Unsupported(feature, line, lines[line - first_line]))

    edits: list[tuple[int, int, str]] = []
    for n in _walk(root):
        if n.type == "call_expression" and program.kernels:
            # cudaLaunchCooperativeKernel(kernel, ...) and the like: the kernel is registered by address
            fn = n.child_by_field_name("function")
            index = _LAUNCH_BY_ADDRESS.get(_base_name(_text(data, fn))) if fn is not None else None
            args = n.child_by_field_name("arguments")
            if index is not None and args is not None and len(args.named_children) > index and not _device_only(n, data):
                k = _kernel_name_node(args.named_children[index], data, program.kernels)
                if k is not None:
                    edits.append(_kernel_ref(data, k, program))
        elif n.type == "cast_expression" and program.kernels:
            # (void *)kernel in host code (kernel node parameters, launch tables): registered too
            ty = n.child_by_field_name("type")
            if ty is not None and re.sub(r"\s+", "", _text(data, ty)) in ("void*", "constvoid*", "voidconst*") and not _device_only(n, data):
                k = _kernel_name_node(n.child_by_field_name("value"), data, program.kernels)
                if k is not None:
                    edits.append(_kernel_ref(data, k, program))
        elif n.type == "gnu_asm_expression":
            edit, refused = _asm_edit(n, data)
            if refused:
                line = _line_of(data, n.start_byte) + first_line - 1
                result.unsupported.append(Unsupported(refused, line, lines[line - first_line]))
            elif edit:
                edits.append(edit)
        elif n.type == "kernel_call_syntax":
            call = n.parent
            if call is None or call.type != "call_expression":
                continue
            fn = call.child_by_field_name("function")
            args = call.child_by_field_name("arguments")
            if fn is None or args is None:
                continue
            outer = _enclosing_function(call)
            if outer is not None:
                head = data[outer.start_byte : (outer.child_by_field_name("body") or outer).start_byte].decode(errors="replace")
                if ("__global__" in head or "__device__" in head) and "__host__" not in head:
                    result.unsupported.append(Unsupported("kernel launched from device code (dynamic parallelism)", _line_of(data, call.start_byte) + first_line - 1, _text(data, call)))
                    continue
            name = _text(data, fn)
            base = _base_name(name)
            sync = base in program.needs_sync or base not in program.defined
            result.kernels[name] = sync
            label = re.sub(r"\s+", " ", name).replace('"', "'")
            open_tok = n.children[0]
            close_tok = n.children[-1]
            info = f'::cuset::KernelInfo{{"{label}", __FILE__, __LINE__, {"true" if sync else "false"}}}, ::cuset::Config('
            if base in program.defined and fn.type in ("identifier", "template_function", "qualified_identifier"):
                # a named kernel: a template argument, so the block loop can inline it
                edits.append((fn.start_byte, fn.start_byte, "::cuset::launch<"))
                edits.append((open_tok.start_byte, open_tok.end_byte, ">(" + info))
            else:
                edits.append((fn.start_byte, fn.start_byte, "::cuset::launch("))
                edits.append((open_tok.start_byte, open_tok.end_byte, ", " + info))
            edits.append((close_tok.start_byte, close_tok.end_byte, ")"))
            lpar = args.children[0]
            empty = args.named_child_count == 0
            edits.append((lpar.start_byte, lpar.end_byte, "" if empty else ", "))
            # a kernel's default arguments, which a launch through a template cannot see
            defaults = program.defaults.get(base, [])
            given = args.named_child_count
            if given < len(defaults) and all(d is not None for d in defaults[given:]):
                rpar = args.children[-1]
                extra = ", ".join(d for d in defaults[given:] if d is not None)
                edits.append((rpar.start_byte, rpar.start_byte, ", " + extra))
        elif n.type == "__shared__" or (n.type == "identifier" and _text(data, n) == "__shared__"):
            decl = n.parent
            while decl is not None and decl.type not in ("declaration", "field_declaration"):
                decl = decl.parent
            line = _line_of(data, n.start_byte) + first_line - 1
            if decl is None or decl.type != "declaration":
                result.unsupported.append(Unsupported("__shared__ outside a plain declaration", line, lines[line - first_line]))
                continue
            file_scope = _enclosing_function(decl) is None
            ident = zlib.crc32(f"{path}:{decl.start_byte}".encode())
            decl_end = decl.end_byte
            if not data[decl.start_byte : decl_end].rstrip().endswith(b";"):
                # `__shared__ int __align__(8) s[1024];`: the grammar reads `__align__(8)` as the
                # declarator and ends the declaration there; the declaration runs to its `;`
                semi = data.find(b";", decl_end)
                decl_end = semi + 1 if semi >= 0 else decl_end
            text = data[decl.start_byte : decl_end].decode(errors="replace")
            end_line = _line_of(data, decl_end) + first_line - 1
            rep = _shared_replacement(text, ident, file_scope, esc_path, end_line + 1)
            if rep is None and _shared_initialised(text):
                # not CUDA: nvcc refuses it too, so it is the program's compile error (at its
                # own line), not a construct the emulator lacks
                rep = 'static_assert(false, "initializer not allowed for __shared__ variable");'
            if rep is None:
                result.unsupported.append(Unsupported("__shared__ declaration the translator cannot parse", line, text))
                continue
            if file_scope:
                line_start = data.rfind(b"\n", 0, decl.start_byte) + 1
                if data[line_start : decl.start_byte].strip():
                    result.unsupported.append(Unsupported("file-scope __shared__ not at the start of a line", line, text))
                    continue
            rep += "\n" * max(0, text.count("\n") - rep.count("\n")) if not file_scope else ""
            edits.append((decl.start_byte, decl_end, rep))
        elif n.type == "field_expression" and _text(data, n.child_by_field_name("field") or n) in _BUILTIN_FIELDS:
            # `params.gridDim` (cudaKernelNodeParams, cudaLaunchConfig_t): the builtin's macro would
            # eat the member name, so the member is reached through cuset::field_gridDim(params)
            arg, op, fld = n.child_by_field_name("argument"), n.child_by_field_name("operator"), n.child_by_field_name("field")
            if arg is not None and op is not None and fld is not None:
                deref = "*" if _text(data, op) == "->" else ""
                edits.append((arg.start_byte, arg.start_byte, f"::cuset::field_{_text(data, fld)}({deref}"))
                edits.append((op.start_byte, fld.end_byte, ")"))

    out = bytearray(data)
    for start, end, rep in sorted(set(edits), key=lambda e: (e[0], e[1]), reverse=True):
        out[start:end] = rep.encode()
    text = out.decode(errors="replace")
    leftover = _code_only(*_reparse(text)) if not result.unsupported else ""
    for token, feature in (("<<<", "kernel launch the translator could not rewrite (inside a macro?)"), ("__shared__", "__shared__ the translator could not rewrite (inside a macro?)")):
        for m in re.finditer(re.escape(token), leftover):
            if not any(u.feature == feature for u in result.unsupported):
                result.unsupported.append(Unsupported(feature, 0, leftover[m.start() : m.start() + 60]))
    result.text = f'#line {first_line} "{esc_path}"\n{text}'
    return result


def _reparse(text: str):
    data, tree = _parse(text)
    return data, tree.root_node


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m cuset.evaluate.cpu.translate FILE.cu", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        t = translate(fh.read(), args[0])
    print(t.text)
    for u in t.unsupported:
        print(f"unsupported: {u}", file=sys.stderr)
    return 1 if t.unsupported else 0


if __name__ == "__main__":
    raise SystemExit(main())
