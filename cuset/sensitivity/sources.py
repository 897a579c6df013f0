"""Find the CUDA/C++ code inside a sample: plain text, fenced markdown blocks, Python strings.

Each piece becomes a `Source`: the code text handed to the parser, where it sits in the
sample, and a map from code indices back to sample indices. Python string literals are
located with `tokenize` and their escapes decoded (``\\n``, ``\\"``, octal/hex/unicode,
line continuations; ``{{``/``}}`` in f-strings), so the parser sees what ``load_inline``
would compile while every span still lands on the sample's own characters.
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata
from dataclasses import dataclass

_FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^\n`]*)$", re.M)
_PYTHON_RE = re.compile(
    r"^(?:import\s+\w|from\s+[\w.]+\s+import\b|def\s+\w+\s*\(|class\s+\w+\s*(?:\([^\n]*\))?\s*:)",
    re.M,
)
_STRONG_CUDA_RE = re.compile(
    r"__global__|__device__|threadIdx|blockIdx|<<<|__shared__|cudaMalloc|cudaMemcpy|#include"
    r"|torch::|at::Tensor|PYBIND11_MODULE|\bdim3\b"
)
_C_LIKE_RE = re.compile(r"\b(?:void|int|float|double|auto|const|return|struct|template)\b")
_CUDA_LANGS = frozenset({"", "cuda", "cu", "cuh", "cpp", "c++", "cxx", "cc", "c", "h", "hpp", "hxx", "nvcc", "ptx"})
_PYTHON_LANGS = frozenset({"python", "py", "python3", "py3"})
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


@dataclass
class Source:
    """Code to parse and how to map its indices back: ``positions[i]`` is the sample index of
    code char ``i`` (``positions[len(code)]`` is the end); ``None`` means ``start + i``."""

    code: str
    start: int
    end: int
    origin: str
    positions: list[int] | None = None

    def to_sample(self, i: int) -> int:
        """Sample index of code index ``i`` (``0 <= i <= len(code)``)."""
        return self.start + i if self.positions is None else self.positions[i]


def looks_like_cuda(code: str) -> bool:
    """True when a text is plausibly CUDA/C++ source (used for Python strings and bare fences)."""
    if ";" not in code and "{" not in code:
        return False  # prose (a docstring naming threadIdx) has neither
    if _STRONG_CUDA_RE.search(code):
        return True
    return ";" in code and ("{" in code or "(" in code) and bool(_C_LIKE_RE.search(code))


def detect_format(text: str) -> str:
    """``"markdown"`` (has a code fence), ``"python"`` (top-level Python lines) or ``"cuda"``."""
    if _FENCE_OPEN_RE.search(text):
        return "markdown"
    if _PYTHON_RE.search(text):
        return "python"
    return "cuda"


def line_col(text: str, index: int) -> tuple[int, int]:
    """1-based (line, column) of ``text[index]``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def markdown_sources(text: str) -> tuple[list[Source], list[str]]:
    """Sources from fenced blocks: CUDA/C++ fences, bare fences that look like CUDA, and the
    string literals of ``python`` fences. Notes say which fence was left open."""
    sources: list[Source] = []
    notes: list[str] = []
    pos = 0
    while True:
        m = _FENCE_OPEN_RE.search(text, pos)
        if m is None:
            break
        fence = m.group(1)
        info = m.group(2).strip().lower().lstrip("{.").rstrip("}")
        lang = info.split()[0] if info else ""
        body_start = m.end() + 1 if m.end() < len(text) else m.end()
        close_re = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*\r?$", re.M)
        close = close_re.search(text, body_start)
        if close is None:
            body_end = len(text)
            line, _ = line_col(text, m.start())
            notes.append(f"markdown: the fence opened at line {line} is not closed; its block runs to the end of the text")
            pos = len(text)
        else:
            body_end = close.start()
            pos = close.end()
        body = text[body_start:body_end]
        if lang in _PYTHON_LANGS:
            first_line = line_col(text, body_start)[0]
            inner, inner_notes = python_sources(body, body_start, first_line)
            sources.extend(inner)
            notes.extend(inner_notes)
        elif (lang in _CUDA_LANGS and (lang or looks_like_cuda(body))) or _STRONG_CUDA_RE.search(body):
            sources.append(Source(body, body_start, body_end, "markdown"))
    return sources, notes


def python_sources(text: str, base: int = 0, first_line: int = 1) -> tuple[list[Source], list[str]]:
    """Sources from the string literals of Python source that look like CUDA/C++; ``text``
    sits at sample index ``base``, on sample line ``first_line``."""
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer("\n", text))
    sources: list[Source] = []
    notes: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.STRING:
                continue
            start = line_starts[tok.start[0] - 1] + tok.start[1]
            end = line_starts[tok.end[0] - 1] + tok.end[1]
            source = _string_source(text[start:end], base + start)
            if source is not None:
                sources.append(source)
    except (tokenize.TokenError, SyntaxError) as exc:
        where = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], tuple) else None
        line = f"line {where[0] + first_line - 1}: " if where and isinstance(where[0], int) else ""
        notes.append(
            f"python: tokenize stopped at {line}{exc.args[0] if exc.args else exc}; "
            "string literals after that point were not searched"
        )
    return sources, notes


def _string_source(literal: str, base: int) -> Source | None:
    """A Source for one Python string token (prefix + quotes + body), or None if not CUDA."""
    q = 0
    while q < len(literal) and literal[q] not in "'\"":
        q += 1
    prefix = literal[:q].lower()
    quote = literal[q : q + 3] if literal[q : q + 3] in ('"""', "'''") else literal[q : q + 1]
    body_start = q + len(quote)
    body_end = len(literal) - len(quote)
    if body_end < body_start:
        return None
    body = literal[body_start:body_end]
    if not looks_like_cuda(body):
        return None
    raw, fmt = "r" in prefix, "f" in prefix
    start = base + body_start
    if (raw or "\\" not in body) and not (fmt and ("{{" in body or "}}" in body)):
        return Source(body, start, start + len(body), "load_inline")
    code, positions = decode_string_body(body, start, raw=raw, fstring=fmt)
    return Source(code, start, start + len(body), "load_inline", positions)


def decode_string_body(body: str, base: int, *, raw: bool = False, fstring: bool = False) -> tuple[str, list[int]]:
    """Decode a Python literal body as the interpreter would; ``positions`` maps each decoded
    char to ``base`` + its index in ``body`` (one extra entry for the end)."""
    out: list[str] = []
    pos: list[int] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if fstring and c in "{}" and body[i + 1 : i + 2] == c:
            out.append(c)
            pos.append(base + i)
            i += 2
            continue
        if c != "\\" or raw:
            out.append(c)
            pos.append(base + i)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        width, char = 2, None
        if nxt == "\n":
            i += 2
            continue
        if nxt in _SIMPLE_ESCAPES:
            char = _SIMPLE_ESCAPES[nxt]
        elif nxt and nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 : i + 4])
            assert digits is not None
            char, width = chr(int(digits.group(0), 8)), 1 + len(digits.group(0))
        elif nxt in ("x", "u", "U"):
            count = {"x": 2, "u": 4, "U": 8}[nxt]
            hexdigits = body[i + 2 : i + 2 + count]
            if len(hexdigits) == count and all(h in "0123456789abcdefABCDEF" for h in hexdigits):
                value = int(hexdigits, 16)
                char, width = (chr(value) if value <= 0x10FFFF else "\ufffd"), 2 + count
        elif nxt == "N" and body[i + 2 : i + 3] == "{":
            close = body.find("}", i + 3)
            if close > 0:
                try:
                    char = unicodedata.lookup(body[i + 3 : close])
                except KeyError:
                    char = "\ufffd"
                width = close + 1 - i
        if char is None:  # an unknown escape keeps its backslash, as Python does
            out.append("\\")
            pos.append(base + i)
            i += 1
            continue
        out.append(char)
        pos.append(base + i)
        i += width
    pos.append(base + n)
    return "".join(out), pos
