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
from cuset.palette import OTHER, SENSITIVE


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


def _short(title: str) -> str:
    """'Qwen2.5-Coder-0.5B-Instruct' -> 'Coder\n0.5B': tick labels that fit side by side."""
    name = title.removesuffix("-Instruct").replace("Qwen2.5-", "")
    family, _, size = name.rpartition("-")
    return f"{family}\n{size}" if family else name


def _p_text(p_value: float, permutations: int) -> str:
    """The smallest p a permutation test can give is 1/(R+1): say 'p ≤' there."""
    return f"p ≤ {p_value:.2g}" if permutations and p_value <= 1 / (permutations + 1) + 1e-12 else f"p = {p_value:.3g}"


def findings_figure(result: dict[str, Any]) -> Any:
    from matplotlib.patches import Patch
    from matplotlib.ticker import MultipleLocator

    rows = findings_rows(result)
    x = np.arange(len(rows))
    light = {"sensitive": "#9DB8E5", "other": "#D0D0D0"}
    with _style():
        fig = _new_figure(2.9)
        left, right = fig.subplots(1, 2)
        width = 0.38
        for offset, (key, colour) in enumerate((("sensitive", SENSITIVE), ("other", OTHER))):
            at = x + (offset - 0.5) * width
            left.bar(at, [r[f"{key}_05"] for r in rows], width, color=colour)
            left.bar(at, [r[f"{key}_09"] for r in rows], width * 0.55, color=light[key])
        left.set_xticks(x, [f"{_short(r['title'])}\nn = {r['samples']}" for r in rows])
        left.set_ylim(0, 1)
        left.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        left.set_ylabel("share of tokens")
        left.set_title("(a) high-confidence share, sensitive vs other")
        left.legend(handles=[Patch(color=SENSITIVE, label="CUDA-sensitive, p ≥ 0.5"), Patch(color=light["sensitive"], label="… p ≥ 0.9 (inner bar)"),
                             Patch(color=OTHER, label="other tokens, p ≥ 0.5"), Patch(color=light["other"], label="… p ≥ 0.9 (inner bar)")],
                    loc="upper left", fontsize=7, ncols=2)
        left.set_ylim(0, 1.12)
        left.set_yticks(np.linspace(0, 1, 6))
        right.boxplot([r["baseline"] for r in rows], positions=x, widths=0.4, showfliers=False,
                      medianprops={"color": OTHER}, boxprops={"color": OTHER}, whiskerprops={"color": OTHER}, capprops={"color": OTHER})
        dots = right.scatter(x, [r["observed"] for r in rows], color=SENSITIVE, zorder=3)
        for xi, r in zip(x, rows):
            right.annotate(_p_text(r["p_value"], result.get("permutations", 0)), (xi, r["observed"]), textcoords="offset points",
                           xytext=(8, 0), fontsize=7, va="center")
        right.set_xticks(x, [_short(r["title"]) for r in rows])
        right.set_xlim(-0.5, len(rows) - 0.5)
        right.yaxis.set_major_locator(MultipleLocator(0.05))
        right.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        right.set_ylabel("share in regions of ≥ 2 tokens")
        right.set_title("(b) low-confidence sensitive tokens: observed vs permuted")
        right.legend([dots, Patch(facecolor="white", edgecolor=OTHER)], ["observed", "permutation baseline"], loc="lower left", fontsize=7)
    return fig


def findings_caption(result: dict[str, Any]) -> str:
    rows = findings_rows(result)
    parts = [f"{r['title']}: sensitive {r['sensitive_05']:.1%} vs other {r['other_05']:.1%} with p ≥ 0.5; "
             f"{r['observed']:.1%} of low-confidence sensitive tokens in multi-token regions vs {r['baseline_mean']:.1%} "
             f"under permutation ({_p_text(r['p_value'], result.get('permutations', 0))})" for r in rows]
    objective = result.get("objective", {})
    low = (f"below each sample's {objective.get('quantile', 0.25):.0%} quantile" if objective.get("threshold_mode", "quantile") == "quantile"
           else f"p < {objective.get('tau')}")
    method = objective.get("regions", {}).get("method", "gap")
    return (f"The paper's two findings by model on the {result.get('data', 'bundled')} data ({result.get('permutations', '')} permutations; "
            f"low confidence = {low}, regions by {method} clustering). " + "; ".join(parts) + ".")
