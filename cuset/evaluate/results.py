"""Evaluation results in the workspace store: runs, one row per candidate, CSV export.

    store = ResultStore()
    run_id = store.create_run(label="cuset cpu #3", model="job:3", method="cuset", suite="bundled", backend="cpu", ...)
    store.add_results(run_id, records)          # dicts from cuset.evaluate.harness
    store.finish_run(run_id, "completed", summary)
    frame = store.frame([run_id, other_id])      # pandas, one row per candidate, run columns joined

Each candidate row keeps the evidence needed later to ask whether failures sit inside
low-confidence regions: the generated reply and extracted code, the error category and
message with the line mapped into the candidate's file, and the first differing output element;
`tolerance` (the profile judged under) and `integrity` (JSON: static findings, the poisoned run,
the trial inputs' seeds and distributions, mutated inputs, flags).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd

from cuset.workspace import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS eval_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL DEFAULT '',
    train_job INTEGER,
    eval_job INTEGER,
    suite TEXT NOT NULL DEFAULT '',
    backend TEXT NOT NULL DEFAULT '',
    n_samples INTEGER NOT NULL DEFAULT 1,
    config TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'running',
    summary TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS eval_results (
    run_id INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    sample INTEGER NOT NULL,
    level INTEGER,
    family TEXT NOT NULL DEFAULT '',
    split TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    compiled INTEGER NOT NULL,
    correct INTEGER NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    error_line INTEGER,
    max_abs_error REAL,
    max_rel_error REAL,
    first_diff TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL DEFAULT '',
    atol REAL,
    rtol REAL,
    runtime_ms REAL,
    ref_runtime_ms REAL,
    wall_s REAL,
    tolerance TEXT NOT NULL DEFAULT '',
    integrity TEXT NOT NULL DEFAULT '',
    code TEXT NOT NULL DEFAULT '',
    reply TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, task_id, sample)
);
"""

RESULT_COLUMNS = ("task_id", "sample", "level", "family", "split", "status", "compiled", "correct", "message", "error_line",
                  "max_abs_error", "max_rel_error", "first_diff", "path", "atol", "rtol", "runtime_ms", "ref_runtime_ms", "wall_s",
                  "tolerance", "integrity", "code", "reply")
# Columns added after the table's first release: older databases gain them when opened.
ADDED_RESULT_COLUMNS = (("ref_runtime_ms", "REAL"), ("tolerance", "TEXT NOT NULL DEFAULT ''"), ("integrity", "TEXT NOT NULL DEFAULT ''"))
# Every status a candidate row can have (cuset.evaluate.check.CATEGORIES); only `correct` counts as correct.
# `reward_hack`: the output does not depend on the compiled kernels, or a static check failed it.
STATUSES = ("compile_error", "runtime_error", "timeout", "resource_limit", "unsupported", "wrong_result", "reward_hack", "race", "memory_error",
            "sync_error", "correct", "compiled")
RUN_COLUMNS = ("label", "model", "method", "train_job", "eval_job", "suite", "backend", "n_samples")


class ResultStore:
    """The eval tables of the workspace's SQLite store (WAL; safe with concurrent jobs)."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store or Store()
        with self.store.connect() as db:
            db.executescript(SCHEMA)
            have = {row[1] for row in db.execute("PRAGMA table_info(eval_results)")}
            for name, kind in ADDED_RESULT_COLUMNS:
                if name not in have:
                    db.execute(f"ALTER TABLE eval_results ADD COLUMN {name} {kind}")

    def create_run(self, config: dict[str, Any] | None = None, **fields: Any) -> int:
        unknown = set(fields) - set(RUN_COLUMNS)
        if unknown:
            raise ValueError(f"unknown eval run fields {sorted(unknown)}; known: {', '.join(RUN_COLUMNS)}")
        fields = {**fields, "config": json.dumps(config or {}, sort_keys=True, default=str), "created": time.time()}
        cols = ", ".join(fields)
        with self.store.connect() as db:
            cur = db.execute(f"INSERT INTO eval_runs ({cols}) VALUES ({', '.join('?' for _ in fields)})", tuple(fields.values()))
            return int(cur.lastrowid or 0)

    def add_results(self, run_id: int, records: list[dict[str, Any]]) -> None:
        rows = []
        for r in records:
            row = [run_id] + [r.get(c) for c in RESULT_COLUMNS]
            rows.append(row)
        marks = ", ".join("?" for _ in range(len(RESULT_COLUMNS) + 1))
        with self.store.connect() as db:
            db.executemany(f"INSERT OR REPLACE INTO eval_results (run_id, {', '.join(RESULT_COLUMNS)}) VALUES ({marks})",
                           [[_plain(v) for v in row] for row in rows])

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None = None) -> None:
        with self.store.connect() as db:
            db.execute("UPDATE eval_runs SET status = ?, summary = ?, finished = ? WHERE id = ?",
                       (status, json.dumps(summary or {}, default=str), time.time(), run_id))

    def runs(self, limit: int = 200) -> pd.DataFrame:
        with self.store.connect() as db:
            rows = [dict(r) for r in db.execute("SELECT * FROM eval_runs ORDER BY id DESC LIMIT ?", (limit,))]
        frame = pd.DataFrame(rows)
        if not frame.empty:
            with self.store.connect() as db:
                counts = {r[0]: (r[1], r[2], r[3]) for r in db.execute(
                    "SELECT run_id, COUNT(*), SUM(compiled), SUM(correct) FROM eval_results GROUP BY run_id")}
            frame["candidates"] = [counts.get(i, (0, 0, 0))[0] for i in frame["id"]]
            frame["compile_rate"] = [counts[i][1] / counts[i][0] if counts.get(i, (0,))[0] else float("nan") for i in frame["id"]]
            frame["correct_rate"] = [counts[i][2] / counts[i][0] if counts.get(i, (0,))[0] else float("nan") for i in frame["id"]]
        return frame

    def version(self) -> tuple[Any, ...]:
        """A cheap stamp of the eval tables: changes when a run is added or finishes or a
        candidate's result is stored (the app redraws its run list only then)."""
        with self.store.connect() as db:
            runs = db.execute("SELECT COUNT(*), MAX(id), GROUP_CONCAT(status, ','), MAX(COALESCE(finished, 0)) FROM eval_runs").fetchone()
            results = db.execute("SELECT COUNT(*) FROM eval_results").fetchone()
        return (*tuple(runs), results[0])

    def get_run(self, run_id: int) -> dict[str, Any]:
        with self.store.connect() as db:
            row = db.execute("SELECT * FROM eval_runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise ValueError(f"no evaluation run {run_id}")
        out = dict(row)
        out["config"] = json.loads(out["config"] or "{}")
        out["summary"] = json.loads(out["summary"] or "{}")
        return out

    def frame(self, run_ids: list[int] | None = None) -> pd.DataFrame:
        """One row per candidate with its run's label, model, method, backend joined in."""
        query = ("SELECT r.*, e.label, e.model, e.method, e.backend, e.suite, e.train_job FROM eval_results r "
                 "JOIN eval_runs e ON e.id = r.run_id")
        params: tuple[Any, ...] = ()
        if run_ids:
            query += f" WHERE r.run_id IN ({', '.join('?' for _ in run_ids)})"
            params = tuple(run_ids)
        with self.store.connect() as db:
            frame = pd.DataFrame([dict(r) for r in db.execute(query + " ORDER BY r.run_id, r.task_id, r.sample", params)])
        if not frame.empty:
            frame["compiled"] = frame["compiled"].astype(bool)
            frame["correct"] = frame["correct"].astype(bool)
        return frame


def results_csv(frame: pd.DataFrame, with_code: bool = False) -> str:
    """A results table as CSV text (without the code and reply columns unless asked)."""
    out = frame if with_code else frame.drop(columns=[c for c in ("code", "reply") if c in frame.columns])
    return out.to_csv(index=False)


def export_csv(frame: pd.DataFrame, path: Path, with_code: bool = False) -> Path:
    """Write `results_csv` to `path` (whole or not at all)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_text(results_csv(frame, with_code))
    tmp.replace(path)
    return path


def _plain(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, default=str)
    if isinstance(v, float) and v != v:
        return None
    return v
