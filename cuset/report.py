"""Data-set and results figures (plotly) for the dashboard, in one style that matches the
matplotlib paper figures of cuset.figures.

Each function takes library results (a TokenTable, an ObjectiveResult, a results frame) and
returns a plotly Figure; nothing here computes the objective itself. The style is one plotly
template, `cuset` (registered on import and used by every figure here): the Okabe-Ito palette
(colour-blind safe; the same colour per training method as the paper figures), black axis lines
with outside ticks, light grid, left-aligned titles, no SI suffixes on small numbers (no
"10μ"). Distributions are drawn as step outlines, never as overlapping translucent bars.
Colours: blue for sensitive, grey for other tokens, the heatmap's orange for low-confidence
quantities. Category names are shown with the library's one vocabulary (KIND_OF_CATEGORY).

    from cuset.report import confidence_distribution
    confidence_distribution(scored.table).show()
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from cuset.confidence import TokenTable, category_stats
from cuset.palette import METHOD_COLOURS, OKABE_ITO, OTHER, SENSITIVE, UNSURE
from cuset.regions import KIND_OF_CATEGORY, REGION_KINDS
from cuset.sensitivity import CATEGORIES

MAX_POINTS = 200_000  # histograms of larger tables use an even subsample (figures stay light)
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def category_label(category: str) -> str:
    """A sensitivity category in words ('launch_config' -> 'launch configuration'); the same
    words name region kinds, so every page speaks one vocabulary."""
    return KIND_OF_CATEGORY.get(category, category.replace("_", " "))


def _axis(**extra: Any) -> dict[str, Any]:
    return dict(showline=True, linecolor="#333333", linewidth=1, ticks="outside", tickcolor="#333333", ticklen=4,
                showgrid=True, gridcolor="#e6e6e6", zeroline=False, exponentformat="power", automargin=True,
                title=dict(font=dict(size=13)), tickfont=dict(size=12), **extra)


TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font=dict(family=FONT, size=13, color="#1a1a1a"),
        title=dict(x=0.0, xanchor="left", font=dict(size=15)),
        colorway=list(OKABE_ITO),
        paper_bgcolor="white", plot_bgcolor="white",
        xaxis=_axis(), yaxis=_axis(),
        # below the plot, so that long run names never run into the title
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left", x=0.0, bgcolor="rgba(0,0,0,0)", font=dict(size=12)),
        hoverlabel=dict(font=dict(family=FONT)),
        bargap=0.2, bargroupgap=0.05,
    ),
)
pio.templates["cuset"] = TEMPLATE


def _layout(fig: go.Figure, title: str, **kwargs: Any) -> go.Figure:
    fig.update_layout(title=title, template="cuset", margin=dict(l=50, r=10, t=50, b=50), height=380, **kwargs)
    return fig


def _thin(values: np.ndarray) -> np.ndarray:
    step = max(1, values.shape[0] // MAX_POINTS)
    return values[::step]


def method_colour(name: str, index: int) -> str:
    """The paper figures' colour of a training method, else the palette's index-th colour."""
    return METHOD_COLOURS.get(name, OKABE_ITO[index % len(OKABE_ITO)])


def step_histogram(values: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of a step outline of the share of `values` per bin of `edges` [B+1] (the last bin
    holds its right edge): x [2B] bin edges, y [2B] shares (summing to 1 over bins; 0 if empty)."""
    counts, _ = np.histogram(values, bins=edges)
    share = counts / max(int(counts.sum()), 1)
    return np.repeat(edges, 2)[1:-1], np.repeat(share, 2)


def confidence_distribution(table: TokenTable, bins: int = 20) -> go.Figure:
    """Share of tokens per probability bin, sensitive vs other, as step outlines (as in the
    paper figure): two distributions that never hide each other."""
    fig = go.Figure()
    edges = np.linspace(0.0, 1.0, bins + 1)
    for name, where, colour in (("CUDA-sensitive", table.sensitive, SENSITIVE), ("other", ~table.sensitive, OTHER)):
        x, y = step_histogram(table.p[where], edges)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{name} (n = {int(where.sum()):,})", line=dict(color=colour, width=2.2),
                                 hovertemplate="p %{x:.2f}: %{y:.1%} of tokens<extra>%{fullData.name}</extra>"))
    return _layout(fig, "Confidence of sensitive vs other tokens", xaxis=dict(title="p(gold token)", range=[0, 1], tickformat=".1f", dtick=0.1),
                   yaxis=dict(title=f"share of tokens per {1 / bins:.2f} bin", tickformat=".0%", rangemode="tozero"))


def confidence_by_category(table: TokenTable) -> go.Figure:
    """Box plot of p per sensitivity category (plus the non-sensitive tokens)."""
    fig = go.Figure()
    bits = table.bits.astype(np.int64)
    for column, category in enumerate(CATEGORIES):
        values = table.p[((bits >> column) & 1).astype(bool)]
        if values.size:
            fig.add_trace(go.Box(y=_thin(values), name=category_label(category), marker_color=SENSITIVE, boxpoints=False))
    fig.add_trace(go.Box(y=_thin(table.p[~table.sensitive]), name="not sensitive", marker_color=OTHER, boxpoints=False))
    return _layout(fig, "Confidence per category", showlegend=False, yaxis=dict(title="p(gold token)", range=[0, 1.02], tickformat=".1f"))


def high_confidence_share(table: TokenTable, high: float = 0.5) -> go.Figure:
    """Share of tokens with p >= high, per category: most sensitive tokens are confident."""
    rows = [r for r in category_stats(table, high) if r["tokens"]]
    colours = [OTHER if r["category"] == "not sensitive" else SENSITIVE for r in rows]
    fig = go.Figure(go.Bar(x=[category_label(r["category"]) for r in rows], y=[r["high_confidence_share"] for r in rows], marker_color=colours,
                           text=[f"{r['high_confidence_share']:.0%}" for r in rows], textposition="outside", cliponaxis=False))
    return _layout(fig, f"Share of tokens with p ≥ {high:g}", yaxis=dict(range=[0, 1.1], tickformat=".0%", title="tokens"))


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
    names = [category_label(c) for c in per] + ["not sensitive"]
    values = list(per.values()) + [stats["masked_fraction_other"]]
    colours = [SENSITIVE] * len(per) + [OTHER]
    fig = go.Figure(go.Bar(x=names, y=values, marker_color=colours, text=[f"{v:.1%}" for v in values], textposition="outside", cliponaxis=False))
    return _layout(fig, f"Masked fraction by category (overall {stats['masked_fraction']:.1%})", yaxis=dict(tickformat=".0%", title="masked tokens", rangemode="tozero"))


def weight_histogram(weights: np.ndarray, ess: float) -> go.Figure:
    """Histogram of the sample weights w_i (mean 1 by construction)."""
    fig = go.Figure(go.Histogram(x=weights, nbinsx=30, marker=dict(color=UNSURE, line=dict(color="white", width=1))))
    return _layout(fig, f"Sample weights (effective sample size {ess:.1f} of {weights.size})", xaxis=dict(title="sample weight w_i", tickformat=".2~f"),
                   yaxis=dict(title="samples", rangemode="tozero"))


def training_curves(curves: dict[str, list[dict[str, Any]]], metric: str = "loss") -> go.Figure:
    """One line per job of a per-step metric (from cuset.jobs.read_job_metrics)."""
    fig = go.Figure()
    last = max((int(r["step"]) for rows in curves.values() for r in rows if "step" in r), default=1)
    for index, (name, rows) in enumerate(curves.items()):
        points = [(r["step"], r[metric]) for r in rows if metric in r and r[metric] is not None]
        if points:
            steps, values = zip(*points)
            method = name.split("(")[-1].rstrip(")") if "(" in name else name
            fig.add_trace(go.Scatter(x=steps, y=values, mode="lines+markers", name=name, line=dict(color=method_colour(method, index))))
    return _layout(fig, f"Training {metric}", xaxis=dict(title="optimizer step", tick0=0, dtick=max(1, -(-last // 8))), yaxis=dict(title=metric))


# --- evaluation results (frames from cuset.evaluate.results.ResultStore.frame) ----------------


def correctness_by(frame: Any, by: str, group: str = "label", metric: str = "correct") -> go.Figure:
    """Bars of the correct (or compiled) rate per `by` value, one bar group per run/method,
    with 95% Wilson intervals (the suites are small: the error bars are honest)."""
    from cuset.evaluate.metrics import wilson_interval

    fig = go.Figure()
    if not frame.empty:
        for index, (name, g) in enumerate(frame.groupby(group, sort=False)):
            stats = g.groupby(by, dropna=False)[metric].agg(["sum", "size"]).reset_index()
            rates = stats["sum"] / stats["size"]
            lo_hi = [wilson_interval(int(s), int(n)) for s, n in zip(stats["sum"], stats["size"])]
            fig.add_trace(go.Bar(
                x=[str(v) for v in stats[by]], y=rates, name=str(name), marker_color=method_colour(str(name), index) if group == "method" else OKABE_ITO[index % len(OKABE_ITO)],
                error_y=dict(type="data", symmetric=False, color="#333333", thickness=1.2, array=[h - r for (_, h), r in zip(lo_hi, rates)],
                             arrayminus=[r - lo for (lo, _), r in zip(lo_hi, rates)]),
                customdata=np.stack([stats["sum"], stats["size"]], axis=1),
                hovertemplate="%{x}: %{y:.0%} (%{customdata[0]} of %{customdata[1]})<extra>%{fullData.name}</extra>",
            ))
    what = "correct" if metric == "correct" else "compiled"
    return _layout(fig, f"Share {what} by {by}", barmode="group", yaxis=dict(title=f"{what} rate", range=[0, 1.05], tickformat=".0%"),
                   xaxis=dict(title=by, type="category"))


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
    return _layout(fig, "pass@k", xaxis=dict(title="k (samples per task)", tickformat="d", dtick=1), yaxis=dict(title="pass@k", range=[0, 1.05], tickformat=".0%"))


def status_breakdown(frame: Any, group: str = "label") -> go.Figure:
    """Stacked shares of each result category per run/method."""
    order = ["correct", "reward_hack", "race", "memory_error", "sync_error", "wrong_result", "runtime_error", "compile_error", "timeout",
             "resource_limit", "unsupported"]
    fig = go.Figure()
    if not frame.empty:
        shares = frame.groupby(group, sort=False)["status"].value_counts(normalize=True).unstack(fill_value=0.0)
        for status in [s for s in order if s in shares.columns] + [s for s in shares.columns if s not in order]:
            fig.add_trace(go.Bar(y=[str(i) for i in shares.index], x=shares[status], name=status, orientation="h"))
    return _layout(fig, "What happened to the candidates", barmode="stack", xaxis=dict(title="share of candidates", range=[0, 1.0], tickformat=".0%"),
                   yaxis=dict(autorange="reversed", showgrid=False))


def compare_attempted(frame: Any, run_a: int, run_b: int) -> tuple[Any, dict[str, int]]:
    """Run A against run B task by task (cuset.evaluate.metrics.compare_runs), over only the
    tasks both attempted: a task B never ran is not "broken in B". Returns the table and
    counts: both, only_a, only_b (left out) and fixed, broken, same."""
    from cuset.evaluate.metrics import compare_runs

    first = frame[frame["sample"] == 0]
    tasks_a = set(first.loc[first["run_id"] == run_a, "task_id"])
    tasks_b = set(first.loc[first["run_id"] == run_b, "task_id"])
    both = tasks_a & tasks_b
    diff = compare_runs(frame[frame["task_id"].isin(both)], run_a, run_b)
    changes = diff["change"].value_counts()
    counts = {"both": len(both), "only_a": len(tasks_a - both), "only_b": len(tasks_b - both)}
    return diff, counts | {k: int(changes.get(k, 0)) for k in ("fixed", "broken", "same")}
