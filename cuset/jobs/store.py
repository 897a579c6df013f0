"""The `jobs` table in the workspace's SQLite store, and the `Job` record read from it.

Every write is one short transaction through `cuset.workspace.Store.connect` (WAL, busy
timeout), so a running job's heartbeats, the CLI and the app can read and write at once.
Status changes are compare-and-set (`transition`): a job that finished a moment ago is never
turned into `lost` or `cancelled` by a slower reader.

    queued -> starting -> running -> completed | failed
                                  -> cancelling -> cancelled
    (starting | running) with its process gone -> lost;  lost | failed | cancelled -> queued (resume)

A job with a `ray_address` runs on that Ray cluster (`cuset.jobs.ray_jobs`); `ray_job_id` is
its Ray submission id. Such jobs take no local slot: `claim_next` counts and starts local jobs only.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cuset.workspace import Store, workspace_dir

QUEUED, STARTING, RUNNING, CANCELLING = "queued", "starting", "running", "cancelling"
COMPLETED, FAILED, CANCELLED, LOST = "completed", "failed", "cancelled", "lost"
ACTIVE = (STARTING, RUNNING, CANCELLING)
FINAL = (COMPLETED, FAILED, CANCELLED, LOST)
RESUMABLE = (FAILED, CANCELLED, LOST)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT '',
    preset TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    phase TEXT NOT NULL DEFAULT '',
    step INTEGER NOT NULL DEFAULT 0,
    total_steps INTEGER NOT NULL DEFAULT 0,
    eta_s REAL,
    pid INTEGER,
    attempts INTEGER NOT NULL DEFAULT 1,
    error TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    last_heartbeat REAL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status);
"""

# Columns added after the first release of the table, in order: every database, new or old,
# gets the ones it lacks when it is first opened (old rows read the default).
ADDED_COLUMNS = (
    ("ray_address", "TEXT NOT NULL DEFAULT ''"),
    ("ray_job_id", "TEXT NOT NULL DEFAULT ''"),
)
LOCAL = "ray_address = ''"


class JobError(ValueError):
    """A job request that cannot be done (unknown id, wrong status); the message says why."""


def jobs_dir() -> Path:
    return workspace_dir() / "jobs"


def job_folder(job_id: int) -> Path:
    """workspace/jobs/<id>/: config.yaml, job.json, log.txt, metrics.jsonl, checkpoints/, final/."""
    return jobs_dir() / str(job_id)


@dataclass
class Job:
    """One row of the jobs table. Times are Unix seconds; `eta_s` is seconds left."""

    id: int
    kind: str
    method: str
    preset: str
    model: str
    status: str
    phase: str
    step: int
    total_steps: int
    eta_s: float | None
    pid: int | None
    attempts: int
    error: str
    created: float
    started: float | None
    finished: float | None
    last_heartbeat: float | None
    result: dict[str, Any] = field(default_factory=dict)
    ray_address: str = ""
    ray_job_id: str = ""

    @property
    def folder(self) -> Path:
        return job_folder(self.id)

    @property
    def progress(self) -> float:
        """Fraction of the optimizer steps done (0 before training starts)."""
        return self.step / self.total_steps if self.total_steps else 0.0

    @property
    def is_final(self) -> bool:
        return self.status in FINAL

    @property
    def on_ray(self) -> bool:
        """Submitted to a Ray cluster (`ray_address`) instead of run as a local process."""
        return bool(self.ray_address)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "progress": self.progress, "folder": str(self.folder)}

    @classmethod
    def from_row(cls, row: Any) -> Job:
        data = dict(row)
        data["result"] = json.loads(data.get("result") or "{}")
        return cls(**data)


_READY: set[Path] = set()


class JobStore:
    """Reads and writes the jobs table of one workspace database."""

    def __init__(self, path: Path | None = None) -> None:
        self.store = Store(path)
        if self.store.path not in _READY:  # the table is created once per process and database
            with self.store.connect() as db:
                db.executescript(SCHEMA)
            self._add_columns()
            _READY.add(self.store.path)

    def _columns(self, db: Any) -> set[str]:
        return {row["name"] for row in db.execute("PRAGMA table_info(jobs)")}

    def _add_columns(self) -> None:
        """ALTER TABLE for each of ADDED_COLUMNS the table lacks (under BEGIN IMMEDIATE: two
        processes opening an old database at once do not both add a column)."""
        with self.connect() as db:
            if {name for name, _ in ADDED_COLUMNS} <= self._columns(db):
                return
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            have = self._columns(db)
            for name, declaration in ADDED_COLUMNS:
                if name not in have:
                    db.execute(f"ALTER TABLE jobs ADD COLUMN {name} {declaration}")

    @property
    def path(self) -> Path:
        return self.store.path

    def connect(self) -> Any:
        return self.store.connect()

    def create(self, kind: str, method: str, preset: str, model: str, ray_address: str = "") -> int:
        with self.connect() as db:
            cur = db.execute(
                "INSERT INTO jobs (kind, method, preset, model, status, phase, created, ray_address) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (kind, method, preset, model, QUEUED, "queued", time.time(), ray_address),
            )
            return int(cur.lastrowid or 0)

    def record_finished(self, kind: str, method: str, preset: str, model: str, result: dict[str, Any], started: float | None,
                        finished: float | None, steps: int, phase: str) -> int:
        """A job that ran elsewhere, inserted already completed (no scheduler ever sees it queued)."""
        with self.connect() as db:
            cur = db.execute(
                "INSERT INTO jobs (kind, method, preset, model, status, phase, step, total_steps, result, created, started, finished)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (kind, method, preset, model, COMPLETED, phase, steps, steps, json.dumps(result, default=float), time.time(), started, finished),
            )
            return int(cur.lastrowid or 0)

    def delete(self, job_id: int) -> None:
        """Remove a job's row (only for a row just added whose folder could not be made)."""
        with self.connect() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (int(job_id),))

    def get(self, job_id: int) -> Job:
        with self.connect() as db:
            row = db.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone()
            if row is None:
                recent = [str(r["id"]) for r in db.execute("SELECT id FROM jobs ORDER BY id DESC LIMIT 10")]
        if row is None:
            raise JobError(f"No job {job_id}; recent jobs: {', '.join(recent) or 'none'} (see `cuset jobs list`).")
        return Job.from_row(row)

    def list(self, statuses: tuple[str, ...] = (), limit: int = 100, on_ray: bool | None = None, kinds: tuple[str, ...] = ()) -> list[Job]:
        """Newest first; only `statuses` (and `kinds`: 'train', 'eval', 'figures') when given;
        only Ray (True) or local (False) jobs when `on_ray` is given."""
        query, params, where = "SELECT * FROM jobs", [], []
        if statuses:
            where.append(f"status IN ({', '.join('?' for _ in statuses)})")
            params += list(statuses)
        if kinds:
            where.append(f"kind IN ({', '.join('?' for _ in kinds)})")
            params += list(kinds)
        if on_ray is not None:
            where.append(f"NOT ({LOCAL})" if on_ray else LOCAL)
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY id DESC LIMIT ?"
        with self.connect() as db:
            rows = db.execute(query, (*params, int(limit))).fetchall()
        return [Job.from_row(r) for r in rows]

    def version(self) -> tuple[Any, ...]:
        """A cheap stamp of the whole table: it changes whenever a job is added or changes
        status, phase, step or heartbeat, so a page can redraw only when something happened."""
        with self.connect() as db:
            row = db.execute(
                "SELECT COUNT(*), MAX(id), TOTAL(step), MAX(COALESCE(last_heartbeat, 0)), MAX(COALESCE(finished, 0)),"
                " GROUP_CONCAT(status || ':' || phase, ',') FROM jobs"
            ).fetchone()
        return tuple(row)

    def update(self, job_id: int, **values: Any) -> None:
        if "result" in values:
            values["result"] = json.dumps(values["result"], default=float)
        sets = ", ".join(f"{k} = ?" for k in values)
        with self.connect() as db:
            db.execute(f"UPDATE jobs SET {sets} WHERE id = ?", (*values.values(), int(job_id)))

    def transition(self, job_id: int, from_statuses: tuple[str, ...], to: str, **values: Any) -> bool:
        """Set status `to` (and `values`) only if the job is in one of `from_statuses`;
        returns whether it was."""
        if "result" in values:
            values["result"] = json.dumps(values["result"], default=float)
        values = {"status": to, **values}
        sets = ", ".join(f"{k} = ?" for k in values)
        marks = ", ".join("?" for _ in from_statuses)
        with self.connect() as db:
            cur = db.execute(
                f"UPDATE jobs SET {sets} WHERE id = ? AND status IN ({marks})",
                (*values.values(), int(job_id), *from_statuses),
            )
            return cur.rowcount == 1

    def claim_next(self, limit: int) -> Job | None:
        """Atomically move the oldest queued local job to `starting` when fewer than `limit`
        local jobs are active (BEGIN IMMEDIATE: two schedulers never start the same job or
        overshoot). Ray jobs are neither counted nor claimed here."""
        with self.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            marks = ", ".join("?" for _ in ACTIVE)
            active = db.execute(f"SELECT COUNT(*) FROM jobs WHERE status IN ({marks}) AND {LOCAL}", ACTIVE).fetchone()[0]
            if active >= limit:
                return None
            row = db.execute(f"SELECT * FROM jobs WHERE status = ? AND {LOCAL} ORDER BY id LIMIT 1", (QUEUED,)).fetchone()
            if row is None:
                return None
            now = time.time()
            db.execute(
                "UPDATE jobs SET status = ?, phase = ?, pid = NULL, started = ?, last_heartbeat = ? WHERE id = ?",
                (STARTING, "starting", now, now, row["id"]),
            )
        return self.get(row["id"])
