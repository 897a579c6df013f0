"""Evaluation metrics: compile rate, correctness rate, unbiased pass@k, and their tables.

    pass_at_k(n=10, c=3, k=1)        # 0.3
    summarise(results_frame, by=["method", "level"])   # one row per group

pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models
Trained on Code": with n samples of which c are correct, 1 - C(n-c, k) / C(n, k), averaged
over tasks; for k > n it is undefined and reported as NaN. Speedups are only meaningful on a
GPU (`cuda` backend) and are left out of CPU results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) is correct."""
    if n < 0 or c < 0 or c > n or k < 1:
        raise ValueError(f"pass_at_k(n={n}, c={c}, k={k}): need 0 <= c <= n and k >= 1")
    if k > n:
        return float("nan")
    if n - c < k:
        return 1.0
    # the product form avoids huge binomials: C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k_table(frame: pd.DataFrame, ks: Sequence[int] = (1, 5, 10), by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean pass@k over tasks, per group. `frame` has one row per candidate with columns
    task_id, correct (bool) and the `by` columns."""
    if frame.empty:
        return pd.DataFrame(columns=[*by, *[f"pass@{k}" for k in ks]])
    keys = [*by, "task_id"]
    per_task = frame.groupby(keys, dropna=False)["correct"].agg(n="size", c="sum").reset_index()
    for k in ks:
        per_task[f"pass@{k}"] = [pass_at_k(int(n), int(c), k) for n, c in zip(per_task["n"], per_task["c"])]
    cols = [f"pass@{k}" for k in ks]
    if not by:
        return per_task[cols].mean().to_frame().T
    return per_task.groupby(list(by), dropna=False)[cols].mean().reset_index()


def summarise(frame: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per group: candidates, tasks, compile rate, correctness rate and the count of each status."""
    if frame.empty:
        return pd.DataFrame(columns=[*by, "candidates", "tasks", "compile_rate", "correct_rate"])
    groups = frame.groupby(list(by), dropna=False) if by else [((), frame)]
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row.update(candidates=len(g), tasks=g["task_id"].nunique(), compile_rate=float(g["compiled"].mean()),
                   correct_rate=float(g["correct"].mean()), reward_hack_rate=float((g["status"] == "reward_hack").mean()))
        for status, count in g["status"].value_counts().items():
            row[f"n_{status}"] = int(count)
        rows.append(row)
    out = pd.DataFrame(rows).fillna(0)
    return out


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a rate: honest error bars for small suites."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At 0 or n successes the bound is exactly 0 or 1; centre - half only rounds to it (6.9e-18 at 0 of 27).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def compare_runs(frame: pd.DataFrame, run_a: int, run_b: int) -> pd.DataFrame:
    """Task by task (first sample of each): both statuses and what changed from A to B
    ("fixed": wrong in A, correct in B; "broken": the reverse; "same" otherwise)."""
    cols = ["task_id", "level", "family", "status", "correct"]
    a = frame[(frame["run_id"] == run_a) & (frame["sample"] == 0)][cols]
    b = frame[(frame["run_id"] == run_b) & (frame["sample"] == 0)][["task_id", "status", "correct"]]
    merged = a.merge(b, on="task_id", how="outer", suffixes=("_a", "_b"))
    ca = merged["correct_a"].fillna(False).astype(bool)
    cb = merged["correct_b"].fillna(False).astype(bool)
    merged["change"] = np.where(~ca & cb, "fixed", np.where(ca & ~cb, "broken", "same"))
    return merged.sort_values(["change", "task_id"], key=lambda s: s.map({"fixed": 0, "broken": 1, "same": 2}) if s.name == "change" else s)


def speedups(frame: pd.DataFrame, ps: Sequence[float] = (0.0, 1.0, 1.5, 2.0)) -> dict[str, float]:
    """GPU runs only (rows with runtimes): geometric-mean speedup of correct candidates over
    the reference, and KernelBench's fast_p: the share of tasks whose first candidate is
    correct and more than p times faster than the reference."""
    if "runtime_ms" not in frame or frame["runtime_ms"].isna().all():
        return {}
    first = frame[frame["sample"] == 0]
    ok = first[first["correct"] & first["runtime_ms"].gt(0) & first["ref_runtime_ms"].gt(0)]
    ratio = ok["ref_runtime_ms"] / ok["runtime_ms"]
    out = {"speedup_geomean": float(np.exp(np.log(ratio).mean())) if len(ratio) else float("nan")}
    n = first["task_id"].nunique()
    for p in ps:
        out[f"fast_{p:g}"] = float((ratio > p).sum() / n) if n else float("nan")
    return out
