"""The experiments' main figure, drawn from the committed analysis/results/NAME/ files alone.

    from cuset.figures.experiment import experiment_results, experiment_figure
    results = experiment_results()                     # {name: (summary, paired)} of every results folder
    fig = experiment_figure(results)
    curves = kept_curves("analysis/results/cpu-coder-validation")   # its fine-tunes' per-step NLL
    write_training_figure("analysis/results/cpu-coder-validation")   # -> training_nll.png

One row per experiment: (a) pass@1 per method with its 95% interval, overall and per split, for
each evaluation mode (greedy, sampled); (b) each method minus sft in pass@1 and (c) in the share
of candidates that compile, paired by task, with bootstrap 95% intervals (a bar whose interval
spans zero is drawn hollow). While no method solves a task, (c) is where methods differ. The
numbers are those of summary.csv and paired.csv (cuset.experiment.results), so nothing is
recomputed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cuset.experiment.results import paired_of
from cuset.figures.draw import _new_figure, _style
from cuset.palette import method_colours, method_sort_key


def experiment_results(results_dir: str | Path | None = None) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """{experiment name: (summary, paired)} for every folder of `results_dir` (default
    analysis/results) that holds a non-empty summary.csv."""
    from cuset.experiment import RESULTS_DIR, read_results

    root = Path(results_dir) if results_dir else RESULTS_DIR
    found = {}
    for folder in sorted(p for p in root.glob("*") if (p / "summary.csv").is_file()):
        _, summary, paired = read_results(folder)
        if not summary.empty:
            found[folder.name] = (summary, paired)
    return found


def _method_order(methods: Any) -> list[str]:
    return sorted(set(methods), key=lambda m: (-1, m) if m == "base" else method_sort_key(m))


def experiment_figure(results: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> Any:
    """Rows of (a) pass@1 with intervals by split and mode, (b) and (c) method - sft per task in
    pass@1 and in compile rate."""
    with _style():
        fig = _new_figure(2.8 * len(results), width=10.0)
        grid = fig.subplots(len(results), 3, squeeze=False, width_ratios=[2.2, 1, 1])
        for (name, (summary, paired)), (ax, ax_diff, ax_compile) in zip(results.items(), grid):
            methods = _method_order(summary["method"])
            colours = method_colours(methods)
            part = summary[summary["by"].isin(["all", "split"])]
            groups = [(mode, group) for mode in sorted(set(part["mode"])) for group in ["all", *sorted(set(part["group"]) - {"all"})]
                      if len(part[(part["mode"] == mode) & (part["group"] == group)])]
            width = 0.8 / len(methods)
            for m_index, method in enumerate(methods):
                x, rate, low, high = [], [], [], []
                for g_index, (mode, group) in enumerate(groups):
                    row = part[(part["method"] == method) & (part["mode"] == mode) & (part["group"] == group)]
                    if row.empty:
                        continue
                    r = row.iloc[0]
                    x.append(g_index - 0.4 + width * (m_index + 0.5))
                    rate.append(r["pass@1"])
                    low.append(r["pass@1_low"])
                    high.append(r["pass@1_high"])
                rate_a = np.array(rate, dtype=float)
                err = np.clip(np.vstack([rate_a - np.array(low, dtype=float), np.array(high, dtype=float) - rate_a]), 0, None)
                ax.bar(x, 100 * rate_a, width=width * 0.92, color=colours[method], label=method)
                ax.errorbar(x, 100 * rate_a, yerr=100 * err, fmt="none", ecolor="#333333", elinewidth=0.8)
            ax.set_xticks(np.arange(len(groups)), [f"{_SHORT.get(g, g)}\n{mode}" for mode, g in groups], fontsize="small")
            ax.set_ylim(0, 105)
            ax.set_ylabel("pass@1 (%)")
            ax.set_title(f"(a) {name}: pass@1, 95% intervals")
            ax.legend(loc="upper right", ncols=min(len(methods), 3), fontsize="small", frameon=False)
            _paired_panel(ax_diff, paired, colours, "correct", has_sft="sft" in methods)
            _paired_panel(ax_compile, paired, colours, "compiled", has_sft="sft" in methods, labels=False)
    return fig


_SHORT = {"held_out": "held-out", "in_distribution": "in-dist."}
_PANEL = {"correct": ("(b) pass@1", "pass@1"), "compiled": ("(c) compile rate", "compile rate")}


def _paired_panel(ax: Any, paired: pd.DataFrame, colours: dict[str, str], metric: str, has_sft: bool = True,
                  labels: bool = True) -> None:
    title, what = _PANEL[metric]
    paired = paired_of(paired, metric)
    ax.axvline(0, color="#555555", linewidth=0.8)
    ax.set_title(f"{title}, method - sft")
    if paired.empty:
        text = "only sft so far:\nnothing to pair" if has_sft else "no sft run to pair with"
        ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    y = np.arange(len(paired))[::-1]
    for yi, r in zip(y, paired.itertuples()):
        spans = bool(r.spans_zero) if not isinstance(r.spans_zero, str) else r.spans_zero == "True"
        colour = colours.get(r.method, "#777777")
        ax.barh(yi, 100 * r.diff, color="none" if spans else colour, edgecolor=colour, height=0.6)
        ax.errorbar(100 * r.diff, yi, xerr=[[100 * (r.diff - r.diff_low)], [100 * (r.diff_high - r.diff)]], fmt="none",
                    ecolor="#333333", elinewidth=0.8)
        ax.text(0.98, yi + 0.42, f"p={r.sign_p:.2g}", ha="right", va="center", fontsize="x-small", transform=ax.get_yaxis_transform())
    ax.set_yticks(y, [f"{r.method} ({r.mode})" for r in paired.itertuples()] if labels else [])
    ax.set_xlabel(f"{what} difference (points)")


def _differences(paired: pd.DataFrame, metric: str, p_label: str) -> str:
    """The caption's 'method (mode) +d points [low, high], p = ...' list for one metric."""
    return "; ".join(f"{r.method} ({r.mode}) {100 * r.diff:+.1f} points [{100 * r.diff_low:+.1f}, {100 * r.diff_high:+.1f}], "
                     f"{p_label} = {r.sign_p:.2g}" for r in paired_of(paired, metric).itertuples())


def experiment_caption(results: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> str:
    """The caption with the headline numbers of each experiment."""
    parts = []
    for name, (summary, paired) in results.items():
        overall = summary[summary["by"] == "all"]
        numbers = ", ".join(f"{method} {mode} {100 * rate:.1f}%" for method, mode, rate in zip(overall["method"], overall["mode"], overall["pass@1"]))
        diffs = _differences(paired, "correct", "sign test p")
        compiled = _differences(paired, "compiled", "p")
        tasks = int(overall["tasks"].max()) if len(overall) else 0
        parts.append(f"{name} ({tasks} tasks): pass@1 {numbers}." + (f" Against sft, paired by task: {diffs}." if diffs else "")
                     + (f" Compile rate against sft: {compiled}." if compiled else ""))
    return ("Functional correctness of each method in the experiments (analysis/results/NAME/): (a) pass@1 with 95% intervals "
            "(Wilson with one candidate per task, else a bootstrap over tasks), overall and on in-distribution vs held-out families; "
            "(b) the per-task difference from sft in pass@1 and (c) in compile rate, with bootstrap 95% intervals (hollow: the "
            "interval spans zero) and the exact sign test's p. " + " ".join(parts))


def kept_curves(folder: str | Path) -> pd.DataFrame:
    """Per-step NLL (all response tokens, CUDA-sensitive, other) of every fine-tune whose records
    a results folder keeps (models/NAME/metrics.jsonl and config.yaml), as
    cuset.figures.draw.curve_table gives it; the run is the folder's name, the method the unit's
    (a variant keeps its own name). A line that is not JSON is named with its file and line."""
    import json

    import yaml

    from cuset.figures.draw import curve_table

    runs: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for kept in sorted(p for p in (Path(folder) / "models").glob("*") if (p / "metrics.jsonl").is_file()):
        rows = []
        for number, line in enumerate((kept / "metrics.jsonl").read_text().splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{kept / 'metrics.jsonl'}, line {number}: not JSON ({exc.msg})") from None
        try:
            config = (yaml.safe_load((kept / "config.yaml").read_text()) if (kept / "config.yaml").is_file() else None) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{kept / 'config.yaml'}: not YAML ({exc})") from None
        if not isinstance(config, dict):
            raise ValueError(f"{kept / 'config.yaml'}: a mapping of the fine-tune's settings was expected, got {type(config).__name__}")
        runs[kept.name] = (_unit_method(kept.name, config), rows)
    return curve_table(runs)


def _unit_method(folder_name: str, config: dict[str, Any]) -> str:
    """The unit's method from its kept folder's name, MODEL-METHOD-sSEED (cuset.experiment.runner.
    kept_model), so that a variant (cuset-floor) keeps its own name; the config's method where the
    name is not of that form."""
    model, seed = config.get("model"), config.get("seed")
    head, tail = f"{model}-", f"-s{seed}"
    if model and seed is not None and folder_name.startswith(head) and folder_name.endswith(tail):
        return folder_name[len(head):-len(tail)]
    return str(config.get("method") or folder_name)


def write_training_figure(folder: str | Path, name: str = "training_nll") -> Path:
    """Draw the kept fine-tunes' training curves (cuset.figures.draw.training_curves_figure) into
    FOLDER/NAME.png; refuses a folder that keeps none."""
    from cuset.figures.draw import save_figure, training_curves_figure

    curves = kept_curves(folder)
    if curves.empty:
        raise ValueError(f"{folder}: no kept fine-tune with a metrics.jsonl under models/; nothing to draw")
    return save_figure(training_curves_figure(curves), folder, name, formats=("png",))["png"]
