"""The paper figures' drawing side: data preparation (pure, tested against hand computations)
and one matplotlib figure per paper figure, written atomically (cuset.files). No workspace access here:
`cuset.figures.make_all` gathers the data and calls these.

    from cuset.figures.draw import threshold_sweep, threshold_sweep_figure, save_figure
    sweep = threshold_sweep(scored.table, ObjectiveConfig())          # one row per quantile
    save_figure(threshold_sweep_figure(sweep, 0.25), "out", "threshold_sweep", ("pdf", "png"))

Figures are `matplotlib.figure.Figure` objects on the Agg canvas, never pyplot: no global
state, safe in the app's threads. Style: DejaVu Sans 8-9 pt, 7 in wide (a two-column paper's
text width), no top/right spines, frameless legends, one colour per method everywhere
(Okabe-Ito, colour-blind safe), the app's blue/grey for sensitive/other tokens (both from cuset.palette).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cuset.confidence import TokenTable, category_stats
from cuset.files import atomic_write
from cuset.objective import ObjectiveConfig, compute
from cuset.palette import OTHER, SENSITIVE, UNSURE, method_colours, method_sort_key

FORMATS = ("pdf", "svg", "png")
PNG_DPI = 200
WIDTH = 7.0  # inches: the text width of a two-column paper
STYLE = {
    "font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9,
    "legend.fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.titlelocation": "left",
    "axes.spines.top": False, "axes.spines.right": False, "legend.frameon": False,
    "axes.linewidth": 0.8, "lines.linewidth": 1.4, "errorbar.capsize": 2.5,
    "pdf.fonttype": 42, "svg.fonttype": "path", "svg.hashsalt": "cuset",
    # unhinted glyph advances: text is as wide at 200 dpi as in the PDF, so the region shading
    # of region_examples_figure lines up with the code in every format
    "text.hinting": "no_hinting",
    "savefig.bbox": "tight", "savefig.pad_inches": 0.04,
}


def _new_figure(height: float, width: float = WIDTH) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _style() -> Any:
    import matplotlib as mpl

    return mpl.rc_context(STYLE)


# --- confidence of sensitive vs other tokens ------------------------------------------------


def confidence_histogram(p: np.ndarray, sensitive: np.ndarray, bins: int = 20) -> pd.DataFrame:
    """Share of tokens per probability bin, for sensitive and for other tokens.

    p: [N] gold-token probabilities; sensitive: bool [N]. Returns one row per bin (left,
    right, sensitive, other), each share column summing to 1 (0 for an empty group); the last
    bin includes p = 1."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    out = {"left": edges[:-1], "right": edges[1:]}
    for name, where in (("sensitive", sensitive), ("other", ~sensitive)):
        counts, _ = np.histogram(p[where], bins=edges)
        out[name] = counts / max(int(counts.sum()), 1)
    return pd.DataFrame(out)


def confidence_figure(table: TokenTable, high: float = 0.5) -> Any:
    """(a) p distribution of sensitive vs other tokens; (b) share of tokens with p >= high per
    category, next to all sensitive and all other tokens."""
    hist = confidence_histogram(table.p, table.sensitive)
    stats = category_stats(table, high)
    summary = {r["category"]: r for r in stats}
    rows = sorted((r for r in stats[:-2] if r["tokens"]), key=lambda r: r["high_confidence_share"])
    with _style():
        fig = _new_figure(3.1)
        left, right = fig.subplots(1, 2, width_ratios=[1, 1.15])
        edges = np.r_[hist["left"].to_numpy(), 1.0]
        for name, colour, label, zorder in (("sensitive", SENSITIVE, "CUDA-sensitive", 3), ("other", OTHER, "other", 2)):
            n = summary["any sensitive" if name == "sensitive" else "not sensitive"]["tokens"]
            left.stairs(100 * hist[name].to_numpy(), edges, color=colour, linewidth=1.6, zorder=zorder, label=f"{label} (n = {n:,})")
        left.set_xlim(0, 1)
        left.set_ylim(bottom=0)
        left.set_xlabel("p(gold token)")
        left.set_ylabel(f"share of tokens per {1 / len(hist):.2f} bin (%)")
        left.set_title("(a) Confidence of sensitive vs other tokens")
        left.legend(loc="upper center")
        names = [r["category"] for r in rows] + ["any sensitive", "not sensitive"]
        shares = [r["high_confidence_share"] for r in rows] + [summary[n]["high_confidence_share"] for n in names[-2:]]
        counts = [r["tokens"] for r in rows] + [summary[n]["tokens"] for n in names[-2:]]
        colours = [SENSITIVE] * len(rows) + ["#0b3170", OTHER]
        y = np.r_[np.arange(len(rows)), len(rows) + 0.6, len(rows) + 1.6]
        right.barh(y, 100 * np.asarray(shares), color=colours, height=0.7)
        for yi, share, n in zip(y, shares, counts):
            right.text(100 * share + 1.5, yi, f"{share:.0%}  (n = {n:,})", va="center", fontsize=7, color="#444444")
        right.set_yticks(y, [n.replace("_", " ") for n in names])
        right.set_xlim(0, 135)  # room for the labels
        right.set_xticks([0, 25, 50, 75, 100])
        right.spines["bottom"].set_bounds(0, 100)
        right.set_xlabel(f"tokens with p ≥ {high:g} (%)")
        right.set_title(f"(b) High-confidence share per category (p ≥ {high:g})")
        right.tick_params(axis="y", length=0)
    return fig


# --- region examples --------------------------------------------------------------------------


@dataclass
class RegionExample:
    """A region shown in its code: `lines` of the response from line `first_line` (1-based),
    and `spans` (line index in `lines`, first column, end column) covering the region's
    characters. Columns count characters after tab expansion."""

    sample: str
    kind: str
    line: int
    size: int
    mean_p: float
    first_line: int
    lines: list[str]
    spans: list[tuple[int, int, int]]


def _column(line: str, at: int, tab: int = 4) -> int:
    return len(line[:at].expandtabs(tab))


def region_example(row: Mapping[str, Any], text: str, context: int = 1, max_lines: int = 8, width: int = 96) -> RegionExample:
    """The snippet of `text` around one region (a `cuset.regions.region_rows` row): `context`
    lines before and after, at most `max_lines` lines and `width` columns (longer lines are cut)."""
    a, b = row["chars"]
    all_lines = text.split("\n")
    starts = np.r_[0, np.cumsum([len(x) + 1 for x in all_lines])]
    first = int(np.searchsorted(starts, a, side="right")) - 1
    last = int(np.searchsorted(starts, max(b - 1, a), side="right")) - 1
    lo = max(0, first - context)
    hi = min(len(all_lines) - 1, last + context, lo + max_lines - 1)
    lines, spans = [], []
    for index in range(lo, hi + 1):
        raw = all_lines[index]
        shown = raw.expandtabs(4)
        room = width if len(shown) <= width else width - 1  # a cut line ends in "…"
        lines.append(shown if len(shown) <= width else shown[:room] + "…")
        s, e = max(a, starts[index]) - starts[index], min(b, starts[index] + len(raw)) - starts[index]
        while s < e and raw[s].isspace():  # tokens carry their leading blanks; shade the code only
            s += 1
        while e > s and raw[e - 1].isspace():
            e -= 1
        if e > s:
            c0, c1 = _column(raw, s), _column(raw, e)
            if c0 < room:
                spans.append((index - lo, c0, min(c1, room)))
    return RegionExample(sample=str(row["sample"]), kind=str(row["kind"]), line=int(row["line"]), size=int(row["size"]),
                         mean_p=float(row["mean_p"]), first_line=lo + 1, lines=lines, spans=spans)


def region_examples(rows: Sequence[Mapping[str, Any]], texts: Mapping[str, str], max_examples: int = 4, context: int = 1,
                    max_lines: int = 8) -> list[RegionExample]:
    """One example for each of the `max_examples` most frequent region kinds: the region with
    the most low-confidence tokens that fits in `max_lines` lines with its context (ties: the
    lower mean p, then sample id and position). `rows` from cuset.regions.region_rows;
    `texts` maps sample id -> response."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(str(row["kind"]), []).append(row)
    kinds = sorted(by_kind, key=lambda k: (-len(by_kind[k]), k))[:max_examples]
    examples = []
    for kind in kinds:
        def fits(r: Mapping[str, Any]) -> bool:
            return texts[r["sample"]].count("\n", *r["chars"]) + 1 + 2 * context <= max_lines

        pool = [r for r in by_kind[kind] if fits(r)] or by_kind[kind]
        best = min(pool, key=lambda r: (-int(r["size"]), float(r["mean_p"]), str(r["sample"]), int(r["chars"][0])))
        examples.append(region_example(best, texts[best["sample"]], context, max_lines))
    return examples


def region_examples_figure(examples: Sequence[RegionExample]) -> Any:
    """Each example's code in a monospace panel, the region highlighted, line numbers at left."""
    from matplotlib.patches import Rectangle

    if not examples:
        raise ValueError("region_examples_figure needs at least one example (region_examples found none).")
    line_in = 0.155  # inches per code line at 7.5 pt
    heights = [line_in * (len(e.lines) + 0.6) for e in examples]
    title_in, gap_in = 0.26, 0.12
    total = sum(heights) + len(examples) * (title_in + gap_in)
    with _style():
        fig = _new_figure(total)
        fig.set_layout_engine("none")
        renderer = fig.canvas.get_renderer()
        top = total
        for number, (example, height) in enumerate(zip(examples, heights)):
            top -= title_in
            ax = fig.add_axes((0.0, (top - height) / total, 1.0, height / total))
            top -= height + gap_in
            ax.set_axis_off()
            probe = ax.text(0, 0, "M" * 40, family="DejaVu Sans Mono", fontsize=7.5)
            char = probe.get_window_extent(renderer).width / 40  # width of one monospace character, pixels
            probe.remove()
            columns = ax.get_window_extent(renderer).width / char
            ax.set_xlim(0, columns)
            ax.set_ylim(len(example.lines) - 0.3, -0.7)
            gutter = 6
            for index, line in enumerate(example.lines):
                ax.text(0, index, f"{example.first_line + index:>4}", family="DejaVu Sans Mono", fontsize=7.5, va="center", color="#999999")
                ax.text(gutter, index, line, family="DejaVu Sans Mono", fontsize=7.5, va="center", color="#111111", parse_math=False)
            for index, c0, c1 in example.spans:
                ax.add_patch(Rectangle((gutter + c0, index - 0.5), c1 - c0, 1.0, facecolor=UNSURE, alpha=0.22, edgecolor="none", zorder=0))
            ax.set_title(
                f"({chr(97 + number)}) {example.kind}: {example.sample}, line {example.line}; "
                f"{example.size} low-confidence sensitive token{'s' if example.size != 1 else ''}, mean p = {example.mean_p:.2f}",
                loc="left", fontsize=8.5, pad=3, parse_math=False,  # ids and code are text, never mathtext
            )
    return fig


# --- threshold sweep --------------------------------------------------------------------------

SWEEP_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))


def threshold_sweep(table: TokenTable, config: ObjectiveConfig, grid: Sequence[float] = SWEEP_GRID, method: str = "cuset") -> pd.DataFrame:
    """The objective (`cuset.objective.compute`) over a grid of thresholds: quantiles q in
    quantile mode, tau in absolute mode, all else as in `config`. One row per threshold:
    low_fraction, masked_fraction (overall, sensitive, other), n_regions, ess and ess_fraction
    (effective sample size over the number of samples)."""
    key = "quantile" if config.threshold_mode == "quantile" else "tau"
    rows = []
    for value in grid:
        stats = compute(table, replace(config, **{key: float(value)}), method).stats
        rows.append({
            "threshold": float(value), "low_fraction": stats["low_fraction"], "masked_fraction": stats["masked_fraction"],
            "masked_fraction_sensitive": stats["masked_fraction_sensitive"], "masked_fraction_other": stats["masked_fraction_other"],
            "n_regions": stats["n_regions"], "ess": stats["effective_sample_size"],
            "ess_fraction": stats["effective_sample_size"] / max(stats["n_samples"], 1),
        })
    return pd.DataFrame(rows)


def threshold_sweep_figure(sweep: pd.DataFrame, current: float | None = None, mode: str = "quantile", n_samples: int | None = None) -> Any:
    """(a) masked fraction (all, sensitive, other tokens) and (b) effective sample size against
    the threshold; a dotted line marks the configured one."""
    x = sweep["threshold"].to_numpy()
    label = "low-confidence quantile q" if mode == "quantile" else "probability threshold τ"
    with _style():
        fig = _new_figure(2.7)
        left, right = fig.subplots(1, 2)
        left.plot(x, 100 * sweep["masked_fraction"], color="#111111", marker="o", markersize=2.5, label="all tokens")
        left.plot(x, 100 * sweep["masked_fraction_sensitive"], color=SENSITIVE, marker="o", markersize=2.5, label="CUDA-sensitive")
        left.plot(x, 100 * sweep["masked_fraction_other"], color=OTHER, marker="o", markersize=2.5, label="other")
        left.set_ylabel("masked tokens (%)")
        left.set_title("(a) Masked fraction")
        left.set_ylim(bottom=0)
        ess = sweep["ess"].to_numpy()
        right.plot(x, ess, color=UNSURE, marker="o", markersize=2.5, label="effective sample size")
        if n_samples:
            right.axhline(n_samples, color="#999999", linestyle="--", linewidth=0.9, label=f"all samples (N = {n_samples})")
        right.set_ylabel("effective sample size (samples)")
        right.set_title("(b) Effective sample size of the weights")
        symbol = "q" if mode == "quantile" else "τ"
        for ax in (left, right):
            ax.set_xlabel(label)
            ax.set_xlim(0, 1)
            if current is not None:
                ax.axvline(current, color="#555555", linestyle=":", linewidth=1.0, label=f"configured {symbol} = {current:g}")
        left.legend(loc="upper left")
        right.legend(loc="best")
    return fig


# --- training curves --------------------------------------------------------------------------

CURVE_METRICS = ("nll", "nll_sensitive", "nll_other")


def curve_table(runs: Mapping[str, tuple[str, Sequence[Mapping[str, Any]]]], metrics: Sequence[str] = CURVE_METRICS) -> pd.DataFrame:
    """Long table of per-step metrics: runs maps a label to (method, rows from
    cuset.jobs.read_job_metrics). Columns run, method, step, then `metrics` (NaN where a step
    lacks one)."""
    rows = []
    for label, (method, steps) in runs.items():
        for r in steps:
            if "step" in r:
                rows.append({"run": label, "method": method, "step": int(r["step"]),
                             **{m: float(r[m]) if isinstance(r.get(m), int | float) else np.nan for m in metrics}})
    return pd.DataFrame(rows, columns=["run", "method", "step", *metrics])


def training_curves_figure(curves: pd.DataFrame) -> Any:
    """Per-step NLL on all response tokens (a), CUDA-sensitive (b) and other tokens (c), one
    line per fine-tune, coloured by method (several of one method: other line styles)."""
    titles = {"nll": "(a) All response tokens", "nll_sensitive": "(b) CUDA-sensitive tokens", "nll_other": "(c) Other tokens"}
    runs = list(dict.fromkeys(curves["run"]))
    methods = dict(zip(curves["run"], curves["method"]))
    colours = method_colours(sorted(set(methods.values()), key=method_sort_key))
    styles = ("-", "--", ":", "-.")
    seen: dict[str, int] = {}
    with _style():
        fig = _new_figure(2.6)
        axes = fig.subplots(1, 3, sharex=True, sharey=True)
        for run in sorted(runs, key=lambda r: (method_sort_key(methods[r]), r)):
            part = curves[curves["run"] == run].sort_values("step")
            nth = seen.get(methods[run], 0)
            seen[methods[run]] = nth + 1
            style = styles[nth % len(styles)]
            for ax, metric in zip(axes, CURVE_METRICS):
                ax.plot(part["step"], part[metric], color=colours[methods[run]], linestyle=style, linewidth=1.2,
                        marker="o", markersize=2, label=run)
        for ax, metric in zip(axes, CURVE_METRICS):
            ax.set_title(titles[metric])
            ax.set_xlabel("optimizer step")
        axes[0].set_ylabel("NLL (nats per token)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(runs), 4))
    return fig


# --- correctness --------------------------------------------------------------------------------


def correctness_table(frame: pd.DataFrame, by: str = "level", group: str = "method", overall: bool = True) -> pd.DataFrame:
    """Correct rate per (group, by) with its 95% Wilson interval. frame: one row per candidate
    (cuset.evaluate.results.ResultStore.frame) with bool `correct`. Columns: group, by
    (as text; 'all' rows when `overall`), n, correct, rate, low, high."""
    from cuset.evaluate.metrics import wilson_interval

    if frame.empty:
        return pd.DataFrame(columns=[group, by, "n", "correct", "rate", "low", "high"])
    parts = [frame.assign(**{by: frame[by].astype(str)})]
    if overall:
        parts.append(frame.assign(**{by: "all"}))
    stats = pd.concat(parts).groupby([group, by], sort=False)["correct"].agg(n="size", correct="sum").reset_index()
    stats["correct"] = stats["correct"].astype(int)
    stats["rate"] = stats["correct"] / stats["n"]
    bounds = [wilson_interval(int(c), int(n)) for c, n in zip(stats["correct"], stats["n"])]
    stats["low"] = [lo for lo, _ in bounds]
    stats["high"] = [hi for _, hi in bounds]
    return stats


SPLIT_NAMES = {"in_distribution": "in-distribution", "held_out": "held-out", "": "unsplit", "all": "all"}


def correctness_figure(by_level: pd.DataFrame, by_split: pd.DataFrame | None = None) -> Any:
    """Grouped bars of the correct rate per method, by level (a) and by split (b), with 95%
    Wilson intervals as error bars. Inputs from `correctness_table`."""
    panels = [("level", by_level, "(a) By level")]
    if by_split is not None and not by_split.empty:
        panels.append(("split", by_split, "(b) In-distribution vs held-out families"))
    methods = sorted(set(by_level["method"]), key=method_sort_key)
    colours = method_colours(methods)
    with _style():
        fig = _new_figure(2.7)
        widths = [len(set(t[k])) for k, t, _ in panels]
        axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True, width_ratios=widths))
        for ax, (key, table, title) in zip(axes, panels):
            groups = sorted(set(table[key]), key=lambda g: (g == "all", list(SPLIT_NAMES).index(g) if g in SPLIT_NAMES else 0, g))
            width = 0.8 / len(methods)
            for m_index, method in enumerate(methods):
                part = table[table["method"] == method].set_index(key).reindex(groups)
                x = np.arange(len(groups)) - 0.4 + width * (m_index + 0.5)
                rate = part["rate"].to_numpy(dtype=float)
                err = np.vstack([rate - part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float) - rate])
                err = np.clip(err, 0.0, None)  # the Wilson bound of a 0% or 100% rate can miss it by a rounding error
                ax.bar(x, 100 * rate, width=width * 0.92, color=colours[method], label=method)
                ax.errorbar(x, 100 * rate, yerr=100 * err, fmt="none", ecolor="#333333", elinewidth=0.8)
            names = [f"level {g}" if key == "level" and g != "all" else SPLIT_NAMES.get(g, g) for g in groups]
            ax.set_xticks(np.arange(len(groups)), names)
            ax.set_title(title)
            ax.set_ylim(0, 105)
            ax.tick_params(axis="x", length=0)
        axes[0].set_ylabel("correct candidates (%)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(methods), 6))
    return fig


# --- writing files --------------------------------------------------------------------------


def check_formats(formats: Sequence[str] | str) -> tuple[str, ...]:
    items = [f.strip().lower().lstrip(".") for f in (formats.split(",") if isinstance(formats, str) else formats) if f.strip()]
    unknown = [f for f in items if f not in FORMATS]
    if unknown or not items:
        raise ValueError(f"figure formats {unknown or items}: choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(items))


def save_figure(fig: Any, out_dir: str | Path, name: str, formats: Sequence[str] = FORMATS) -> dict[str, Path]:
    """Write `fig` as out_dir/name.<format> for each format, atomically; returns format -> path.
    Metadata carry no date, so unchanged data give byte-identical PDF and SVG files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metadata = {"pdf": {"Creator": "CuSeT Workbench", "CreationDate": None}, "svg": {"Date": None}, "png": {"Software": "CuSeT Workbench"}}
    files = {}
    with _style():
        for fmt in check_formats(formats):
            path = out / f"{name}.{fmt}"
            atomic_write(path, lambda tmp, fmt=fmt: fig.savefig(tmp, format=fmt, dpi=PNG_DPI, metadata=metadata[fmt]))
            files[fmt] = path
    return files


