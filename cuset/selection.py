"""Data selection by region score: which samples the low-confidence sensitive regions say to train on.

A data set's samples are ranked by the CuSeT objective's region score r_i (cuset.objective:
sum over the sample's regions of kappa * size * (1 - mean p) / T_i, regions found on the
chosen model's scores) or by the sample weight w_i made from it, highest first (ties keep the
data set's order), and the top k (or a fraction) is written as JSONL: each line the sample as
cuset.data reads it, with `meta.cuset_select` = {rank, by, region_score, weight, model}. The
file is ordinary training data: `TrainConfig.data` takes it, and an experiment's
`select: {top: 0.5, by: region_score}` makes the runner write and train on one per model.

    cuset select bundled --top 0.5 --out top-half.jsonl --model smollm2-135m
    from cuset.selection import select_samples, write_selection
    rows = select_samples(samples, ScoreConfig(model="tiny"), top=0.5)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cuset.confidence import ScoreConfig, TokenTable
from cuset.data import Sample
from cuset.objective import ObjectiveConfig, compute

BY = ("region_score", "weight")


def selection_size(top: float, n: int) -> int:
    """How many of `n` samples `top` keeps: a fraction when 0 < top <= 1 (rounded up, at
    least one), a whole count when top > 1 (at most n)."""
    if not top > 0:
        raise ValueError(f"top={top}: give a fraction in (0, 1] (e.g. 0.5) or a count >= 2 (e.g. 32).")
    if top <= 1:
        return min(n, max(1, math.ceil(top * n - 1e-9)))
    if top != int(top):
        raise ValueError(f"top={top}: above 1 it is a count of samples; give a whole number (or a fraction in (0, 1]).")
    return min(n, int(top))


def rank(region_score: np.ndarray, weight: np.ndarray, by: str = "region_score") -> np.ndarray:
    """Sample indices [S], best first by `by` (descending; ties in data-set order)."""
    if by not in BY:
        raise ValueError(f"by={by!r}: rank by one of {', '.join(BY)}.")
    key = np.asarray(region_score if by == "region_score" else weight, dtype=np.float64)
    return np.argsort(-key, kind="stable")


def selection_rows(samples: Sequence[Sample], region_score: np.ndarray, weight: np.ndarray, top: float,
                   by: str = "region_score", model: str = "") -> list[dict[str, Any]]:
    """The chosen samples, best first: {rank (1-based), id, region_score, weight, by, model, sample}."""
    if len(samples) != len(region_score) or len(samples) != len(weight):
        raise ValueError(f"selection_rows: {len(samples)} samples, {len(region_score)} region scores, {len(weight)} weights; give one each.")
    if not samples:
        raise ValueError("selection_rows: the data set is empty.")
    order = rank(region_score, weight, by)[: selection_size(top, len(samples))]
    return [{"rank": k + 1, "id": samples[i].id, "region_score": float(region_score[i]), "weight": float(weight[i]),
             "by": by, "model": model, "sample": samples[i]} for k, i in enumerate(order)]


def select_samples(samples: Sequence[Sample], score: ScoreConfig | None = None, config: ObjectiveConfig | None = None,
                   top: float = 0.5, by: str = "region_score") -> list[dict[str, Any]]:
    """Score `samples` (cached), compute the objective's region scores and weights (method
    cuset), and return `selection_rows`."""
    from cuset.confidence import score_samples
    from cuset.sensitivity import tag

    samples = list(samples)
    score = score or ScoreConfig()
    selection_size(top, max(len(samples), 1))  # a bad `top` fails before any scoring
    rank(np.zeros(0), np.zeros(0), by)
    scores, stats = score_samples(samples, score)
    table = TokenTable.build(scores, [tag(s.response) for s in samples])
    result = compute(table, config or ObjectiveConfig(), "cuset")
    return selection_rows(samples, result.r, result.weights, top, by, stats["model"])


def selection_jsonl(rows: Sequence[dict[str, Any]]) -> str:
    """The selection as JSONL text: one sample a line, its scores in `meta.cuset_select`."""
    lines = []
    for row in rows:
        record = row["sample"].to_json()
        extra = {k: row[k] for k in ("rank", "by", "region_score", "weight", "model")}
        record["meta"] = {**record.get("meta", {}), "cuset_select": extra}
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def write_selection(rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Write the selection as JSONL (whole or not at all); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_text(selection_jsonl(rows), encoding="utf-8")
    tmp.replace(path)
    return path
