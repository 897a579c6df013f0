"""The analysis figures beyond the paper: a fine-tune's confidence diff against its base, and
whether an evaluation run's failures fall inside low-confidence sensitive regions.

    confidence_diff      mean delta log p per sensitivity category; preserved regions vs masked tokens   cuset.diff
    failures_in_regions  share of located failures inside a region vs chance, overall and per status  cuset.failures

The `*_figure` functions draw from the summaries alone, so tests can check them without a
model; cuset.figures gathers the data (the newest fine-tune against its base, the newest
evaluation run with located failures) and skips a figure whose data is missing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuset.figures.draw import _new_figure, _style

GAINED, LOST, CHANCE, OBSERVED = "#01665e", "#8c510a", "#bbbbbb", "#6a3d9a"


def diff_figure(summary: dict[str, Any]) -> Any:
    """(a) mean delta log p per category with tokens (categories with none left out), (b)
    preserved regions vs masked tokens with the difference's bootstrap interval."""
    from cuset.report import category_label

    rows = [r for r in summary["by_category"] if r["tokens"]]
    pm = summary["preserved_vs_masked"]
    with _style():
        fig = _new_figure(3.0)
        ax, ax_pm = fig.subplots(1, 2, width_ratios=[2.4, 1])
        values = [r["mean_delta_logp"] for r in rows]
        labels = [category_label(r["category"]) if r["category"] not in ("any sensitive", "not sensitive") else r["category"] for r in rows]
        ax.barh(range(len(rows)), values, color=[GAINED if v >= 0 else LOST for v in values])
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.axvline(0, color="#333", lw=0.8)
        ax.set_xlabel(f"mean Δ log p, {summary['model_b']} − {summary['model_a']} (nats)")
        ax.set_title("(a) by sensitivity category", loc="left")
        means = [pm["preserved_mean_delta_logp"], pm["masked_mean_delta_logp"]]
        ax_pm.bar([0, 1], means, color=[GAINED if v >= 0 else LOST for v in means])
        ax_pm.set_xticks([0, 1], [f"preserved\n(n = {pm['preserved_tokens']})", f"masked\n(n = {pm['masked_tokens']})"])
        ax_pm.axhline(0, color="#333", lw=0.8)
        ax_pm.set_ylabel("mean Δ log p (nats), tokens")
        low, high = pm["interval"]
        ax_pm.set_title(f"(b) difference {pm['difference']:+.2f}\n[95% {low:+.2f}, {high:+.2f}]", loc="left")
    return fig


def failures_figure(report: dict[str, Any]) -> Any:
    """Share of located failures whose line lies inside a region (Wilson 95% bars) beside the
    chance rate, overall and per error status."""
    groups = [("all located", report["overall"])] + [(s.replace("_", " "), r) for s, r in report["by_status"].items()]
    with _style():
        fig = _new_figure(2.8)
        ax = fig.subplots()
        x = np.arange(len(groups))
        share = [r["share"] for _, r in groups]
        err = np.array([[r["share"] - r["interval"][0], r["interval"][1] - r["share"]] for _, r in groups]).T
        ax.bar(x - 0.2, share, 0.4, yerr=err, capsize=3, color=OBSERVED, label="inside a region (95% Wilson)")
        ax.bar(x + 0.2, [r["chance"] for _, r in groups], 0.4, color=CHANCE, label="chance (random lines of the kernel)")
        ax.set_xticks(x, [f"{name}\n(n = {r['n']})" for name, r in groups])
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of failures")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, frameon=False)
    return fig
