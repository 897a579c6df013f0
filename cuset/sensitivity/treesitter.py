"""The tree-sitter-cuda side of tagging: parser, compiled queries, byte-range helpers.

Everything is built on first use and cached (the parser per thread: parsers are not
thread-safe). The two queries find all candidate nodes in C in one traversal each; they use
no predicates (``#match?`` and friends run in Python per node and cost more than they
save), so names are filtered by the caller.
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Language, Node, Parser, Query

# One capture list per name (QueryCursor.captures): candidates that need no pairing.
BULK_QUERY = r"""
["__global__" "__device__" "__host__" "__forceinline__" "__noinline__" "__grid_constant__"] @qualifier
(launch_bounds) @qualifier
(type_qualifier ["__restrict__" "restrict"]) @qualifier
["__shared__" "__constant__" "__managed__"] @memory_token
(declaration (type_qualifier ["__shared__" "__constant__" "__managed__"])) @memory_decl
(identifier) @ident
(type_identifier) @type_ident
(kernel_call_syntax) @launch
(subscript_argument_list (_) @index)
(subscript_expression) @subscript
(argument_list (binary_expression operator: ["+" "-" "*" "/" "%" "<<" ">>" "&" "|" "^"]) @arith)
(return_statement (binary_expression operator: ["+" "-" "*" "/" "%" "<<" ">>" "&" "|" "^"]) @arith)
(binary_expression operator: "/") @div
(if_statement condition: (condition_clause value: (_) @cond))
(while_statement condition: (condition_clause value: (_) @cond))
(do_statement condition: (parenthesized_expression (_) @cond))
(for_statement condition: (_) @cond)
(conditional_expression condition: (_) @cond)
(for_statement initializer: (declaration) @for_init)
(for_statement) @for
(function_definition body: (compound_statement) @body)
[(expression_statement) (declaration) (if_statement) (for_statement) (for_range_loop)
 (while_statement) (do_statement) (return_statement) (switch_statement) (break_statement)
 (continue_statement) (goto_statement) (labeled_statement)] @statement
(preproc_arg) @macro
(preproc_def) @define
(ERROR) @error
(MISSING) @missing
"""
# Matches (QueryCursor.matches): candidates whose parts must stay together.
PAIRED_QUERY = r"""
(declaration type: (_) @type declarator: (init_declarator declarator: (_) @name value: (_) @value) @def)
(assignment_expression left: (identifier) @name right: (_) @value) @def
(parameter_declaration type: (_) @type declarator: (_) @name) @param
(call_expression function: (_) @callee) @call
(if_statement condition: (condition_clause value: (_) @cond)
  consequence: [(return_statement) (break_statement) (continue_statement)
                (compound_statement . [(return_statement) (break_statement) (continue_statement)] .)]
  ) @early
(while_statement condition: (condition_clause value: (_) @cond) body: (_) @body) @while
"""

_LOCAL = threading.local()


@functools.cache
def language() -> Language:
    """The tree-sitter-cuda language (loaded on first use)."""
    import tree_sitter_cuda

    return Language(tree_sitter_cuda.language())


@functools.cache
def queries() -> tuple[Query, Query]:
    """(bulk, paired) compiled queries."""
    return Query(language(), BULK_QUERY), Query(language(), PAIRED_QUERY)


def parser() -> Parser:
    """A tree-sitter-cuda parser for this thread."""
    p = getattr(_LOCAL, "parser", None)
    if p is None:
        p = _LOCAL.parser = Parser(language())
    return p


@dataclass
class CodeTags:
    """What one piece of code yields, in code ``str`` indices."""

    spans: list[tuple[int, int, str]] = field(default_factory=list)
    statements: list[tuple[int, int, str, int]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (index, message), first few
    error_count: int = 0


def rng(node: Node) -> tuple[int, int]:
    """The byte range of a node."""
    return node.start_byte, node.end_byte


def nested(ranges: list[tuple[int, int]], starts: list[int], start: int, end: int, s: int, e: int) -> bool:
    """Is ``[s, e)`` inside one of the sorted ``ranges`` that itself lies in ``[start, end)``?"""
    k = bisect.bisect_left(starts, start)
    while k < len(ranges) and ranges[k][0] <= s:
        if e <= ranges[k][1] <= end:
            return True
        k += 1
    return False


def union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges merged where they overlap."""
    out: list[tuple[int, int]] = []
    for s, e in ranges:
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def outermost(nodes: list[Node]) -> list[Node]:
    """Nodes not contained in another node of the list, in document order."""
    out: list[Node] = []
    last_end = -1
    for node in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
        if out and node.end_byte <= last_end:
            continue
        out.append(node)
        last_end = node.end_byte
    return out


def drop_contained(spans: set[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans without those lying inside another span of the same category."""
    kept: list[tuple[int, int, str]] = []
    reach: dict[str, int] = {}
    for s, e, c in sorted(spans, key=lambda t: (t[0], -t[1], t[2])):
        if e <= reach.get(c, -1):
            continue
        kept.append((s, e, c))
        reach[c] = e
    return kept


def byte_to_char(code: str, src: bytes) -> Callable[[int], int] | None:
    """Map from UTF-8 byte offsets of ``code`` to str indices; None when they coincide."""
    if len(src) == len(code):
        return None
    table = [0] * (len(src) + 1)
    b = 0
    for i, ch in enumerate(code):
        width = len(ch.encode("utf-8", "surrogatepass"))
        for k in range(width):
            table[b + k] = i
        b += width
    table[b] = len(code)
    return table.__getitem__
