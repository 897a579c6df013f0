"""Rejudge stored candidates: check their stored code again under the current evaluator and say
which verdicts change.

    cuset eval rejudge 12                       # run 12 of the workspace store -> a new run beside it
    cuset eval rejudge --all                    # every completed run that is not itself a rejudge
    cuset eval rejudge --experiment cpu-135m    # analysis/results/cpu-135m's kept replies
                                                #   -> analysis/results/cpu-135m/rejudge.csv + rejudge.json
    cuset eval rejudge --experiment NAME --unit MODEL/METHOD/sSEED/MODE --apply   # that unit's verdicts replaced

    from cuset.evaluate.rejudge import rejudge_run, rejudge_experiment, diff_lines
    result = rejudge_run(12)                    # Rejudged: old and new run ids, one record per candidate
    print("\\n".join(diff_lines(result.records)))

Why: the evaluator changes (a static check added, a poisoned run, a tolerance fixed), and a
verdict stored before the change may not be the verdict the candidate gets now. A rejudge checks
the stored code as it is (no new generation, no re-extraction from the reply) against the
suite's current task file, with the settings the run was evaluated under (backend, trials,
tolerance profile, static policy, timeout) unless overridden, through the same parallel harness
as an evaluation (cuset.evaluate.harness.evaluate_candidates).

A candidate with no code (a reply the extractor found nothing in) needs no check: its stored row
is carried over unchanged and counted as carried. A check that ends in an evaluator error (our
code failed, not the candidate) is run once more on its own, so that it does not show up as a
changed verdict. Each record of a rejudge has the new verdict's columns plus `old_status` and
`checked` (False when carried), and `retried` (the first error) where it was checked again.

Store runs: the new run is a row of the same store, labelled "<old label> (rejudged)", its config
the old one with the settings used and `rejudge_of: <old run id>`, so the Results page compares
the two like any two runs. Experiments: the committed files are never touched; the rejudge
writes a CSV (one row per candidate of the units whose replies were kept: the candidates.csv
columns plus old_status and checked) and a JSON summary (settings, per unit counts and
transitions) to paths the caller names, refusing to replace existing ones unless told to. Only
`--apply` (apply_experiment_rejudge) writes the new verdicts into the results folder, for a
unit whose stored verdicts are void (our evaluator failed under it, not its candidates).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from cuset.evaluate.harness import Candidate, evaluate_candidates
from cuset.evaluate.results import RESULT_COLUMNS, ResultStore

Progress = Callable[[int, int], None]
SUFFIX = " (rejudged)"
CSV_NAME = "rejudge.csv"
EVALUATOR_ERROR = "evaluator error:"  # cuset.evaluate.harness's message when our own code failed a check
EXPERIMENT_COLUMNS = ("model", "method", "seed", "mode", "task", "level", "split", "family", "sample", "old_status", "status",
                      "compiled", "correct", "checked", "error_line", "error")


@dataclass(frozen=True)
class Settings:
    """The evaluator settings a verdict depends on (cuset.evaluate.evaluation.EvalConfig's names)."""

    backend: str = "cpu"
    trials: int = 5
    timeout_s: float = 120.0
    tolerance: str = "v0"
    static_policy: str = "strict"

    def __post_init__(self) -> None:
        from cuset.evaluate.check import BACKENDS
        from cuset.evaluate.static_checks import check_policy
        from cuset.evaluate.verdict import check_profile

        if self.backend not in BACKENDS:
            raise ValueError(f"backend {self.backend!r}: choose one of {', '.join(BACKENDS)}")
        check_profile(self.tolerance)
        check_policy(self.static_policy)
        if self.trials < 1 or self.timeout_s <= 0:
            raise ValueError(f"trials={self.trials}, timeout_s={self.timeout_s}: trials must be >= 1 and timeout_s > 0")

    @classmethod
    def of(cls, config: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> Settings:
        """The settings of an evaluation config (a dict; missing names take EvalConfig's
        defaults), with `overrides` (None values ignored) on top."""
        names = [f.name for f in fields(cls)]
        values = {n: config[n] for n in names if config.get(n) is not None}
        values.update({n: v for n, v in (overrides or {}).items() if n in names and v is not None})
        unknown = set(overrides or {}) - set(names)
        if unknown:
            raise ValueError(f"unknown rejudge setting(s) {sorted(unknown)}; known: {', '.join(names)}")
        return cls(**values)


@dataclass
class Stored:
    """One stored candidate: what to check again, and its stored row (at least `status`)."""

    candidate: Candidate
    old: dict[str, Any]


@dataclass
class Rejudged:
    """A store run rejudged: the records in the old run's order (task, sample)."""

    old_run: int
    new_run: int
    label: str
    settings: Settings
    records: list[dict[str, Any]]
    seconds: float


# ---------------------------------------------------------------- the check and the diff


def recheck(stored: list[Stored], settings: Settings, workers: int = 0, progress: Progress | None = None,
            on_record: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """New records in `stored`'s order, each with `old_status` and `checked`. Candidates with
    code are checked in parallel (evaluate_candidates); the others keep their stored row.
    `progress(done, total)` counts the checked ones; `on_record` sees each record when ready."""
    out: list[dict[str, Any] | None] = [None] * len(stored)
    to_check = []
    for i, s in enumerate(stored):
        if s.candidate.code.strip():
            to_check.append(i)
            continue
        out[i] = {**s.old, "old_status": s.old["status"], "checked": False}
        if on_record:
            on_record(out[i])
    index = {(stored[i].candidate.task_id, stored[i].candidate.sample): i for i in to_check}

    def keep(record: dict[str, Any]) -> None:
        i = index[(record["task_id"], record["sample"])]
        record.update(old_status=stored[i].old["status"], checked=True)
        if on_record:
            on_record(record)

    if progress:
        progress(0, len(to_check))
    records = evaluate_candidates([stored[i].candidate for i in to_check], backend=settings.backend, trials=settings.trials,
                                  timeout=settings.timeout_s, workers=workers, progress=progress, on_record=keep,
                                  tolerance=settings.tolerance, static_policy=settings.static_policy)
    for i, record in zip(to_check, records):
        out[i] = record
    for i in to_check:
        if str(out[i].get("message", "")).startswith(EVALUATOR_ERROR):
            # our own failure, not the candidate's (e.g. two checks harvesting one build into
            # the cache at once): a diff of verdicts must not count it, so it is checked again alone
            again = evaluate_candidates([stored[i].candidate], backend=settings.backend, trials=settings.trials,
                                        timeout=settings.timeout_s, workers=1, tolerance=settings.tolerance,
                                        static_policy=settings.static_policy)[0]
            again.update(old_status=stored[i].old["status"], checked=True, retried=out[i]["message"][:500])
            out[i] = again
            if on_record:
                on_record(again)
    return [r for r in out if r is not None]


def transitions(records: Iterable[Mapping[str, Any]]) -> Counter[tuple[str, str]]:
    """(old status, new status) -> number of candidates, every candidate counted."""
    return Counter((str(r["old_status"]), str(r["status"])) for r in records)


def counts(records: list[dict[str, Any]]) -> dict[str, Any]:
    """candidates, checked, carried, unchanged, changed, the changed transitions as
    {"correct -> reward_hack": n} (most frequent first), and how many checks were retried
    after an evaluator error."""
    moves = transitions(records)
    changed = {f"{a} -> {b}": n for (a, b), n in moves.most_common() if a != b}
    return {"candidates": len(records), "checked": sum(bool(r["checked"]) for r in records),
            "carried": sum(not r["checked"] for r in records), "unchanged": sum(n for (a, b), n in moves.items() if a == b),
            "changed": sum(changed.values()), "transitions": changed, "retried": sum(bool(r.get("retried")) for r in records)}


def transition_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Old status (rows) x new status (columns): number of candidates."""
    frame = pd.DataFrame([{"old": r["old_status"], "new": r["status"]} for r in records])
    if frame.empty:
        return pd.DataFrame()
    return pd.crosstab(frame["old"], frame["new"], rownames=["old \\ new"], colnames=[None])


def diff_lines(records: list[dict[str, Any]], unit: str = "") -> list[str]:
    """What changed, for people: the counts, each changed transition, the old x new table and
    one line per changed candidate (task, sample, old -> new, the new message's first line)."""
    c = counts(records)
    head = f"{unit}: " if unit else ""
    lines = [f"{head}{c['candidates']} candidates, {c['checked']} checked, {c['carried']} carried over unchanged (no code), "
             f"{c['unchanged']} verdicts unchanged, {c['changed']} changed"]
    lines += [f"  {move}: {n}" for move, n in c["transitions"].items()]
    if c["retried"]:
        lines.append(f"  ({c['retried']} checked again alone after an evaluator error; see `retried` in the records)")
    if not c["changed"]:
        return lines
    lines += ["", *transition_table(records).to_string().splitlines(), "", "changed candidates:"]
    for r in records:
        if r["old_status"] != r["status"]:
            lines.append(f"  {r['task_id']} #{r['sample']}: {r['old_status']} -> {r['status']}  {_first_line(r.get('message'))}")
    return lines


def evaluator_commit() -> str:
    """The git commit of the evaluator's code ("+dirty" when cuset/evaluate has uncommitted
    changes), to name which evaluator a rejudge ran under; "" outside a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    if head.returncode:
        return ""
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _first_line(text: Any, limit: int = 160) -> str:
    return text.strip().splitlines()[0][:limit] if isinstance(text, str) and text.strip() else ""


# ---------------------------------------------------------------- task files


def task_texts(suite: str, ids: Iterable[str], where: str) -> dict[str, Any]:
    """The current tasks of `suite` by id, for every id in `ids`; a ValueError naming the ids
    the suite no longer has."""
    from cuset.evaluate.evaluation import EvalConfig, select_tasks

    tasks = {t.id: t for t in select_tasks(EvalConfig(suite=suite or "bundled", solutions="reference"))}
    missing = sorted(set(ids) - set(tasks))
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise ValueError(f"{where}: task(s) {shown} are not in suite {suite!r} now; a rejudge needs each candidate's task file "
                         f"(restore the task, or rejudge against the suite the run used)")
    return tasks


def _candidate(task: Any, sample: int, code: str, reply: str, level: Any = None, family: Any = "", split: Any = "") -> Candidate:
    level = task.level if level is None or level != level else int(level)
    return Candidate(task_id=task.id, sample=int(sample), code=code or "", task_text=task.task_text, level=level,
                     family=str(family or task.family or ""), split=str(split or task.split or ""), reply=reply or "")


# ---------------------------------------------------------------- runs of the workspace store


def store_candidates(store: ResultStore, run_id: int) -> tuple[dict[str, Any], list[Stored]]:
    """The run's row and its candidates; a ValueError naming the run when it is unknown or empty."""
    try:
        run = store.get_run(run_id)
    except ValueError:
        known = store.runs()
        ids = ", ".join(str(i) for i in sorted(known["id"])) if not known.empty else "none yet"
        raise ValueError(f"no evaluation run {run_id} in the store {store.store.path}; its runs: {ids} (`cuset results list`)") from None
    frame = store.frame([run_id])
    if frame.empty:
        raise ValueError(f"evaluation run {run_id} ({run['label']}) has no candidates stored: nothing to rejudge")
    tasks = task_texts(run["suite"] or run["config"].get("suite", "bundled"), frame["task_id"], f"run {run_id}")
    stored = []
    for row in frame.to_dict(orient="records"):
        old = {c: row.get(c) for c in RESULT_COLUMNS}
        cand = _candidate(tasks[row["task_id"]], row["sample"], row["code"], row["reply"], row["level"], row["family"], row["split"])
        stored.append(Stored(cand, old))
    return run, stored


def rejudgeable_runs(store: ResultStore) -> list[int]:
    """--all: every completed run with candidates that is not itself a rejudge, oldest first."""
    runs = store.runs(limit=1_000_000)
    if runs.empty:
        return []
    keep = [int(r.id) for r in runs.itertuples() if r.status == "completed" and r.candidates
            and "rejudge_of" not in json.loads(r.config or "{}")]
    return sorted(keep)


def rejudge_run(run_id: int, store: ResultStore | None = None, overrides: Mapping[str, Any] | None = None, workers: int = 0,
                progress: Progress | None = None) -> Rejudged:
    """Check run `run_id`'s candidates again and store the verdicts as a new run (see the module
    docstring); the new run is `failed` with the error if our own code fails midway."""
    from cuset.evaluate.evaluation import summary_of

    store = store or ResultStore()
    run, stored = store_candidates(store, run_id)
    settings = Settings.of(run["config"] if run["config"].get("backend") else {**run["config"], "backend": run["backend"]}, overrides)
    label = f"{run['label'] or f'run {run_id}'}{SUFFIX}"
    config = {**run["config"], **asdict(settings), "rejudge_of": run_id, "label": label, "evaluator_commit": evaluator_commit()}
    new_run = store.create_run(config=config, label=label, model=run["model"], method=run["method"], train_job=run["train_job"],
                               suite=run["suite"], backend=settings.backend, n_samples=run["n_samples"])
    started = time.time()
    try:
        records = recheck(stored, settings, workers, progress, on_record=lambda r: store.add_results(new_run, [r]))
    except BaseException as exc:
        store.finish_run(new_run, "failed", {"error": f"{type(exc).__name__}: {exc}", "rejudge_of": run_id})
        raise
    seconds = round(time.time() - started, 1)
    summary = summary_of(records)
    summary.update(seconds=seconds, rejudge={"of": run_id, **counts(records)})
    store.finish_run(new_run, "completed", summary)
    return Rejudged(run_id, new_run, label, settings, records, seconds)


# ---------------------------------------------------------------- a committed experiment's kept replies


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


def results_folder(name: str | Path) -> Path:
    """An experiment's results folder: a path to one, or a name under analysis/results/."""
    from cuset.experiment.config import RESULTS_DIR

    path = Path(name).expanduser()
    folder = path if path.is_dir() else RESULTS_DIR / str(name)
    if not folder.is_dir():
        have = ", ".join(sorted(p.name for p in RESULTS_DIR.iterdir() if (p / "candidates.csv").is_file())) if RESULTS_DIR.is_dir() else ""
        raise ValueError(f"{name}: neither a results folder nor an experiment under {RESULTS_DIR} (experiments with results: {have or 'none'})")
    if not (folder / "candidates.csv").is_file():
        raise ValueError(f"{folder}: no candidates.csv, so no stored verdicts to compare with: is it an experiment's results folder?")
    return folder


def _unit_settings(folder: Path, info: Any, overrides: Mapping[str, Any] | None) -> tuple[Settings, str, str]:
    """(settings, where they came from, suite) of one unit: its configs/eval_*.yaml as the
    experiment ran it, else experiment.yaml's evaluation section."""
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
    return Settings.of(data, overrides), where, str(data.get("suite") or "bundled")


def unit_name(info: Any) -> str:
    """A unit as `--unit` names it: MODEL/METHOD/sSEED/MODE (its key without `eval/`)."""
    return f"{info.model}/{info.method}/s{info.seed}/{info.mode}"


def experiment_candidates(folder: Path, overrides: Mapping[str, Any] | None = None,
                          only: Iterable[str] = ()) -> tuple[list[tuple[UnitRejudge, list[Stored]]], list[Any], int]:
    """Each kept unit with its stored candidates (those `only` names, when it names some); the
    units of candidates.csv without replies; and how many replies' own status differs from
    candidates.csv's (which counts as old). Raises ValueError for a name in `only` that is no
    kept unit."""
    from cuset.experiment.results import RunInfo, kept_replies, read_replies, read_table

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
        settings, source, suite = _unit_settings(folder, info, overrides)
        replies = read_replies(folder, info)
        name = f"{folder.name}/replies/{info.model}_{info.method}_s{info.seed}_{info.mode}"
        tasks = task_texts(suite, [str(r["task"]) for r in replies], name)
        stored = []
        for number, r in enumerate(replies, 1):
            row = rows.get((info.model, info.method, info.seed, info.mode, str(r["task"]), int(r["sample"])))
            if row is None:
                raise ValueError(f"{name}, line {number}: task {r['task']} sample {r['sample']} has no row in candidates.csv "
                                 f"(the replies and the table are from different passes: rewrite the results folder)")
            mismatch += str(r["status"]) != str(row["status"])
            cand = _candidate(tasks[str(r["task"])], r["sample"], r["code"], r["reply"], row.get("level"), row.get("family"), row.get("split"))
            line = r.get("error_line")
            old = {"task_id": cand.task_id, "sample": cand.sample, "level": cand.level, "family": cand.family, "split": cand.split,
                   "status": str(row["status"]), "compiled": bool(row.get("compiled")), "correct": bool(row.get("correct")),
                   "message": r.get("message") or "", "error_line": None if line is None else int(line), "code": cand.code, "reply": cand.reply}
            stored.append(Stored(cand, old))
        units.append((UnitRejudge(info, settings, source), stored))
    return units, sorted(listed - set(kept), key=lambda i: (i.model, i.method, i.seed, i.mode)), mismatch


def rejudge_experiment(name: str | Path, overrides: Mapping[str, Any] | None = None, workers: int = 0,
                       progress: Progress | None = None, only: Iterable[str] = ()) -> ExperimentRejudge:
    """Check the kept replies' code of an experiment again (of the units `only` names, when it
    names some); nothing is written (see write_experiment_rejudge, apply_experiment_rejudge).
    Units with the same settings are checked together, so the workers stay busy across units."""
    folder = results_folder(name)
    units, missing, mismatch = experiment_candidates(folder, overrides, only)
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
    return ExperimentRejudge(folder, [u for u, _ in units], missing, round(time.time() - started, 1), mismatch, evaluator_commit())


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
                         "error": _first_line(r.get("message"), 200)})
    frame = pd.DataFrame(rows, columns=list(EXPERIMENT_COLUMNS))
    frame["error_line"] = frame["error_line"].astype("Int64")
    return frame


def experiment_summary(result: ExperimentRejudge) -> dict[str, Any]:
    """The JSON summary: totals, and per unit its settings, their source and its counts."""
    all_records = [r for u in result.units for r in u.records]
    return {"experiment": result.folder.name, "evaluator_commit": result.commit, "seconds": result.seconds, **counts(all_records),
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
    from cuset.files import atomic_write

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
    rejudge's own CSV and JSON say what changed and under which evaluator commit. Then
    `python -m analysis.experiment NAME --results-only` redraws the tables. Each file whole or not at all."""
    import gzip

    from cuset.experiment.results import read_table, replies_path
    from cuset.files import atomic_write

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
        path = replies_path(folder, unit.info)
        by_key = {(str(r["task_id"]), int(r["sample"])): r for r in unit.records}
        lines = []
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            reply = json.loads(line)
            record = by_key.get((str(reply["task"]), int(reply["sample"])))
            if record is not None and record.get("checked"):
                error_line = record.get("error_line")
                reply.update(status=record["status"], error_line=None if error_line is None or error_line != error_line else int(error_line),
                             message=str(record.get("message") or ""), first_diff=str(record.get("first_diff") or ""))
            lines.append(json.dumps(reply, ensure_ascii=False) + "\n")
        data = gzip.compress("".join(lines).encode(), compresslevel=9, mtime=0)
        atomic_write(path, lambda tmp, data=data: tmp.write_bytes(data))
        paths.append(path)
    return paths
