"""Data-set level figures (plotly) for the dashboard and, later, the paper figures.

Each function takes library results (a TokenTable, an ObjectiveResult) and returns a plotly
Figure; nothing here computes the objective itself. Colours: blue for sensitive, grey for other
tokens (distinguishable under every form of colour blindness), the heatmap's orange for
low-confidence quantities.

    from cuset.report import confidence_distribution
    confidence_distribution(scored.table).show()
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from cuset.confidence import TokenTable, category_stats
from cuset.regions import REGION_KINDS
from cuset.sensitivity import CATEGORIES

SENSITIVE = "#1f5fbf"
OTHER = "#8c8c8c"
UNSURE = "#cc4c02"
MAX_POINTS = 200_000  # histograms of larger tables use an even subsample (figures stay light)


def _layout(fig: go.Figure, title: str, **kwargs: Any) -> go.Figure:
    fig.update_layout(title=title, template="plotly_white", margin=dict(l=40, r=10, t=50, b=40), height=340, **kwargs)
    return fig


def _thin(values: np.ndarray) -> np.ndarray:
    step = max(1, values.shape[0] // MAX_POINTS)
    return values[::step]


def confidence_distribution(table: TokenTable) -> go.Figure:
    """Histogram of gold-token probability, sensitive vs other tokens (normalised per group)."""
    fig = go.Figure()
    for name, where, colour in (("CUDA-sensitive", table.sensitive, SENSITIVE), ("other", ~table.sensitive, OTHER)):
        fig.add_trace(go.Histogram(x=_thin(table.p[where]), name=name, histnorm="probability", xbins=dict(start=0, end=1.0001, size=0.05), marker_color=colour, opacity=0.7))
    return _layout(fig, "Confidence of sensitive vs other tokens", barmode="overlay", xaxis_title="p(gold token)", yaxis_title="share of tokens")


def confidence_by_category(table: TokenTable) -> go.Figure:
    """Box plot of p per sensitivity category (plus the non-sensitive tokens)."""
    fig = go.Figure()
    bits = table.bits.astype(np.int64)
    for column, category in enumerate(CATEGORIES):
        values = table.p[((bits >> column) & 1).astype(bool)]
        if values.size:
            fig.add_trace(go.Box(y=_thin(values), name=category, marker_color=SENSITIVE, boxpoints=False))
    fig.add_trace(go.Box(y=_thin(table.p[~table.sensitive]), name="not sensitive", marker_color=OTHER, boxpoints=False))
    return _layout(fig, "Confidence per category", showlegend=False, yaxis_title="p(gold token)")


def high_confidence_share(table: TokenTable, high: float = 0.5) -> go.Figure:
    """Share of tokens with p >= high, per category: most sensitive tokens are confident."""
    rows = [r for r in category_stats(table, high) if r["tokens"]]
    colours = [OTHER if r["category"] == "not sensitive" else SENSITIVE for r in rows]
    fig = go.Figure(go.Bar(x=[r["category"] for r in rows], y=[r["high_confidence_share"] for r in rows], marker_color=colours, text=[f"{r['high_confidence_share']:.0%}" for r in rows], textposition="outside"))
    return _layout(fig, f"Share of tokens with p >= {high:g}", yaxis=dict(range=[0, 1.1], tickformat=".0%"))


def regions_by_kind(kinds: np.ndarray) -> go.Figure:
    """Bar chart of region counts per kind. kinds: int index into REGION_KINDS per region."""
    counts = np.bincount(kinds.astype(np.int64), minlength=len(REGION_KINDS)) if kinds.size else np.zeros(len(REGION_KINDS), int)
    order = np.argsort(-counts)
    names = [REGION_KINDS[i] for i in order if counts[i]]
    fig = go.Figure(go.Bar(x=names, y=[int(counts[i]) for i in order if counts[i]], marker_color=UNSURE))
    return _layout(fig, "Low-confidence sensitive regions by kind", yaxis_title="regions")


def masked_by_category(stats: dict[str, Any]) -> go.Figure:
    """Masked fraction per category (from ObjectiveResult.stats)."""
    per = stats["masked_fraction_by_category"]
    names = list(per) + ["not sensitive"]
    values = list(per.values()) + [stats["masked_fraction_other"]]
    colours = [SENSITIVE] * len(per) + [OTHER]
    fig = go.Figure(go.Bar(x=names, y=values, marker_color=colours, text=[f"{v:.1%}" for v in values], textposition="outside"))
    return _layout(fig, f"Masked fraction by category (overall {stats['masked_fraction']:.1%})", yaxis=dict(tickformat=".0%"))


def weight_histogram(weights: np.ndarray, ess: float) -> go.Figure:
    fig = go.Figure(go.Histogram(x=weights, nbinsx=30, marker_color=UNSURE))
    return _layout(fig, f"Sample weights (effective sample size {ess:.1f} of {weights.size})", xaxis_title="w_i", yaxis_title="samples")


def training_curves(curves: dict[str, list[dict[str, Any]]], metric: str = "loss") -> go.Figure:
    """One line per job of a per-step metric (from cuset.jobs.read_job_metrics)."""
    fig = go.Figure()
    for name, rows in curves.items():
        points = [(r["step"], r[metric]) for r in rows if metric in r and r[metric] is not None]
        if points:
            steps, values = zip(*points)
            fig.add_trace(go.Scatter(x=steps, y=values, mode="lines+markers", name=name))
    return _layout(fig, f"Training {metric}", xaxis_title="optimizer step", yaxis_title=metric)


# --- evaluation results (frames from cuset.evaluate.results.ResultStore.frame) ----------------


def correctness_by(frame: Any, by: str, group: str = "label", metric: str = "correct") -> go.Figure:
    """Bars of the correct (or compiled) rate per `by` value, one bar group per run/method,
    with 95% Wilson intervals (the suites are small: the error bars are honest)."""
    from cuset.evaluate.metrics import wilson_interval

    fig = go.Figure()
    if not frame.empty:
        for name, g in frame.groupby(group, sort=False):
            stats = g.groupby(by, dropna=False)[metric].agg(["sum", "size"]).reset_index()
            rates = stats["sum"] / stats["size"]
            lo_hi = [wilson_interval(int(s), int(n)) for s, n in zip(stats["sum"], stats["size"])]
            fig.add_trace(go.Bar(
                x=[str(v) for v in stats[by]], y=rates, name=str(name),
                error_y=dict(type="data", symmetric=False, array=[h - r for (_, h), r in zip(lo_hi, rates)],
                             arrayminus=[r - lo for (lo, _), r in zip(lo_hi, rates)]),
                customdata=np.stack([stats["sum"], stats["size"]], axis=1),
                hovertemplate="%{x}: %{y:.0%} (%{customdata[0]} of %{customdata[1]})<extra>%{fullData.name}</extra>",
            ))
    what = "correct" if metric == "correct" else "compiled"
    return _layout(fig, f"Share {what} by {by}", barmode="group", yaxis_title=f"{what} rate", yaxis_range=[0, 1.05], xaxis_title=by)


def pass_at_k_curves(frame: Any, group: str = "label", max_k: int = 10) -> go.Figure:
    """Unbiased pass@k for k = 1..min(n, max_k), one line per run/method."""
    from cuset.evaluate.metrics import pass_at_k_table

    fig = go.Figure()
    if not frame.empty:
        for name, g in frame.groupby(group, sort=False):
            n = int(g.groupby("task_id").size().min())
            ks = list(range(1, min(n, max_k) + 1))
            row = pass_at_k_table(g, ks=ks).iloc[0]
            fig.add_trace(go.Scatter(x=ks, y=[row[f"pass@{k}"] for k in ks], mode="lines+markers", name=str(name)))
    return _layout(fig, "pass@k", xaxis_title="k (samples per task)", yaxis_title="pass@k", yaxis_range=[0, 1.05])


def status_breakdown(frame: Any, group: str = "label") -> go.Figure:
    """Stacked shares of each result category per run/method."""
    order = ["correct", "wrong_result", "runtime_error", "compile_error", "timeout", "resource_limit", "unsupported"]
    fig = go.Figure()
    if not frame.empty:
        shares = frame.groupby(group, sort=False)["status"].value_counts(normalize=True).unstack(fill_value=0.0)
        for status in [s for s in order if s in shares.columns] + [s for s in shares.columns if s not in order]:
            fig.add_trace(go.Bar(x=[str(i) for i in shares.index], y=shares[status], name=status))
    return _layout(fig, "What happened to the candidates", barmode="stack", yaxis_title="share", yaxis_range=[0, 1.0])
