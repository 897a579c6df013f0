"""The sample record every stage reads, and its JSONL schema.

One sample is one instruction and the response a model should learn to write. In the bundled
corpus the response is a KernelBench-format solution (a Python module whose `ModelNew` compiles
its CUDA with `torch.utils.cpp_extension.load_inline`); user data sets may hold plain `.cu`
text or markdown with fenced CUDA blocks instead. The JSONL schema (one object per line):

    id           str, required, unique in the data set
    instruction  str, required, the user turn (may be empty for pure-code samples)
    response     str, required, non-empty, the assistant turn that is scored and trained on
    family       str, optional, op family ("elementwise", "reduction", ...)
    style        list[str], optional, implementation styles ("guarded", "grid-stride", ...)
    task         str, optional, the KernelBench reference module (Model, get_inputs,
                 get_init_inputs) the response solves; lets the evaluator check it
    meta         dict, optional, anything else (kept, never interpreted)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

REQUIRED_FIELDS = ("id", "instruction", "response")


@dataclass(frozen=True)
class Sample:
    """One instruction -> response pair. `response` is what gets scored and trained on."""

    id: str
    instruction: str
    response: str
    family: str = ""
    style: tuple[str, ...] = ()
    task: str = ""
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The JSONL object for this sample (optional fields left out when empty)."""
        out = asdict(self)
        out["style"] = list(self.style)
        return {k: v for k, v in out.items() if k in REQUIRED_FIELDS or v}
