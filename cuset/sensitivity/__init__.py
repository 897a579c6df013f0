"""CUDA-sensitive spans of a sample, found from the tree-sitter-cuda syntax tree.

A sample is plain ``.cu`` text, a markdown answer with fenced ``cuda``/``cpp``/``c++``/``cu``
blocks, or Python source whose string literals hold CUDA (KernelBench ``load_inline``
solutions). `tag` finds the code, parses each piece, and returns spans in the sample's own
character offsets, one of `CATEGORIES` each (see DESIGN.md, "CUDA sensitivity"; the rules
are in `cuset.sensitivity.syntax`), plus the statements of every function body and notes on
whatever could not be parsed. Nothing happens at import time; the parser starts on first use.

    >>> from cuset.sensitivity import tag
    >>> r = tag("__global__ void k(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] = 0; }")
    >>> [(s.category, s.text) for s in r.spans][:3]
    [('qualifier', '__global__'), ('index_math', 'i = threadIdx.x'), ('thread_index', 'threadIdx.x')]

Try it on a file: ``python -m cuset.sensitivity path/to/kernel.cu``. Accuracy against the
hand-labelled kernels and throughput: ``python -m benchmarks.tagging``.
"""

from __future__ import annotations

import re

from cuset.sensitivity.sources import (
    Source,
    detect_format,
    line_col,
    markdown_sources,
    python_sources,
)
from cuset.sensitivity.types import (
    CATEGORIES,
    CATEGORY_BIT,
    ORIGINS,
    STATEMENT_KINDS,
    CodeBlock,
    Span,
    Statement,
    TagResult,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_BIT",
    "FORMATS",
    "ORIGINS",
    "STATEMENT_KINDS",
    "CodeBlock",
    "Span",
    "Statement",
    "TagResult",
    "tag",
]

_CONTROL_RE = re.compile("[\x01-\x08\x0e-\x1f\x7f\ufffd]")
FORMATS: tuple[str, ...] = ("auto", "cuda", "markdown", "python")
_MAX_ERROR_NOTES = 5


def tag(text: str, fmt: str = "auto") -> TagResult:
    """Find the CUDA-sensitive spans of one sample.

    ``fmt`` is ``"auto"`` (detect: a code fence means markdown, top-level ``import``/``def``/
    ``class`` lines mean Python, anything else is CUDA) or one of ``"cuda"``, ``"markdown"``,
    ``"python"``. Malformed, empty or binary-looking text never raises: the result carries
    what could be found and ``notes`` saying where parsing failed (sample line and column).
    """
    if not isinstance(text, str):
        raise TypeError(
            f"tag() takes the sample as str, got {type(text).__name__}; decode bytes first (e.g. data.decode('utf-8', 'replace'))"
        )
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    result = TagResult(text=text)
    if not text.strip():
        result.notes.append("empty input: nothing to tag")
        return result
    if _looks_binary(text):
        result.notes.append("binary-looking input (NUL or control characters): not tagged")
        return result
    if fmt == "auto":
        fmt = detect_format(text)
    if fmt == "markdown":
        sources, notes = markdown_sources(text)
    elif fmt == "python":
        sources, notes = python_sources(text)
    else:
        sources, notes = [Source(text, 0, len(text), "cuda")], []
    result.notes.extend(notes)
    if not sources:
        what = "code block" if fmt == "markdown" else "string literal"
        result.notes.append(f"{fmt}: no {what} looks like CUDA/C++; nothing tagged")
    for source in sources:
        _tag_source(result, source)
    result.spans.sort(key=lambda s: (s.start, s.end, CATEGORIES.index(s.category)))
    return result


def _tag_source(result: TagResult, source: Source) -> None:
    from cuset.sensitivity.syntax import tag_code

    text = result.text
    result.blocks.append(CodeBlock(source.start, source.end, source.origin))
    try:
        tags = tag_code(source.code)
    except Exception as exc:  # untrusted input must not take a data-set pass down
        line, col = line_col(text, source.start)
        result.notes.append(
            f"line {line}, column {col}: tagging this {source.origin} block "
            f"failed ({type(exc).__name__}: {exc}); no spans from it"
        )
        return
    to_sample = source.to_sample
    for s, e, category in tags.spans:
        start, end = to_sample(s), to_sample(e)
        result.spans.append(Span(start, end, category, text[start:end]))
    for s, e, kind, depth in tags.statements:
        result.statements.append(Statement(to_sample(s), to_sample(e), kind, depth))
    for index, message in tags.errors:
        line, col = line_col(text, to_sample(index))
        result.notes.append(f"line {line}, column {col}: {message}")
    if tags.error_count > len(tags.errors):
        line, _ = line_col(text, source.start)
        result.notes.append(
            f"... and {tags.error_count - len(tags.errors)} more parse errors in "
            f"the {source.origin} block starting at line {line}"
        )


def _looks_binary(text: str) -> bool:
    """NUL bytes, or over 10% control/replacement characters in the first 8 KiB."""
    head = text[:8192]
    return "\x00" in head or len(_CONTROL_RE.findall(head)) > 0.1 * len(head)
