"""The "findings by model" paper figure, drawn from analysis/results/findings/findings.json
(written by `python -m analysis.findings`), so a fresh clone draws it without scoring.

    (a) share of tokens with p >= 0.5 (solid) and >= 0.9 (light) among CUDA-sensitive and other
        tokens, per model: the paper's first finding holds for a model when the sensitive bar
        is the taller one.
    (b) share of low-confidence sensitive tokens in regions of >= 2 tokens: observed (dot)
        against the permutation baseline (box over the permutations), with its p-value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuset.figures.draw import _new_figure, _style
from cuset.report import OTHER, SENSITIVE


def findings_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model: title, samples, the shares of finding (a), the test of finding (b)."""
    rows = []
    for entry in result["models"]:
        groups = {r["category"]: r for r in entry["confidence"]}
        c = entry["clustering"]
        rows.append({
            "model": entry["model"], "title": entry["title"], "samples": entry["samples"], "tokens": entry["tokens"],
            "sensitive_05": groups["any sensitive"]["share_ge_0.5"], "other_05": groups["not sensitive"]["share_ge_0.5"],
            "sensitive_09": groups["any sensitive"]["share_ge_0.9"], "other_09": groups["not sensitive"]["share_ge_0.9"],
            "observed": c["observed_share"], "baseline_mean": c["baseline_mean"], "p_value": c["p_value"],
            "baseline": np.asarray(c["baseline_shares"], dtype=float),
        })
    return rows


def findings_figure(result: dict[str, Any]) -> Any:
    rows = findings_rows(result)
    x = np.arange(len(rows))
    with _style():
        fig = _new_figure(2.8)
        left, right = fig.subplots(1, 2)
        width = 0.38
        for offset, (key, colour, label) in enumerate(((("sensitive", SENSITIVE, "CUDA-sensitive")), ("other", OTHER, "other tokens"))):
            at = x + (offset - 0.5) * width
            left.bar(at, [r[f"{key}_05"] for r in rows], width, color=colour, label=f"{label}, p ≥ 0.5")
            left.bar(at, [r[f"{key}_09"] for r in rows], width * 0.5, color="white", alpha=0.55, label=f"{label}, p ≥ 0.9 (inner bar)" if offset == 0 else None)
        left.set_xticks(x, [f"{r['title'].replace('-Instruct', '')}\n{r['samples']} samples" for r in rows])
        left.set_ylim(0, 1)
        left.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        left.set_ylabel("share of tokens")
        left.set_title("(a) high-confidence share, sensitive vs other")
        left.legend(loc="upper left", fontsize=7)
        right.boxplot([r["baseline"] for r in rows], positions=x, widths=0.4, showfliers=False,
                      medianprops={"color": OTHER}, boxprops={"color": OTHER}, whiskerprops={"color": OTHER}, capprops={"color": OTHER})
        right.scatter(x, [r["observed"] for r in rows], color=SENSITIVE, zorder=3, label="observed")
        for xi, r in zip(x, rows):
            right.annotate(f"p = {r['p_value']:.3g}", (xi, r["observed"]), textcoords="offset points", xytext=(8, 0), fontsize=7, va="center")
        right.set_xticks(x, [r["title"].replace("-Instruct", "") for r in rows])
        right.set_xlim(-0.5, len(rows) - 0.5)
        right.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        right.set_ylabel("in regions of ≥ 2 tokens")
        right.set_title("(b) low-confidence sensitive tokens: observed vs permuted")
        right.legend(["observed"], loc="lower right", fontsize=7)
    return fig


def findings_caption(result: dict[str, Any]) -> str:
    rows = findings_rows(result)
    parts = [f"{r['title']}: sensitive {r['sensitive_05']:.1%} vs other {r['other_05']:.1%} with p ≥ 0.5; "
             f"{r['observed']:.1%} of low-confidence sensitive tokens in multi-token regions vs {r['baseline_mean']:.1%} "
             f"under permutation (p = {r['p_value']:.3g})" for r in rows]
    return ("The paper's two findings by model on the bundled corpus (" + str(result.get("permutations", "")) +
            " permutations; low confidence = below each sample's 25% quantile, regions by gap clustering). " + "; ".join(parts) + ".")
