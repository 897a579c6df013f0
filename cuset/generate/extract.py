"""The solution module in a model's reply: the Python code that defines `ModelNew`.

Replies come in three shapes: a fenced block (```python, ```py or a bare ```), several blocks
(prose, a CUDA listing, then the module), or the bare module with no fence at all, which is
what the training corpus teaches (its responses are plain Python). A reply cut at
max_new_tokens may end inside an unterminated fence. `extract_code` takes, in order of
preference, a block that defines ModelNew (Python-tagged or untagged before other languages,
terminated before unterminated, longer before shorter), else the bare reply from its first
line of code when it defines ModelNew. Text a model adds after a bare module (a second try,
chat remnants) is cut at the last top-level line boundary where the code still parses.

Nothing here raises on odd input: the result carries the code ("" when nothing usable) and a
reason.

    extract_code("```python\\nclass ModelNew: ...\\n```").code
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

PYTHON_TAGS = ("", "python", "py", "python3", "py3")
FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^`]*$")
_MODEL_NEW = re.compile(r"^[ \t]*class[ \t]+ModelNew\b", re.MULTILINE)
# A line that can open a Python module (not prose): imports, definitions, decorators,
# comments, docstrings and assignments.
_CODE_START = re.compile(r"^(import\s|from\s+[\w.]+\s+import\s|class\s|def\s|async\s+def\s|@|#|\"\"\"|'''|[A-Za-z_][\w.]*\s*(:[^=]+)?=[^=])")


@dataclass(frozen=True)
class Extraction:
    """What `extract_code` found.

    code       the module ("" when nothing usable)
    method     "fence", "open_fence" (unterminated, e.g. a truncated reply), "bare" or "none"
    reason     why the code is "" or what to know about it (dropped text, a syntax error); "" when clean
    syntax_ok  the code parses as Python
    n_blocks   fenced blocks in the reply
    """

    code: str
    method: str
    reason: str = ""
    syntax_ok: bool = False
    n_blocks: int = 0


@dataclass(frozen=True)
class _Block:
    tag: str
    text: str
    terminated: bool


def fenced_blocks(reply: str) -> list[_Block]:
    """Fenced blocks in order; a fence still open at the end runs to the end of the reply."""
    blocks: list[_Block] = []
    lines = reply.split("\n")
    opened: tuple[str, str, int] | None = None
    for number, line in enumerate(lines):
        match = FENCE.match(line)
        if opened is None:
            if match:
                opened = (match["fence"], match["tag"].lower(), number + 1)
        elif match and not match["tag"] and match["fence"][0] == opened[0][0] and len(match["fence"]) >= len(opened[0]):
            blocks.append(_Block(opened[1], "\n".join(lines[opened[2] : number]), True))
            opened = None
    if opened is not None:
        blocks.append(_Block(opened[1], "\n".join(lines[opened[2] :]), False))
    return blocks


def _parses(code: str) -> str:
    """"" when `code` parses, else the syntax error in a few words."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:  # NUL bytes, absurd nesting
        return type(exc).__name__
    return ""


def _finish(code: str, method: str, n_blocks: int, notes: list[str]) -> Extraction:
    code = code.strip("\n") + "\n"
    error = _parses(code)
    if error:
        notes.append(f"the code does not parse ({error})")
    return Extraction(code, method, "; ".join(notes), not error, n_blocks)


def _trim_trailing_text(lines: list[str], model_new_line: int) -> tuple[list[str], bool]:
    """The longest prefix of `lines` ending at a top-level boundary after ModelNew that parses;
    (lines, False) when the whole text parses or no prefix does."""
    if not _parses("\n".join(lines)):
        return lines, False
    for end in range(len(lines) - 1, model_new_line, -1):
        line = lines[end]
        if line[:1].strip() and not _parses("\n".join(lines[:end])):
            return lines[:end], True
    return lines, False


def _bare(reply: str, n_blocks: int) -> Extraction:
    lines = reply.split("\n")
    match = _MODEL_NEW.search(reply)
    if match is None:
        return Extraction("", "none", "no fenced code block and no class ModelNew in the reply", False, n_blocks)
    model_new_line = reply.count("\n", 0, match.start())
    start = next((i for i in range(model_new_line + 1) if _CODE_START.match(lines[i])), model_new_line)
    notes = ["text before the code dropped"] if any(line.strip() for line in lines[:start]) else []
    kept, trimmed = _trim_trailing_text(lines[start:], model_new_line - start)
    if trimmed:
        notes.append("text after the code dropped")
    return _finish("\n".join(kept), "bare", n_blocks, notes)


def extract_code(reply: str) -> Extraction:
    """The Python module defining ModelNew in `reply` (see the module docstring)."""
    if not reply.strip():
        return Extraction("", "none", "the reply is empty")
    blocks = fenced_blocks(reply)
    with_model_new = [b for b in blocks if _MODEL_NEW.search(b.text)]
    if with_model_new:
        best = max(with_model_new, key=lambda b: (b.tag in PYTHON_TAGS, b.terminated, len(b.text)))
        notes = [] if best.terminated else ["the code block is not closed (the reply may be cut short)"]
        return _finish(best.text, "fence" if best.terminated else "open_fence", len(blocks), notes)
    if blocks:
        # Fences without ModelNew; the module might still sit outside them (prose-fenced CUDA).
        outside = _bare(reply, len(blocks))
        if outside.code and outside.syntax_ok:
            return outside
        cut = "" if all(b.terminated for b in blocks) else " (the reply may be cut short)"
        return Extraction("", "none", f"{len(blocks)} code block(s), none defines class ModelNew{cut}", False, len(blocks))
    return _bare(reply, 0)
