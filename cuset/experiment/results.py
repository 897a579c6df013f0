"""An experiment's results: one row per candidate, the summary with 95% intervals, and each
method against `sft` paired by task. Pure functions of a candidates table, plus the files.

    frame = ResultStore().frame(run_ids)                       # cuset.evaluate.results
    candidates = candidate_rows(frame, {run_id: RunInfo("smollm2-135m", "cuset", 42, "greedy"), ...})
    summary = summary_table(candidates)                        # by model, method, mode and level / split
    paired = paired_table(candidates)                          # method - sft per task, bootstrap CI, sign test
    paired = comparisons_table(candidates, registration)       # + which comparisons were registered (cuset.experiment.registration)
    write_results(out_dir, candidates, registration=registration)   # candidates.csv, summary.csv, paired.csv, table.md
    write_replies(out_dir, frame, runs)                        # replies/MODEL_METHOD_sSEED_MODE.jsonl.gz: what was generated

Statistics, and why:
- pass@k per task is the unbiased estimator (cuset.evaluate.metrics.pass_at_k) from the task's
  n candidates, averaged over tasks; pass@1 from n samples is the mean share correct.
- Its 95% interval: with one candidate per task (greedy) the Wilson interval over tasks
  (metrics.wilson_interval); with several the candidates of a task are not independent, so a
  percentile bootstrap over tasks (10,000 resamples). The compile rate: Wilson over candidates.
- Paired by task: d_t = (share correct of the method on task t) - (that of sft), averaged over
  seeds first; the mean of d with a bootstrap interval over tasks, and the exact two-sided sign
  test on the tasks where the two differ (ties dropped), which assumes nothing about the
  distribution of d. An interval spanning zero is reported as such (`spans_zero`).
- Registered comparisons (the experiment's `registration`) are marked `registered`, every other
  row `exploratory`; the registered ones of a model are one family, and their sign-test p are
  Holm-adjusted over it (a registered comparison not evaluated yet counts as p = 1), so that
  "below alpha" keeps its meaning with several comparisons.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from cuset.experiment.registration import Registration

REFERENCE = "sft"
CANDIDATE_COLUMNS = ("model", "method", "seed", "mode", "task", "level", "split", "family", "sample", "status", "compiled", "correct",
                     "error_line", "error")
N_BOOT = 10_000
REPLIES = "replies"  # the results folder's subfolder of generated replies, one file per evaluated unit
REPLY_FIELDS = ("task", "sample", "status", "error_line", "message", "first_diff", "reply", "code")


@dataclass(frozen=True)
class RunInfo:
    """What an evaluation run of the experiment evaluated."""

    model: str
    method: str
    seed: int
    mode: str


def _first_line(text: Any, limit: int = 200) -> str:
    if not isinstance(text, str) or not text.strip():
        return ""
    return text.strip().splitlines()[0][:limit]


def candidate_rows(frame: pd.DataFrame, runs: Mapping[int, RunInfo]) -> pd.DataFrame:
    """One row per candidate (CANDIDATE_COLUMNS) from a ResultStore frame, each run's rows
    labelled with its model, method, seed and mode. Rows of runs not in `runs` are left out."""
    if frame.empty:
        return pd.DataFrame(columns=list(CANDIDATE_COLUMNS))
    frame = frame[frame["run_id"].isin(list(runs))]
    info = pd.DataFrame([{"run_id": rid, **asdict(r)} for rid, r in runs.items()])
    merged = frame.drop(columns=[c for c in ("model", "method") if c in frame.columns]).merge(info, on="run_id")
    out = pd.DataFrame({
        "model": merged["model"], "method": merged["method"], "seed": merged["seed"].astype(int), "mode": merged["mode"],
        "task": merged["task_id"], "level": merged["level"], "split": merged["split"].fillna(""), "family": merged["family"].fillna(""),
        "sample": merged["sample"].astype(int), "status": merged["status"], "compiled": merged["compiled"].astype(bool),
        "correct": merged["correct"].astype(bool), "error_line": merged["error_line"].astype("Int64"),
        "error": [_first_line(m) for m in merged["message"]],
    })
    return sort_candidates(out)


def sort_candidates(frame: pd.DataFrame) -> pd.DataFrame:
    """Candidate rows in the tables' order: model, method (base first, then the figures'
    method order), seed, mode, task, sample."""
    return frame.sort_values(["model", "method", "seed", "mode", "task", "sample"], key=_method_key).reset_index(drop=True)


def _method_key(column: pd.Series) -> pd.Series:
    if column.name != "method":
        return column
    from cuset.palette import method_sort_key

    return column.map(lambda m: method_sort_key(m) if m != "base" else (-1, m))


# --- the replies: the evidence behind each row ----------------------------------------------------


def replies_path(out_dir: str | Path, info: RunInfo) -> Path:
    """replies/<model>_<method>_s<seed>_<mode>.jsonl.gz of a results folder."""
    return Path(out_dir) / REPLIES / f"{info.model}_{info.method}_s{info.seed}_{info.mode}.jsonl.gz"


def reply_records(frame: pd.DataFrame, run_id: int) -> list[dict[str, Any]]:
    """One dict per candidate of the run (REPLY_FIELDS, ordered by task and sample): the whole
    reply, the code extracted from it, the whole error message and the first differing output
    element. candidates.csv keeps the first line of the error only; these keep what is needed
    to ask later why a method fails (a reply that never closes its code, an invented API)."""
    rows = frame[frame["run_id"] == run_id].sort_values(["task_id", "sample"])
    records = []
    for row in rows.itertuples(index=False):
        line = getattr(row, "error_line", None)
        records.append({
            "task": row.task_id, "sample": int(row.sample), "status": row.status,
            "error_line": None if line is None or line != line else int(line),
            **{name: str(getattr(row, name, "") or "") for name in ("message", "first_diff", "reply", "code")},
        })
    return records


def write_replies(out_dir: str | Path, frame: pd.DataFrame, runs: Mapping[int, RunInfo]) -> list[Path]:
    """replies/<unit>.jsonl.gz for each run in `runs` that has rows in `frame` (a ResultStore
    frame). gzip without a time stamp, so the same replies give the same bytes and a rewrite
    after every pass changes no committed file; a unit whose rows are not in `frame` (done in
    another workspace) keeps the file it has."""
    from cuset.files import atomic_write

    paths = []
    if frame is None or frame.empty:
        return paths
    for run_id, info in runs.items():
        records = reply_records(frame, run_id)
        if not records:
            continue
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        data = gzip.compress(text, compresslevel=9, mtime=0)
        path = replies_path(out_dir, info)
        if path.is_file() and path.read_bytes() == data:
            paths.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda tmp, data=data: tmp.write_bytes(data))
        paths.append(path)
    return paths


def kept_replies(out_dir: str | Path) -> list[RunInfo]:
    """The units whose replies a results folder keeps, in the tables' order (model, method with
    base and sft first, seed, mode). File names are MODEL_METHOD_sSEED_MODE: no method or mode
    has an underscore, so the last three fields split off whatever the model's name holds."""
    infos = []
    for path in (Path(out_dir) / REPLIES).glob("*.jsonl.gz"):
        parts = path.name.removesuffix(".jsonl.gz").rsplit("_", 3)
        if len(parts) == 4 and parts[2].startswith("s") and parts[2][1:].isdigit():
            infos.append(RunInfo(parts[0], parts[1], int(parts[2][1:]), parts[3]))
    if not infos:
        return []
    order = sort_candidates(pd.DataFrame([{**asdict(i), "task": "", "sample": 0} for i in infos]))
    return [RunInfo(r.model, r.method, int(r.seed), r.mode) for r in order.itertuples(index=False)]


def read_replies(out_dir: str | Path, info: RunInfo) -> list[dict[str, Any]]:
    """The replies of one evaluated unit as written by write_replies; a ValueError naming the
    file and line when it is missing or not what write_replies writes."""
    path = replies_path(out_dir, info)
    if not path.is_file():
        raise ValueError(f"{path} is missing: the unit's replies were not kept (evaluated before replies were kept, or not yet).")
    try:
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a gzip file of JSON lines ({exc})") from exc
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {number}: not JSON ({exc.msg})") from exc
        missing = [f for f in REPLY_FIELDS if f not in record]
        if missing:
            raise ValueError(f"{path}, line {number}: missing field(s) {', '.join(missing)}")
        records.append(record)
    return records


# --- statistics ---------------------------------------------------------------------------------


def bootstrap_interval(values: np.ndarray, n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (one per task), resampling tasks."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return (float(low), float(high))


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test: P(a split at least as uneven as wins:losses | p = 1/2),
    2 * P(X <= min(wins, losses)) for X ~ Binomial(wins + losses, 1/2), capped at 1."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def per_task(candidates: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per (keys..., task): n candidates, c correct, n compiled, and level / split."""
    return (candidates.groupby([*keys, "task"], sort=False)
            .agg(n=("correct", "size"), c=("correct", "sum"), compiled=("compiled", "sum"), level=("level", "first"), split=("split", "first"))
            .reset_index())


def _summary_row(tasks: pd.DataFrame, ks: tuple[int, ...]) -> dict[str, Any]:
    from cuset.evaluate.metrics import pass_at_k, wilson_interval

    n_candidates = int(tasks["n"].sum())
    row: dict[str, Any] = {"tasks": len(tasks), "candidates": n_candidates, "n_per_task": int(tasks["n"].min())}
    one_each = bool((tasks["n"] == 1).all())
    for k in ks:
        if k > row["n_per_task"]:
            continue
        values = np.array([pass_at_k(int(n), int(c), k) for n, c in zip(tasks["n"], tasks["c"])])
        row[f"pass@{k}"] = float(values.mean())
        if k == 1 and one_each:
            low, high = wilson_interval(int(tasks["c"].sum()), len(tasks))
        elif values.size and (values.min() == values.max() == 0.0 or values.min() == values.max() == 1.0):
            # every task at 0 (or 1): a bootstrap over tasks has nothing to resample and says
            # 0.0-0.0; Wilson over the tasks (as if each had one candidate) is the honest bound
            low, high = wilson_interval(int(values.sum()), len(values))
        else:
            low, high = bootstrap_interval(values)
        row[f"pass@{k}_low"], row[f"pass@{k}_high"] = low, high
    compiled = int(tasks["compiled"].sum())
    row["compile_rate"] = compiled / n_candidates if n_candidates else math.nan
    row["compile_low"], row["compile_high"] = wilson_interval(compiled, n_candidates)
    return row


def summary_table(candidates: pd.DataFrame, ks: tuple[int, ...] = (1, 5, 10)) -> pd.DataFrame:
    """Per (model, method, seed 'all', mode) and group (`by`: all / level / split): tasks,
    candidates, pass@k with 95% intervals, compile rate with its Wilson interval. Seeds are
    pooled: a task's candidates of every seed count together."""
    keys = ["model", "method", "mode"]
    rows = []
    if candidates.empty:
        return pd.DataFrame(columns=[*keys, "by", "group", "tasks", "candidates"])
    tasks = per_task(candidates, keys)
    for key, part in tasks.groupby(keys, sort=False):
        base = dict(zip(keys, key))
        rows.append({**base, "by": "all", "group": "all", **_summary_row(part, ks)})
        for by in ("level", "split"):
            for group, sub in part.groupby(by, sort=True):
                if str(group) == "":
                    continue
                rows.append({**base, "by": by, "group": str(group), **_summary_row(sub, ks)})
    return pd.DataFrame(rows)


PAIRED_METRICS = {"correct": "c", "compiled": "compiled"}  # metric -> per_task's count column


def paired_table(candidates: pd.DataFrame, reference: str = REFERENCE, n_boot: int = N_BOOT, metric: str = "correct") -> pd.DataFrame:
    """Each method against `reference` per (model, mode), paired by task: mean difference of
    the per-task share of candidates that are `metric` ("correct", or "compiled": where no
    method solves anything, whether the code builds is the difference left to see), averaged
    over seeds, with a bootstrap 95% interval, wins / losses / ties and the exact sign test's p.
    Empty when the reference was not evaluated."""
    from cuset.evaluate.metrics import wilson_interval

    if metric not in PAIRED_METRICS:
        raise ValueError(f"paired metric {metric!r}: one of {tuple(PAIRED_METRICS)}")
    columns = ["model", "mode", "metric", "method", "reference", "tasks", "mean_method", "mean_reference", "diff", "diff_low", "diff_high",
               "spans_zero", "wins", "losses", "ties", "sign_p"]
    if candidates.empty or reference not in set(candidates["method"]):
        return pd.DataFrame(columns=columns)
    tasks = per_task(candidates, ["model", "method", "mode", "seed"])
    tasks["rate"] = tasks[PAIRED_METRICS[metric]] / tasks["n"]
    rates = tasks.groupby(["model", "mode", "method", "task"], sort=False)["rate"].mean().reset_index()
    rows = []
    for (model, mode), part in rates.groupby(["model", "mode"], sort=False):
        table = part.pivot(index="task", columns="method", values="rate")
        if reference not in table:
            continue
        for method in [m for m in table.columns if m != reference]:
            both = table[[method, reference]].dropna()
            d = (both[method] - both[reference]).to_numpy()
            low, high = bootstrap_interval(d, n_boot)
            if d.size and not d.any():
                # no task differs: the bootstrap's +0 to +0 would claim certainty. |mean d| is at most
                # the share of tasks on which the two differ, here 0 of n: Wilson's 95% upper bound for it
                bound = wilson_interval(0, d.size)[1]
                low, high = -bound, bound
            wins, losses = int((d > 0).sum()), int((d < 0).sum())
            rows.append({
                "model": model, "mode": mode, "metric": metric, "method": method, "reference": reference, "tasks": len(d),
                "mean_method": float(both[method].mean()), "mean_reference": float(both[reference].mean()),
                "diff": float(d.mean()) if d.size else math.nan, "diff_low": low, "diff_high": high,
                "spans_zero": bool(low <= 0 <= high) if d.size else True,
                "wins": wins, "losses": losses, "ties": int(d.size - wins - losses), "sign_p": sign_test(wins, losses),
            })
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["model", "mode", "method"], key=_method_key).reset_index(drop=True) if not out.empty else out


def holm(pvalues: Any) -> np.ndarray:
    """Holm's step-down adjustment: sorted ascending p_(1) <= ... <= p_(m), adjusted
    p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)); returned in the input's order."""
    p = np.asarray(pvalues, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled) if p.size else scaled
    return adjusted


def comparisons_table(candidates: pd.DataFrame, registration: Registration | None = None, n_boot: int = N_BOOT) -> pd.DataFrame:
    """paired.csv: each method - sft for each paired metric; with a registration, also its
    comparisons against another reference, a `comparison` column ('A - B'), `registration`
    ('registered' for the registered comparisons in its mode and primary metric, else
    'exploratory') and `holm_p` (registered rows only), registered rows first in the
    registration's order. Without one the frame is paired_table's, unchanged."""
    paired = pd.concat([paired_table(candidates, n_boot=n_boot, metric=m) for m in PAIRED_METRICS], ignore_index=True)
    if registration is None:
        return paired
    others = []
    for a, b in registration.pairs:
        if b != REFERENCE:
            against = paired_table(candidates, reference=b, n_boot=n_boot, metric=registration.metric)
            others.append(against[(against["method"] == a) & (against["mode"] == registration.mode)])
    paired = pd.concat([paired, *others], ignore_index=True) if others else paired
    order = {pair: i for i, pair in enumerate(registration.pairs)}
    keys = list(zip(paired["method"], paired["reference"]))
    registered = [(mode == registration.mode and metric == registration.metric and key in order)
                  for mode, metric, key in zip(paired["mode"], paired["metric"], keys)]
    paired = paired.assign(comparison=[f"{a} - {b}" for a, b in keys], registration=["registered" if r else "exploratory" for r in registered],
                           holm_p=math.nan, _rank=[order[k] if r else len(order) for k, r in zip(keys, registered)])
    for _, part in paired[paired["registration"] == "registered"].groupby("model", sort=False):
        p = np.concatenate([part["sign_p"].to_numpy(dtype=float), np.ones(len(order) - len(part))])  # not evaluated yet: p = 1
        paired.loc[part.index, "holm_p"] = holm(p)[: len(part)]
    later = paired["registration"] != "registered"
    paired = paired.assign(_later=later, _model=paired["model"].where(~later, ""), _order=range(len(paired)))
    paired = paired.sort_values(["_later", "_model", "_rank", "_order"]).drop(columns=["_later", "_model", "_rank", "_order"])
    return paired.reset_index(drop=True)


# --- files --------------------------------------------------------------------------------------


def _percent(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def markdown_table(summary: pd.DataFrame, paired: pd.DataFrame, registration: Registration | None = None, notes: tuple[str, ...] | list[str] = ()) -> str:
    """An experiment's table (table.md, shown in its analysis/results/NAME/README.md): pass@1 (95% interval) and compile rate per model, method and mode, by
    level and split; then, with a registration, its comparisons first (registered_lines); then
    each method - sft per task with its interval and sign test, all exploratory without one."""
    lines = ["| model | method | mode | tasks | pass@1 % (95% CI) | compile % | " + " | ".join(_group_names(summary)) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(_group_names(summary))]
    groups = _groups(summary)
    for (model, method, mode), part in summary.groupby(["model", "method", "mode"], sort=False):
        overall = part[part["by"] == "all"].iloc[0]
        cells = []
        for by, group in groups:
            row = part[(part["by"] == by) & (part["group"] == group)]
            cells.append(_percent(row["pass@1"].iloc[0]) if len(row) else "-")
        lines.append(
            f"| {model} | {method} | {mode} | {overall['tasks']} | {_percent(overall['pass@1'])} "
            f"({_percent(overall['pass@1_low'])}-{_percent(overall['pass@1_high'])}) | {_percent(overall['compile_rate'])} | "
            + " | ".join(cells) + " |"
        )
    if registration is not None:
        lines += registered_lines(summary, paired, registration, notes)
        paired = paired_of(paired)
        paired = paired[paired["registration"] != "registered"]
        if not paired.empty:
            lines += ["", "Exploratory comparisons (everything not registered):"]
    elif not paired.empty:
        lines += ["", "No registration: all comparisons exploratory."]
    if not paired.empty:
        lines += ["", "| model | mode | share of candidates | method - sft | tasks | difference, points (95% CI) | wins / losses / ties | sign test p |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in paired_of(paired).itertuples():
            spans = " (spans 0)" if r.spans_zero else ""
            lines.append(f"| {r.model} | {r.mode} | {r.metric} | {r.method} | {r.tasks} | {100 * r.diff:+.1f} ({100 * r.diff_low:+.1f} to "
                         f"{100 * r.diff_high:+.1f}){spans} | {r.wins} / {r.losses} / {r.ties} | {r.sign_p:.3g} |")
    return "\n".join(lines) + "\n"


def registered_lines(summary: pd.DataFrame, paired: pd.DataFrame, registration: Registration, notes: tuple[str, ...] | list[str] = ()) -> list[str]:
    """table.md's registered comparisons, before everything else: what was registered, `notes`
    (the registered copy, forced changes), then per model each registered comparison in its
    order with the primary metric of both, the paired interval, the sign test and Holm's p
    (a row not evaluated yet says so)."""
    r = registration
    k = len(r.pairs)
    lines = ["", f"Registered comparisons: {r.primary} of the {r.mode} pass, paired by task; registered {r.registered or '(draft)'}, "
                 f"n_samples {r.n_samples}, {r.tasks} tasks, alpha {r.alpha:g} (sign test, Holm over the {k} comparison{'s' * (k != 1)} of each model).",
             *[f"{note}" for note in notes],
             "", f"| model | comparison | mode | {r.primary} % (A vs B) | tasks | difference, points (95% CI) | wins / losses / ties | sign test p | Holm p | Holm p < {r.alpha:g} |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    have = paired_of(paired, reference=None)
    have = have[have["registration"] == "registered"]
    models = list(dict.fromkeys([*summary["model"], *have["model"]])) if len(summary) or len(have) else []
    for model in models:
        for a, b in r.pairs:
            row = have[(have["model"] == model) & (have["method"] == a) & (have["reference"] == b)]
            if row.empty:
                lines.append(f"| {model} | {a} - {b} | {r.mode} | - | - | not evaluated yet | - | - | - | - |")
                continue
            x = row.iloc[0]
            tasks = f"{x['tasks']}" + (f" (registered {r.tasks})" if int(x["tasks"]) != r.tasks else "")
            spans = " (spans 0)" if _truth(x["spans_zero"]) else ""
            lines.append(f"| {model} | {a} - {b} | {r.mode} | {_percent(x['mean_method'])} vs {_percent(x['mean_reference'])} | {tasks} | "
                         f"{100 * x['diff']:+.1f} ({100 * x['diff_low']:+.1f} to {100 * x['diff_high']:+.1f}){spans} | "
                         f"{x['wins']} / {x['losses']} / {x['ties']} | {x['sign_p']:.3g} | {x['holm_p']:.3g} | {'yes' if x['holm_p'] < r.alpha else 'no'} |")
    return lines


def _truth(value: Any) -> bool:
    return value == "True" if isinstance(value, str) else bool(value)


def paired_of(paired: pd.DataFrame, metric: str | None = None, reference: str | None = REFERENCE) -> pd.DataFrame:
    """A paired table's rows for `metric` (None: all) against `reference` (None: any; a
    registration may compare against another method than sft); a paired.csv written before
    compile rates were paired has no metric column and holds correctness only, one written
    without a registration has no registration column: every row is exploratory."""
    if "metric" not in paired.columns:
        paired = paired.assign(metric="correct")
    if "registration" not in paired.columns:
        paired = paired.assign(registration="exploratory")
    if reference is not None and "reference" in paired.columns:
        paired = paired[paired["reference"] == reference]
    return (paired if metric is None else paired[paired["metric"] == metric]).reset_index(drop=True)


def _groups(summary: pd.DataFrame) -> list[tuple[str, str]]:
    seen = summary[summary["by"] != "all"][["by", "group"]].drop_duplicates()
    return sorted(((r.by, r.group) for r in seen.itertuples()), key=lambda g: (g[0] != "level", g[1]))


def _group_names(summary: pd.DataFrame) -> list[str]:
    return [f"level {g}" if by == "level" else g.replace("_", "-") for by, g in _groups(summary)]


def write_results(out_dir: str | Path, candidates: pd.DataFrame, extra: dict[str, Any] | None = None,
                  registration: Registration | None = None, notes: tuple[str, ...] | list[str] = ()) -> list[Path]:
    """candidates.csv, summary.csv, paired.csv, table.md and summary.json (the counts and
    `extra`, and the registration where there is one) into `out_dir`, each written whole
    (temporary name, then renamed). `registration` marks the comparisons (comparisons_table);
    `notes` are printed above the registered ones."""
    from cuset.files import atomic_write

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summary_table(candidates)
    paired = comparisons_table(candidates, registration)
    counts = {"candidates": len(candidates), "runs": int(candidates.groupby(["model", "method", "seed", "mode"]).ngroups) if len(candidates) else 0}
    if registration is not None:
        counts["registration"] = {**registration.to_dict(), "notes": list(notes)}
    table = markdown_table(summary, paired, registration, notes) if not summary.empty else "no evaluated candidates yet\n"
    texts = {
        "candidates.csv": candidates.to_csv(index=False),
        "summary.csv": summary.to_csv(index=False),
        "paired.csv": paired.to_csv(index=False),
        "table.md": table,
        "summary.json": json.dumps({**counts, **(extra or {})}, indent=2, default=str),
    }
    paths = []
    for name, text in texts.items():
        path = out / name
        atomic_write(path, lambda tmp, text=text: tmp.write_text(text))
        paths.append(path)
    return paths


def read_results(out_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(candidates, summary, paired) as committed in an experiment's results folder; a
    ValueError naming the missing file when it has none."""
    out = Path(out_dir)
    frames = []
    for name in ("candidates.csv", "summary.csv", "paired.csv"):
        path = out / name
        if not path.is_file():
            raise ValueError(f"{path} is missing: run `python -m analysis.experiment {out.name}` (it writes the results folder).")
        frames.append(read_table(path))
    return frames[0], frames[1], frames[2]


def read_table(path: str | Path) -> pd.DataFrame:
    """One CSV of a results folder as written: empty cells are missing values, nothing else is
    (a task named "NA" stays a string); an empty file is an empty frame; a candidates table's
    error_line column is a nullable integer again."""
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    if "error_line" in frame.columns:
        frame["error_line"] = frame["error_line"].astype("Int64")
    return frame
