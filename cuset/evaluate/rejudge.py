"""Rejudge stored candidates: check their stored code again under the current evaluator and say
which verdicts change.

    cuset eval rejudge 12                       # run 12 of the workspace store -> a new run beside it
    cuset eval rejudge --all                    # every completed run that is not itself a rejudge
    cuset eval rejudge --experiment cpu-135m    # a committed experiment's kept replies: cuset.experiment.rejudge

    from cuset.evaluate.rejudge import rejudge_run, diff_lines
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
the two like any two runs. This module knows no experiment: `recheck`, `Settings`, `Stored`,
`counts` and `diff_lines` are what cuset.experiment.rejudge builds an experiment's rejudge from.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from cuset.evaluate.harness import Candidate, evaluate_candidates
from cuset.evaluate.results import RESULT_COLUMNS, ResultStore

Progress = Callable[[int, int], None]
SUFFIX = " (rejudged)"
EVALUATOR_ERROR = "evaluator error:"  # cuset.evaluate.harness's message when our own code failed a check


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
            lines.append(f"  {r['task_id']} #{r['sample']}: {r['old_status']} -> {r['status']}  {first_line(r.get('message'))}")
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


def first_line(text: Any, limit: int = 160) -> str:
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


def stored_candidate(task: Any, sample: int, code: str, reply: str, level: Any = None, family: Any = "", split: Any = "") -> Candidate:
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
        cand = stored_candidate(tasks[row["task_id"]], row["sample"], row["code"], row["reply"], row["level"], row["family"], row["split"])
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
