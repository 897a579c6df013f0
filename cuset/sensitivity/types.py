"""The records `cuset.sensitivity.tag` returns: spans, statements, code blocks, the result.

Every offset here is a Python ``str`` index into the ORIGINAL sample text (not a byte offset,
not an offset into a decoded Python string literal), half-open ``[start, end)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CATEGORIES: tuple[str, ...] = (
    "qualifier",
    "memory_space",
    "thread_index",
    "index_math",
    "bounds_guard",
    "sync",
    "atomic",
    "warp_intrinsic",
    "launch_config",
    "memory_api",
    "intrinsic_math",
    "loop_structure",
)
CATEGORY_BIT: dict[str, int] = {name: 1 << i for i, name in enumerate(CATEGORIES)}

STATEMENT_KINDS: tuple[str, ...] = (
    "for",
    "while",
    "do",
    "if",
    "return",
    "declaration",
    "expression",
    "launch",
    "other",
)

ORIGINS: tuple[str, ...] = ("cuda", "markdown", "load_inline")


@dataclass(frozen=True)
class Span:
    """A CUDA-sensitive character range ``[start, end)`` of the sample, with its category."""

    start: int
    end: int
    category: str
    text: str


@dataclass(frozen=True)
class Statement:
    """A statement inside a function body; ``depth`` 0 means directly in the body."""

    start: int
    end: int
    kind: str
    depth: int


@dataclass(frozen=True)
class CodeBlock:
    """Where CUDA/C++ was found: the whole text, a fenced markdown block or a Python string."""

    start: int
    end: int
    origin: str


@dataclass
class TagResult:
    """Everything `tag` found in one sample; ``notes`` say what could not be done and where."""

    text: str
    spans: list[Span] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    blocks: list[CodeBlock] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def by_category(self) -> dict[str, list[Span]]:
        """Spans grouped by category; every category is a key, in `CATEGORIES` order."""
        out: dict[str, list[Span]] = {name: [] for name in CATEGORIES}
        for span in self.spans:
            out[span.category].append(span)
        return out

    def char_mask(self) -> np.ndarray:
        """uint16 [len(text)]: per character, the OR of `CATEGORY_BIT` over the spans covering it."""
        mask = np.zeros(len(self.text), dtype=np.uint16)
        for span in self.spans:
            mask[span.start : span.end] |= np.uint16(CATEGORY_BIT[span.category])
        return mask
