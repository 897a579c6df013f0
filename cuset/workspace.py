"""The workspace: one folder holding the SQLite store, the score cache and the models.

    workspace/
      cuset.db          SQLite (WAL): data sets, scoring runs, objective configs (jobs later)
      cache/scores/     per-sample token scores, Parquet, keyed by (model, text, template) hash
      models/           the converted default model and the tiny test model
      configs/          named objective configs (YAML)

Where: `$CUSET_WORKSPACE` if set, else `workspace/` in the source checkout when running from
one (git-ignored), else `~/.cache/cuset`. Created on first use.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    name TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    n_samples INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS scoring_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    model TEXT NOT NULL,
    model_fingerprint TEXT NOT NULL,
    n_samples INTEGER NOT NULL,
    n_tokens INTEGER NOT NULL,
    n_truncated INTEGER NOT NULL,
    cache_hits INTEGER NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS objective_configs (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    updated REAL NOT NULL
);
"""


def workspace_dir() -> Path:
    """The workspace folder in force (created if missing)."""
    env = os.environ.get("CUSET_WORKSPACE")
    if env:
        path = Path(env).expanduser()
    else:
        repo = Path(__file__).resolve().parent.parent
        in_checkout = (repo / "requirements.txt").is_file() and (repo / "cuset").is_dir()
        path = repo / "workspace" if in_checkout else Path.home() / ".cache" / "cuset"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Store:
    """The workspace's SQLite database. Short transactions, WAL mode and a busy timeout let
    the app, the CLI and background jobs read and write at once without 'database is locked'."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or workspace_dir() / "cuset.db"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30.0)
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=30000")
            with db:
                yield db
        finally:
            db.close()

    def record_dataset(self, name: str, source: str, n_samples: int, fingerprint: str) -> None:
        with self.connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO datasets VALUES (?, ?, ?, ?, ?)",
                (name, source, n_samples, fingerprint, time.time()),
            )

    def record_scoring_run(self, **fields: Any) -> int:
        fields.setdefault("created", time.time())
        cols = ", ".join(fields)
        marks = ", ".join("?" for _ in fields)
        with self.connect() as db:
            cur = db.execute(f"INSERT INTO scoring_runs ({cols}) VALUES ({marks})", tuple(fields.values()))
            return int(cur.lastrowid or 0)

    def save_objective_config(self, name: str, config: dict[str, Any]) -> None:
        with self.connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO objective_configs VALUES (?, ?, ?)",
                (name, json.dumps(config, sort_keys=True), time.time()),
            )

    def rows(self, table: str, limit: int = 100) -> list[dict[str, Any]]:
        if table not in {"datasets", "scoring_runs", "objective_configs"}:
            raise ValueError(f"Unknown table {table!r}.")
        with self.connect() as db:
            order = "created" if table != "objective_configs" else "updated"
            cur = db.execute(f"SELECT * FROM {table} ORDER BY {order} DESC LIMIT ?", (limit,))
            return [dict(row) for row in cur.fetchall()]
