"""Rejudge a committed experiment's kept replies under today's evaluator (cuset.evaluate.rejudge
does the checking; this module knows the results folder).

    cuset eval rejudge --experiment cpu-135m    # analysis/results/cpu-135m's kept replies
                                                #   -> analysis/results/cpu-135m/rejudge.csv + rejudge.json
    cuset eval rejudge --experiment NAME --unit MODEL/METHOD/sSEED/MODE --apply   # that unit's verdicts replaced
    cuset eval rejudge --experiment NAME --reextract   # the code today's extractor takes from each kept reply

    from cuset.experiment.rejudge import rejudge_experiment, write_experiment_rejudge, experiment_out
    result = rejudge_experiment("cpu-135m")     # ExperimentRejudge: one UnitRejudge per kept unit

The committed files are never touched: the rejudge writes a CSV (one row per candidate of the
units whose replies were kept: the candidates.csv columns plus old_status and checked) and a JSON
summary (settings, per unit counts and transitions) to paths the caller names, refusing to
replace existing ones unless told to. Only `--apply` (apply_experiment_rejudge) writes the new
verdicts into the results folder, for a unit whose stored verdicts are void (our evaluator
failed under it, not its candidates).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cuset.evaluate.harness import Candidate
from cuset.evaluate.rejudge import (
    Progress,
    Settings,
    Stored,
    counts,
    diff_lines,
    evaluator_commit,
    first_line,
    recheck,
    stored_candidate,
    task_texts,
)
from cuset.experiment.config import RESULTS_DIR
from cuset.experiment.results import RunInfo, kept_replies, read_replies, read_table, replies_path, write_reply_file
from cuset.files import atomic_write
from cuset.generate.kernel_only import extraction, wrappers_of

CSV_NAME = "rejudge.csv"
EXPERIMENT_COLUMNS = ("model", "method", "seed", "mode", "task", "level", "split", "family", "sample", "old_status", "status",
                      "compiled", "correct", "checked", "error_line", "error")



@dataclass
class UnitRejudge:
    """One evaluated unit of an experiment (model, method, seed, mode) rejudged."""

    info: Any  # cuset.experiment.results.RunInfo
    settings: Settings
    source: str  # where the settings came from
    records: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ExperimentRejudge:
    folder: Path
    units: list[UnitRejudge]
    without_replies: list[Any]  # RunInfos of candidates.csv with no replies kept: not rejudged
    seconds: float = 0.0
    stored_mismatch: int = 0  # replies whose own status differs from candidates.csv's
    commit: str = ""  # evaluator_commit() when it ran
    reextracted: bool = False  # the code checked is today's extraction of each reply, not the stored code


def results_folder(name: str | Path) -> Path:
    """An experiment's results folder: a path to one, or a name under analysis/results/."""
    path = Path(name).expanduser()
    folder = path if path.is_dir() else RESULTS_DIR / str(name)
    if not folder.is_dir():
        have = ", ".join(sorted(p.name for p in RESULTS_DIR.iterdir() if (p / "candidates.csv").is_file())) if RESULTS_DIR.is_dir() else ""
        raise ValueError(f"{name}: neither a results folder nor an experiment under {RESULTS_DIR} (experiments with results: {have or 'none'})")
    if not (folder / "candidates.csv").is_file():
        raise ValueError(f"{folder}: no candidates.csv, so no stored verdicts to compare with: is it an experiment's results folder?")
    return folder


def _unit_settings(folder: Path, info: Any, overrides: Mapping[str, Any] | None) -> tuple[Settings, str, str, str]:
    """(settings, where they came from, suite, protocol) of one unit: its configs/eval_*.yaml as
    the experiment ran it, else experiment.yaml's evaluation section."""
    import yaml

    path = folder / "configs" / f"eval_{info.model}_{info.method}_s{info.seed}_{info.mode}.yaml"
    source = path if path.is_file() else folder / "experiment.yaml"
    try:
        data = yaml.safe_load(source.read_text()) if source.is_file() else {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{source}: cannot read the evaluation settings ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of settings, got {type(data).__name__}")
    if source.name == "experiment.yaml":
        data = data.get("evaluation") or {}
        data = {**data, **(data.get("options") or {})}
    where = str(source.relative_to(folder)) if source.is_file() else "EvalConfig's defaults"
    return Settings.of(data, overrides), where, str(data.get("suite") or "bundled"), str(data.get("protocol") or "full")


def unit_name(info: Any) -> str:
    """A unit as `--unit` names it: MODEL/METHOD/sSEED/MODE (its key without `eval/`)."""
    return f"{info.model}/{info.method}/s{info.seed}/{info.mode}"


def experiment_candidates(folder: Path, overrides: Mapping[str, Any] | None = None, only: Iterable[str] = (),
                          reextract: bool = False) -> tuple[list[tuple[UnitRejudge, list[Stored]]], list[Any], int]:
    """Each kept unit with its stored candidates (those `only` names, when it names some); the
    units of candidates.csv without replies; and how many replies' own status differs from
    candidates.csv's (which counts as old). With `reextract`, each candidate's code is what
    today's extractor takes from its reply, not the code stored with it. Raises
    ValueError for a name in `only` that is no kept unit."""
    csv = read_table(folder / "candidates.csv")
    need = {"model", "method", "seed", "mode", "task", "sample", "status"}
    if not need <= set(csv.columns):
        raise ValueError(f"{folder / 'candidates.csv'}: missing column(s) {', '.join(sorted(need - set(csv.columns)))}")
    kept = kept_replies(folder)
    if not kept:
        raise ValueError(f"{folder}: no replies kept ({folder / 'replies'} has no MODEL_METHOD_sSEED_MODE.jsonl.gz), so there is no "
                         f"code to check again; replies are kept by experiments evaluated since they were (see write_replies)")
    only = list(only)
    unknown = sorted(set(only) - {unit_name(i) for i in kept})
    if unknown:
        raise ValueError(f"{folder}: no kept unit {', '.join(unknown)}; kept: {', '.join(unit_name(i) for i in kept)}")
    if only:
        kept = [i for i in kept if unit_name(i) in only]
    listed = {RunInfo(str(m), str(me), int(s), str(mo)) for m, me, s, mo in csv[["model", "method", "seed", "mode"]].itertuples(index=False)}
    if only:
        listed = {i for i in listed if unit_name(i) in only}
    rows = {(str(r.model), str(r.method), int(r.seed), str(r.mode), str(r.task), int(r.sample)): r._asdict()
            for r in csv.itertuples(index=False)}
    units, mismatch = [], 0
    for info in kept:
        settings, source, suite, protocol = _unit_settings(folder, info, overrides)
        replies = read_replies(folder, info)
        name = f"{folder.name}/replies/{info.model}_{info.method}_s{info.seed}_{info.mode}"
        tasks = task_texts(suite, [str(r["task"]) for r in replies], name)
        wrappers = None  # reextract under kernel-only: each task's wrapper, made once per unit
        if reextract and protocol == "kernel-only":
            wrappers = wrappers_of({t: tasks[t].reference_text or "" for t in {str(r["task"]) for r in replies}})
        stored = []
        for number, r in enumerate(replies, 1):
            row = rows.get((info.model, info.method, info.seed, info.mode, str(r["task"]), int(r["sample"])))
            if row is None:
                raise ValueError(f"{name}, line {number}: task {r['task']} sample {r['sample']} has no row in candidates.csv "
                                 f"(the replies and the table are from different passes: rewrite the results folder)")
            mismatch += str(r["status"]) != str(row["status"])
            task = tasks[str(r["task"])]
            if reextract:  # what a pass would store now (cuset.generate.run uses the same extraction)
                code = extraction(str(r["reply"] or ""), wrappers[task.id] if wrappers is not None else None).code
            else:
                code = r["code"]
            cand = stored_candidate(task, r["sample"], code, r["reply"], row.get("level"), row.get("family"), row.get("split"))
            line = r.get("error_line")
            old = {"task_id": cand.task_id, "sample": cand.sample, "level": cand.level, "family": cand.family, "split": cand.split,
                   "status": str(row["status"]), "compiled": bool(row.get("compiled")), "correct": bool(row.get("correct")),
                   "message": r.get("message") or "", "error_line": None if line is None else int(line), "code": cand.code, "reply": cand.reply}
            stored.append(Stored(cand, old))
        units.append((UnitRejudge(info, settings, source), stored))
    return units, sorted(listed - set(kept), key=lambda i: (i.model, i.method, i.seed, i.mode)), mismatch


def rejudge_experiment(name: str | Path, overrides: Mapping[str, Any] | None = None, workers: int = 0,
                       progress: Progress | None = None, only: Iterable[str] = (), reextract: bool = False) -> ExperimentRejudge:
    """Check the kept replies' code of an experiment again (of the units `only` names, when it
    names some; with `reextract`, the code today's extractor takes from each reply); nothing is
    written (see write_experiment_rejudge, apply_experiment_rejudge). Units with the same
    settings are checked together, so the workers stay busy across units."""
    folder = results_folder(name)
    units, missing, mismatch = experiment_candidates(folder, overrides, only, reextract)
    started = time.time()
    groups: dict[Settings, list[int]] = {}
    for k, (unit, _) in enumerate(units):
        groups.setdefault(unit.settings, []).append(k)
    total = sum(sum(bool(s.candidate.code.strip()) for s in stored) for _, stored in units)
    done_before = 0
    for settings, members in groups.items():
        flat = [(k, s) for k in members for s in units[k][1]]
        offset = done_before
        step = (lambda d, n, offset=offset: progress(offset + d, total)) if progress else None
        keyed = [Stored(Candidate(**{**asdict(s.candidate), "task_id": f"{k}\0{s.candidate.task_id}"}),
                        {**s.old, "task_id": f"{k}\0{s.old['task_id']}"}) for k, s in flat]
        records = recheck(keyed, settings, workers, step)
        for (k, _), record in zip(flat, records):
            record["task_id"] = record["task_id"].split("\0", 1)[1]
            units[k][0].records.append(record)
        done_before += sum(bool(s.candidate.code.strip()) for _, s in flat)
    return ExperimentRejudge(folder, [u for u, _ in units], missing, round(time.time() - started, 1), mismatch, evaluator_commit(), reextract)


def experiment_rows(result: ExperimentRejudge) -> pd.DataFrame:
    """One row per rejudged candidate (EXPERIMENT_COLUMNS): candidates.csv's columns with the new
    verdict, plus old_status and checked."""
    rows = []
    for unit in result.units:
        for r in unit.records:
            line = r.get("error_line")
            rows.append({**asdict(unit.info), "task": r["task_id"], "level": r.get("level"), "split": r.get("split") or "",
                         "family": r.get("family") or "", "sample": int(r["sample"]), "old_status": r["old_status"],
                         "status": r["status"], "compiled": bool(r.get("compiled")), "correct": bool(r.get("correct")),
                         "checked": bool(r["checked"]), "error_line": None if line is None or line != line else int(line),
                         "error": first_line(r.get("message"), 200)})
    frame = pd.DataFrame(rows, columns=list(EXPERIMENT_COLUMNS))
    frame["error_line"] = frame["error_line"].astype("Int64")
    return frame


def experiment_summary(result: ExperimentRejudge) -> dict[str, Any]:
    """The JSON summary: totals, and per unit its settings, their source and its counts."""
    all_records = [r for u in result.units for r in u.records]
    return {"experiment": result.folder.name, "evaluator_commit": result.commit, "reextracted": result.reextracted,
            "seconds": result.seconds, **counts(all_records),
            "stored_status_mismatch": result.stored_mismatch,
            "units": [{**asdict(u.info), "settings": asdict(u.settings), "settings_from": u.source, **counts(u.records)} for u in result.units],
            "not_rejudged": [{**asdict(i), "why": "no replies kept"} for i in result.without_replies]}


def experiment_out(folder: str | Path, out: str | Path | None = None, force: bool = False) -> tuple[Path, Path]:
    """Where write_experiment_rejudge writes: `out` (default: the results folder's rejudge.csv)
    and the same name with .json. Asked before any check, so that a refusal costs nothing:
    existing files are replaced only with `force`."""
    csv_path = Path(out) if out else Path(folder) / CSV_NAME
    if csv_path.suffix != ".csv":
        raise ValueError(f"--out {csv_path}: name a .csv file (the summary goes beside it as .json)")
    json_path = csv_path.with_suffix(".json")
    there = [str(p) for p in (csv_path, json_path) if p.exists()]
    if there and not force:
        raise ValueError(f"{' and '.join(there)} already there: pass --force to replace, or --out another.csv")
    return csv_path, json_path


def write_experiment_rejudge(result: ExperimentRejudge, csv_path: Path, json_path: Path) -> tuple[Path, Path]:
    """The rows as CSV and the summary as JSON (paths from experiment_out), each whole or not at all."""
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    text = experiment_rows(result).to_csv(index=False)
    atomic_write(csv_path, lambda tmp: tmp.write_text(text))
    summary = json.dumps(experiment_summary(result), indent=2, default=str) + "\n"
    atomic_write(json_path, lambda tmp: tmp.write_text(summary))
    return csv_path, json_path


def apply_experiment_rejudge(result: ExperimentRejudge) -> list[Path]:
    """Make the rejudged units' verdicts the results folder's: their rows of candidates.csv
    (the other units' rows and every row's engine stay) and the status, error line, message and
    first differing element of their kept replies. For a unit whose stored verdicts are void (our
    evaluator failed, not the candidates: e.g. a sandbox changed under a running pass); the
    rejudge's own CSV and JSON say what changed and under which evaluator commit. Where this
    workspace's result store holds the unit's run, its rows get the new verdicts too (the results
    folder is rewritten from the store). Then `python -m analysis.experiment NAME --results-only`
    redraws the tables. Each file whole or not at all."""
    folder = result.folder
    csv = read_table(folder / "candidates.csv")
    new = experiment_rows(result)
    key = ["model", "method", "seed", "mode", "task", "sample"]
    index = {tuple(str(v) for v in row): n for n, row in enumerate(csv[key].itertuples(index=False))}
    updated = ("status", "compiled", "correct", "error_line", "error")
    csv = csv.astype({c: object for c in updated if c in csv.columns})
    for row in new.itertuples(index=False):
        n = index[tuple(str(getattr(row, k)) for k in key)]
        for column in updated:
            value = getattr(row, column)
            csv.at[csv.index[n], column] = None if value is pd.NA else value
    paths = [folder / "candidates.csv"]
    atomic_write(paths[0], lambda tmp: csv.to_csv(tmp, index=False))
    for unit in result.units:
        by_key = {(str(r["task_id"]), int(r["sample"])): r for r in unit.records}
        replies = read_replies(folder, unit.info)
        for reply in replies:
            record = by_key.get((str(reply["task"]), int(reply["sample"])))
            if record is not None and record.get("checked"):
                error_line = record.get("error_line")
                reply.update(status=record["status"], error_line=None if error_line is None or error_line != error_line else int(error_line),
                             message=str(record.get("message") or ""), first_diff=str(record.get("first_diff") or ""),
                             code=str(record.get("code") or ""))  # today's extraction where the rejudge re-extracted
        paths.append(write_reply_file(replies_path(folder, unit.info), replies))
        _store_verdicts(folder, unit)
    return paths


def _store_verdicts(folder: Path, unit: UnitRejudge) -> int | None:
    """The unit's checked records written over its run's rows in this workspace's result store,
    where the store holds that run (state.json's run id, with the unit's label): the results
    folder is rewritten from the store (--results-only, every pass), which would otherwise bring
    the old verdicts back. The run id, or None when the store has no such run."""
    from cuset.evaluate.results import ResultStore
    from cuset.experiment.runner import State, unit_label

    try:
        us = State.load(folder / "state.json").units.get(f"eval/{unit_name(unit.info)}")
    except (OSError, ValueError, TypeError):
        return None
    run_id = us.run_id if us is not None else None
    if run_id is None:
        return None
    store = ResultStore()
    try:
        run = store.get_run(int(run_id))
    except ValueError:
        return None
    if run["label"] != unit_label(folder.name, unit.info):
        return None  # another workspace's run numbering: not this unit's run
    store.add_results(int(run_id), [r for r in unit.records if r.get("checked")])
    return int(run_id)


def command(args: Any, overrides: Mapping[str, Any]) -> int:
    """`cuset eval rejudge --experiment NAME [--unit U] [--reextract] [--apply] [--out F] [--force] [--json]`
    (its parser is cuset.evaluate.commands'; `overrides` the settings given on the command line)."""
    from tqdm import tqdm

    bars: list[Any] = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc="rejudging", unit="check", file=sys.stderr))
        bars[0].total, bars[0].n = total, done
        bars[0].refresh()

    folder = results_folder(args.experiment)
    paths = experiment_out(folder, args.out, args.force)
    try:
        result = rejudge_experiment(folder, overrides, args.workers, progress, args.unit, args.reextract)
    finally:
        while bars:
            bars.pop().close()
    csv_path, json_path = write_experiment_rejudge(result, *paths)
    applied = apply_experiment_rejudge(result) if args.apply else []
    summary = experiment_summary(result)
    if args.json:
        print(json.dumps(summary, default=str))
        return 0
    for unit in result.units:
        info = unit.info
        print("\n".join(diff_lines(unit.records, f"{info.model} {info.method} s{info.seed} {info.mode} ({unit.source})")))
    for info in result.without_replies:
        print(f"{info.model} {info.method} s{info.seed} {info.mode}: not rejudged (no replies kept)")
    print(f"{result.folder.name}: {summary['checked']} checked, {summary['changed']} verdicts changed in {result.seconds} s; "
          f"wrote {csv_path} and {json_path}")
    if applied:
        print(f"applied: the new verdicts are now those of {', '.join(str(p) for p in applied)}; redraw the tables with "
              f"`python -m analysis.experiment {result.folder.name} --results-only`")
    return 0
