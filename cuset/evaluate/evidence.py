"""Evidence for one candidate: its code coloured by the model's confidence, and its error line.

    html, info = candidate_heatmap(record, model="default")
    info["error_line_tokens"]     # tokens on the line the error names (None without one)
    info["low_confidence_share"]  # of those tokens, the share below p = 0.5

This is how the Results page shows a generated kernel: the same heatmap as the Confidence
page (cuset.heatmap), scored with the given model on the task's prompt, with the tokens of
the line named by the compiler, sanitizer or runtime outlined as a region, so one can see
whether failures sit inside low-confidence CUDA-sensitive code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuset import heatmap
from cuset.confidence import ScoreConfig, score_samples, token_categories
from cuset.data import Sample
from cuset.sensitivity import tag


def _line_span(text: str, line: int) -> tuple[int, int] | None:
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        return None
    start = sum(len(x) for x in lines[: line - 1])
    return start, start + len(lines[line - 1])


def candidate_heatmap(record: dict[str, Any], model: str = "default", prompt: str = "", high: float = 0.5) -> tuple[str, dict[str, Any]]:
    """HTML heatmap of `record["code"]` (a results row) and figures about its error line."""
    code = record.get("code") or ""
    if not code.strip():
        raise ValueError(f"task {record.get('task_id')} sample {record.get('sample')}: the reply held no code to show")
    sample = Sample(id=f"{record.get('task_id')}#{record.get('sample', 0)}", instruction=prompt, response=code)
    (scores,), _ = score_samples([sample], ScoreConfig(model=model, max_length=4096))
    tagged = tag(code, "python")
    bits, _, _ = token_categories(scores, tagged)
    marks, info = [], {"error_line_tokens": None, "low_confidence_share": None}
    line = record.get("error_line")
    span = _line_span(code, int(line)) if line is not None and line == line else None
    if span is not None:
        on_line = np.flatnonzero((scores.ends > span[0]) & (scores.starts < span[1]))
        if on_line.size:
            marks.append(heatmap.RegionMark(int(on_line[0]), int(on_line[-1]), f"error line {line}"))
            info["error_line_tokens"] = int(on_line.size)
            info["low_confidence_share"] = float(np.mean(scores.p[on_line] < high))
    title = f"{record.get('task_id')} sample {record.get('sample', 0)}: {record.get('status')}"
    from cuset.models import load_tokenizer

    html = heatmap.render(code, scores, bits, regions=marks, title=title, tokenizer=load_tokenizer(model)[0])
    info["mean_p"] = float(scores.p.mean()) if scores.p.size else None
    return html, info
