"""CUDA-sensitive spans of one piece of CUDA/C++ code, read off the tree-sitter-cuda tree.

Two compiled queries (`cuset.sensitivity.treesitter`) find every candidate node in C; the
Python side only applies the rules below to those candidates. Offsets returned are ``str``
indices into the code string.

Index tracking (``index_math``, ``bounds_guard``): inside each device function a variable is
*derived* when an integer, pointer or ``auto`` variable is initialised or assigned from a
thread builtin, a cooperative-groups rank/size call or another derived variable (followed to
a fixed point). ``threadIdx``/``blockIdx``/ranks make a *position*, ``blockDim``/``gridDim``/
``warpSize``/sizes a *dimension*. Loaded values (``x[i]``) and results of atomics/shuffles are
data, except loads into integer variables (gather indices, CSR offsets, labels).

Span extents: keyword tokens for ``qualifier``; the whole declaration for ``memory_space``;
``threadIdx.x`` with its component; for ``index_math`` the whole ``name = value`` of a derived
variable (and every ``+=``-style update of a position), each subscript index that uses a
derived value or builtin, and such arithmetic passed as a call argument or returned
(arithmetic inside a condition is the ``bounds_guard``'s); for ``bounds_guard`` an
``if``/loop/ternary condition that tests a *position* (``s > 0`` on a halving stride is not a
guard), or the whole ``if (...) return;``; the whole call for ``sync``/``atomic``/
``warp_intrinsic``/``memory_api``, the name only for ``intrinsic_math``; for
``launch_config`` the ``<<<...>>>``, ``dim3`` declarations, the definitions (``name = value``,
``#define``) of variables passed directly to them and host ceil-divisions; for
``loop_structure`` the ``for (...)``/``while (...)`` header of grid/block-stride, tiling (a
sync or a non-unit step inside) and halving/doubling loops in device code. A span inside
another span of the same category is dropped.

Broken code: unclosed braces are closed at the end before parsing (truncated answers), code
the parser leaves in an ERROR node outside any function is scoped as one, ``__align__`` and
``__attribute__`` are blanked (the grammar lacks them), and ERROR regions and macro bodies get
the keyword-level regex pass of `cuset.sensitivity.lexical`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from cuset.sensitivity.lexical import (
    BUILTINS,
    DIMENSION_BUILTINS,
    POSITION_BUILTINS,
    blank_comments_and_strings,
    cg_group_names,
    cg_seed_kind,
    classify_call,
    lexical_spans,
)
from cuset.sensitivity.treesitter import (
    CodeTags,
    byte_to_char,
    drop_contained,
    nested,
    outermost,
    parser,
    queries,
    rng,
    union,
)

_STATEMENT_KIND = {
    "for_statement": "for",
    "for_range_loop": "for",
    "while_statement": "while",
    "do_statement": "do",
    "if_statement": "if",
    "return_statement": "return",
    "declaration": "declaration",
    "expression_statement": "expression",
}
_INDEX_TYPE_RE = re.compile(
    r"(?:const\s+)?(?:(?:unsigned|signed|long|short|int|size_t|ssize_t|ptrdiff_t|u?int(?:8|16|32|64)_t"
    r"|index_t|uint|auto|std::size_t|std::ptrdiff_t|std::int64_t|Idx|IndexType)\s*)+"
)
_HALVING_RE = re.compile(r">>=|<<=|\*=\s*2\b|/=\s*2\b|=\s*\w+\s*(?:>>|<<)\s*1\b|=\s*\w+\s*[/*]\s*2\b")
_STEP_RE = re.compile(r"(?:\+=|-=)\s*(?!1\s*$)\S")
_CEIL_DIV_RE = re.compile(r"\(\s*(.+?)\s*\+\s*(.+?)\s*(-\s*1)?\s*\)\s*/\s*(.+?)\s*", re.S)
_DEFINE_NAME_RE = re.compile(r"#\s*define\s+(\w+)")
_FIELD_RE = re.compile(rb"\s*\.\s*[xyz]\b")
_ATTRIBUTE_RE = re.compile(rb"__align__\s*\([^()]*\)|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
_CUDA_TYPE_RE = re.compile(r"cuda[A-Z]\w*|CUstream\w*|CUevent\w*|CUDAStream|CUDAGuard|OptionalCUDAGuard")


@dataclass
class _Def:
    """An index-capable variable definition (``int``/pointer/``auto``) in a device function."""

    fn: _Function
    start: int
    end: int
    name: str
    value_start: int
    value_end: int
    loads: bool  # integer variable: loads from memory still count (gather indices)
    compound: bool  # ``+=``-style assignment


@dataclass
class _Function:
    start: int
    end: int
    body_start: int
    device: bool
    derived: dict[str, str] = field(default_factory=dict)  # variable -> "pos" | "dim"


def tag_code(code: str) -> CodeTags:
    """Tag one piece of CUDA/C++ code. Never raises on malformed code."""
    return _Tagger(code).run()


class _Tagger:
    """One pass over one code string; every helper works in byte offsets until `run` ends."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.src = code.encode("utf-8", "surrogatepass")
        self.code_bytes = len(self.src)
        if b"__align__" in self.src or b"__attribute__" in self.src:
            # The grammar knows neither; blank them (same length, so offsets hold).
            self.src = _ATTRIBUTE_RE.sub(lambda m: b" " * len(m.group(0)), self.src)
        self.spans: list[tuple[int, int, str]] = []

    def text(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8", "replace")

    def run(self) -> CodeTags:
        tree = parser().parse(self.src)
        self.unclosed = 0
        if tree.root_node.has_error:
            # Truncated answers lose their closing braces; close them so the functions parse.
            blanked = blank_comments_and_strings(self.code)
            self.unclosed = blanked.count("{") - blanked.count("}")
            if self.unclosed > 0:
                self.src += b"\n" + b"}" * self.unclosed
                tree = parser().parse(self.src)
        bulk_q, paired_q = queries()
        self.caps = QueryCursor(bulk_q).captures(tree.root_node)
        self._sorted: set[str] = set()
        self.matches = QueryCursor(paired_q).matches(tree.root_node)
        self._index_facts()
        self._keywords()
        self._calls()
        self._derive()
        self._index_math()
        self._guards()
        self._loops()
        self._launch_config()
        out = CodeTags()
        self._to_chars(out)
        self._statements(out)
        self._errors(out)
        return out

    # ---- facts shared by the rules -------------------------------------------------------
    def cap(self, name: str) -> list[Node]:
        """Captured nodes of one name in document order (outer before inner at a tie)."""
        nodes = self.caps.get(name, [])
        if name not in self._sorted:
            nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
            self._sorted.add(name)
        return nodes

    def _index_facts(self) -> None:
        src = self.src
        self.idents = sorted((n.start_byte, n.end_byte) for n in self.caps.get("ident", ()))
        self.ident_names = [src[s:e].decode("utf-8", "replace") for s, e in self.idents]
        self.id_starts = [s for s, _ in self.idents]
        self.dim3_decls: list[Node] = []
        self.subs = sorted(rng(n) for n in self.cap("subscript"))
        self.sub_starts = [s for s, _ in self.subs]
        self.cond_union = union(sorted(rng(n) for n in self.cap("cond")))
        self.cond_starts = [s for s, _ in self.cond_union]
        self.cg_names = cg_group_names(self.code)
        self.cg_seed_at: dict[int, str] = {}
        self.funcs: list[_Function] = []
        for body in self.cap("body"):
            fn = body.parent
            if fn is None:
                continue
            header = src[fn.start_byte : body.start_byte]
            device = b"__global__" in header or b"__device__" in header
            self.funcs.append(_Function(fn.start_byte, fn.end_byte, body.start_byte, device))
        self.funcs.sort(key=lambda f: f.start)
        self.func_starts = [f.start for f in self.funcs]
        orphans = [n for n in outermost(self.cap("error")) if self.func_at(n.start_byte) is None]
        for node in orphans:  # code the parser could not place in a function: scope it anyway
            text = src[node.start_byte : node.end_byte]
            device = b"__global__" in text or b"__device__" in text
            self.funcs.append(_Function(node.start_byte, node.end_byte, node.start_byte, device))
        if orphans:
            self.funcs.sort(key=lambda f: f.start)
            self.func_starts = [f.start for f in self.funcs]
        self.defs: list[tuple[Node, Node, Node, str | None]] = []  # (def, name, value, type)
        self.params: list[tuple[Node, str]] = []  # (name, type)
        self.calls: list[tuple[Node, Node]] = []
        self.early: list[Node] = []
        self.whiles: list[tuple[Node, Node, Node]] = []
        for _, m in self.matches:
            if "def" in m:
                typ = m.get("type")
                self.defs.append((m["def"][0], m["name"][0], m["value"][0], self.text(*rng(typ[0])) if typ else None))
            elif "param" in m:
                self.params.append((m["name"][0], self.text(*rng(m["type"][0]))))
            elif "call" in m:
                self.calls.append((m["call"][0], m["callee"][0]))
            elif "early" in m:
                self.early.append(m["early"][0])
            elif "while" in m:
                self.whiles.append((m["while"][0], m["cond"][0], m["body"][0]))

    def func_at(self, pos: int) -> _Function | None:
        k = bisect.bisect_right(self.func_starts, pos) - 1
        while k >= 0:
            fn = self.funcs[k]
            if fn.start <= pos < fn.end:
                return fn
            k -= 1
        return None

    def value_kind(self, start: int, end: int, derived: dict[str, str], exclude: str = "", loads: bool = False) -> str | None:
        """``"pos"``/``"dim"`` if ``[start, end)`` uses a builtin or derived value; else None.

        Identifiers inside a nested subscript (a load: data) are skipped unless ``loads``
        (integer variables: loaded values are gather indices, CSR offsets, labels); those
        inside atomic/shuffle calls always are (their results are data)."""
        lo = bisect.bisect_left(self.id_starts, start)
        hi = bisect.bisect_left(self.id_starts, end, lo)
        best = None
        for k in range(lo, hi):
            name = self.ident_names[k]
            if name == exclude:
                continue
            if name in POSITION_BUILTINS:
                kind: str | None = "pos"
            elif name in DIMENSION_BUILTINS:
                kind = "dim"
            else:
                kind = derived.get(name) or self.cg_seed_at.get(self.id_starts[k])
            if kind is None:
                continue
            s, e = self.idents[k]
            if (not loads and nested(self.subs, self.sub_starts, start, end, s, e)) or (
                self.data_calls and nested(self.data_calls, self.data_call_starts, start, end, s, e)
            ):
                continue
            if kind == "pos":
                return "pos"
            best = kind
        return best

    def add(self, start: int, end: int, category: str) -> None:
        self.spans.append((start, end, category))

    # ---- keyword-like categories ------------------------------------------------------------
    def _keywords(self) -> None:
        for node in self.caps.get("qualifier", ()):
            self.add(node.start_byte, node.end_byte, "qualifier")
        for node in self.caps.get("launch", ()):
            self.add(node.start_byte, node.end_byte, "launch_config")
        for (s, e), name in zip(self.idents, self.ident_names, strict=True):
            if name in BUILTINS:
                m = _FIELD_RE.match(self.src, e) if name != "warpSize" else None
                self.add(s, m.end() if m else e, "thread_index")
            elif name.startswith("cuda") and name[4:5].isupper():
                self.add(s, e, "memory_api")
        for node in self.caps.get("type_ident", ()):
            name = self.text(*rng(node))
            if _CUDA_TYPE_RE.fullmatch(name):
                self.add(node.start_byte, node.end_byte, "memory_api")
            elif name == "dim3" and (parent := node.parent) is not None and parent.type == "declaration":
                self.dim3_decls.append(parent)
                self.add(parent.start_byte, parent.end_byte, "launch_config")
        for name in ("memory_token", "memory_decl"):
            for node in self.cap(name):
                start = node.start_byte
                if name == "memory_token":  # include a preceding `extern`
                    m = re.search(rb"extern\s+$", self.src[max(0, start - 16) : start])
                    start -= len(m.group(0)) if m else 0
                self.add(start, node.end_byte, "memory_space")

    def _calls(self) -> None:
        self.sync_starts: list[int] = []
        self.data_calls: list[tuple[int, int]] = []
        for call, callee in self.calls:
            text = self.text(*rng(callee))
            category = classify_call(text, self.cg_names)
            if category is None:
                continue
            if category == "thread_index":  # a cooperative-groups rank/size: also an index seed
                kind = cg_seed_kind(text, self.cg_names)
                obj = callee.child_by_field_name("argument")
                if kind and obj is not None:
                    self.cg_seed_at[obj.start_byte] = kind
            if category == "intrinsic_math":  # the name; its arguments are ordinary math
                self.add(callee.start_byte, callee.end_byte, category)
            elif category == "launch_config":
                fn = self.func_at(call.start_byte)
                if fn is None or not fn.device:
                    self.add(call.start_byte, call.end_byte, category)
            else:
                self.add(call.start_byte, call.end_byte, category)
                if category == "sync":
                    self.sync_starts.append(call.start_byte)
                elif category in ("atomic", "warp_intrinsic"):
                    self.data_calls.append(rng(call))
        self.sync_starts.sort()
        self.data_calls.sort()
        self.data_call_starts = [s for s, _ in self.data_calls]

    # ---- derived indices and their uses -----------------------------------------------------
    def _derive(self) -> None:
        """Fill `_Function.derived` by a fixed point over the index-capable definitions."""
        types: dict[tuple[int, str], str] = {}  # (function, variable) -> "int" | "ptr" | "data"
        for name_node, typ in self.params:
            fn = self.func_at(name_node.start_byte)
            name, kind = _declared(self.text(*rng(name_node)), typ)
            if fn is not None and name:
                types[fn.start, name] = kind
        self.var_defs: list[_Def] = []
        for def_node, name_node, value, typ in self.defs:
            fn = self.func_at(def_node.start_byte)
            if fn is None or not fn.device:
                continue
            if typ is not None:
                name, kind = _declared(self.text(*rng(name_node)), typ)
                types[fn.start, name] = kind
                compound = False
            else:
                name = self.text(*rng(name_node))
                kind = types.get((fn.start, name), "data")
                compound = self.src[name_node.end_byte : value.start_byte].strip() != b"="
            if name and kind != "data":
                self.var_defs.append(
                    _Def(
                        fn,
                        def_node.start_byte,
                        def_node.end_byte,
                        name,
                        value.start_byte,
                        value.end_byte,
                        kind == "int",
                        compound,
                    )
                )
        for _ in range(6):
            changed = False
            for d in self.var_defs:
                kind = self.value_kind(d.value_start, d.value_end, d.fn.derived, loads=d.loads)
                if kind and d.fn.derived.get(d.name) not in ("pos", kind):
                    d.fn.derived[d.name] = kind
                    changed = True
            if not changed:
                break

    def _index_math(self) -> None:
        for d in self.var_defs:
            derived = d.fn.derived
            if d.name in derived and (
                (d.compound and derived[d.name] == "pos") or self.value_kind(d.value_start, d.value_end, derived, loads=d.loads)
            ):
                self.add(d.start, d.end, "index_math")
        for node in self.cap("index"):
            fn = self.func_at(node.start_byte)
            if fn is not None and fn.device and self.value_kind(*rng(node), fn.derived):
                self.add(node.start_byte, node.end_byte, "index_math")
        last_end = -1
        for node in self.cap("arith"):
            s, e = rng(node)
            if e <= last_end:
                continue  # inside an outer arithmetic expression already considered
            fn = self.func_at(s)
            if fn is None or not fn.device or self._in_cond(s, e):
                continue
            last_end = e
            if self.value_kind(s, e, fn.derived):
                self.add(s, e, "index_math")

    def _in_cond(self, s: int, e: int) -> bool:
        k = bisect.bisect_right(self.cond_starts, s) - 1
        return k >= 0 and e <= self.cond_union[k][1]

    def _guards(self) -> None:
        self.guard_conds: set[tuple[int, int]] = set()
        for node in self.cap("cond"):
            fn = self.func_at(node.start_byte)
            if fn is None or self.value_kind(*rng(node), fn.derived) != "pos":
                continue
            self.guard_conds.add(rng(node))
            if node.type == "parenthesized_expression" and node.named_child_count == 1:
                node = node.named_children[0]
            self.add(node.start_byte, node.end_byte, "bounds_guard")
        for node in self.early:
            cond = node.child_by_field_name("condition")
            value = cond.child_by_field_name("value") if cond is not None else None
            if value is not None and rng(value) in self.guard_conds:
                self.add(node.start_byte, node.end_byte, "bounds_guard")

    def _loops(self) -> None:
        for node in self.cap("for"):
            fn = self.func_at(node.start_byte)
            body = node.child_by_field_name("body")
            if fn is None or not fn.device or body is None:
                continue
            init = node.child_by_field_name("initializer")
            update = node.child_by_field_name("update")
            update_text = self.text(*rng(update)) if update is not None else ""
            init_text = self.text(*rng(init)) if init is not None else ""
            m = re.search(r"(\w+)\s*=(?!=)", init_text) or re.search(r"\w+", update_text)
            var = m.group(1) if m and m.lastindex else (m.group(0) if m else "")
            strided = (
                update is not None
                and fn.derived.get(var) == "pos"
                and self.value_kind(*rng(update), fn.derived, exclude=var) is not None
            )
            k = bisect.bisect_left(self.sync_starts, body.start_byte)
            has_sync = k < len(self.sync_starts) and self.sync_starts[k] < body.end_byte
            if strided or has_sync or _HALVING_RE.search(update_text) or _STEP_RE.search(update_text):
                self.add(node.start_byte, self._header_end(body.start_byte), "loop_structure")
        for node, cond, body in self.whiles:
            if rng(cond) in self.guard_conds and (fn := self.func_at(node.start_byte)) and fn.device:
                self.add(node.start_byte, self._header_end(body.start_byte), "loop_structure")

    def _header_end(self, body_start: int) -> int:
        return len(self.src[:body_start].rstrip())

    # ---- launch configuration -------------------------------------------------------------
    def _launch_config(self) -> None:
        names: dict[int | None, set[str]] = {}

        def note_direct(node: Node) -> None:
            scope = self.func_at(node.start_byte)
            for child in node.named_children:
                if child.type == "identifier":
                    names.setdefault(scope.start if scope else None, set()).add(self.text(*rng(child)))

        for node in self.cap("launch"):
            note_direct(node)
        dim3_ranges = [rng(n) for n in self.dim3_decls]
        for def_node, _name, value, _typ in self.defs:
            if any(s <= def_node.start_byte < e for s, e in dim3_ranges) and value.type == "argument_list":
                note_direct(value)
        for node in self.cap("div"):
            fn = self.func_at(node.start_byte)
            if fn is not None and fn.device:
                continue
            m = _CEIL_DIV_RE.fullmatch(self.text(*rng(node)))
            if m and (m.group(2) == m.group(4) if m.group(3) else _is_ceil_const(m.group(2), m.group(4))):
                self.add(node.start_byte, node.end_byte, "launch_config")
                if re.fullmatch(r"\w+", m.group(4)):
                    names.setdefault(fn.start if fn else None, set()).add(m.group(4))
        for _ in range(4):
            grew = False
            for def_node, name_node, value, _typ in self.defs:
                fn = self.func_at(def_node.start_byte)
                scope = fn.start if fn else None
                wanted = names.get(scope, set()) | names.get(None, set()) if fn else set().union(*names.values())
                name = self.text(*rng(name_node)).strip(" *&")
                if name in wanted:
                    self.add(def_node.start_byte, def_node.end_byte, "launch_config")
                    if value.type == "identifier":
                        grew |= self._add_name(names, scope, self.text(*rng(value)))
            if not grew:
                break
        wanted_all = set().union(*names.values()) if names else set()
        for node in self.cap("define"):
            text = self.text(*rng(node))
            m = _DEFINE_NAME_RE.match(text)
            if m and m.group(1) in wanted_all:
                self.add(node.start_byte, node.start_byte + len(text.rstrip().encode()), "launch_config")

    @staticmethod
    def _add_name(names: dict[int | None, set[str]], scope: int | None, name: str) -> bool:
        bucket = names.setdefault(scope, set())
        if name in bucket:
            return False
        bucket.add(name)
        return True

    # ---- output ---------------------------------------------------------------------------
    def _to_chars(self, out: CodeTags) -> None:
        limit = self.code_bytes  # bytes past it are braces added for parsing
        table = byte_to_char(self.code, self.src[:limit])
        if table is None:
            self.to_char = conv = lambda b: b if b < limit else limit
        else:
            self.to_char = conv = lambda b: table(min(b, limit))
        if table is None and not self.unclosed:
            spans = {t for t in self.spans if t[1] > t[0]}
        else:
            spans = {(conv(s), conv(e), c) for s, e, c in self.spans if e > s}
        for node in outermost(self.cap("error")) + self.cap("macro"):
            spans.update(lexical_spans(self.code, conv(node.start_byte), conv(node.end_byte)))
        out.spans = drop_contained(spans)

    def _statements(self, out: CodeTags) -> None:
        skip = {rng(n) for n in self.cap("for_init")}
        launches = sorted(rng(n) for n in self.cap("launch"))
        stack: list[int] = []
        conv = self.to_char
        for node in self.cap("statement"):
            s, e = rng(node)
            fn = self.func_at(s)
            if fn is None or s < fn.body_start or (s, e) in skip:
                continue
            while stack and stack[-1] <= s:
                stack.pop()
            kind = _STATEMENT_KIND.get(node.type, "other")
            if kind == "expression":
                k = bisect.bisect_left(launches, (s, 0))
                if k < len(launches) and launches[k][1] <= e:
                    kind = "launch"
            out.statements.append((conv(s), conv(e), kind, len(stack)))
            stack.append(e)

    def _errors(self, out: CodeTags) -> None:
        problems = []
        for node in outermost(self.cap("error")):
            snippet = self.text(*rng(node)).strip().split("\n")[0][:40]
            problems.append((node.start_byte, f"syntax error at {snippet!r}" if snippet else "syntax error"))
        problems += [(n.start_byte, f"missing {n.type!r}") for n in self.cap("missing")]
        problems.sort()
        if self.unclosed > 0:
            problems.insert(
                0,
                (
                    len(self.code.rstrip().encode("utf-8", "surrogatepass")),
                    f"the code ends with {self.unclosed} unclosed '{{' (closed at the end to parse the rest)",
                ),
            )
        out.error_count = len(problems)
        out.errors = [(self.to_char(s), msg) for s, msg in problems[:5]]


def _declared(declarator: str, typ: str) -> tuple[str, str]:
    """(variable name, "int" | "ptr" | "data") of a declarator text and its type text."""
    m = re.search(r"(\w+)\s*$", declarator)
    if m is None or "[" in declarator or "(" in declarator:
        return "", "data"
    if "*" in declarator or "&" in declarator:
        return m.group(1), "ptr"
    typ = typ.strip()
    if _INDEX_TYPE_RE.fullmatch(typ):
        return m.group(1), "ptr" if typ.endswith("auto") else "int"
    return m.group(1), "data"


def _is_ceil_const(addend: str, divisor: str) -> bool:
    try:
        return int(addend, 0) == int(divisor, 0) - 1
    except ValueError:
        return False
