"""The job process's side: status, phase, progress and heartbeats written to the store.

`JobReporter.for_folder(JOB_DIR)` finds the job from JOB_DIR/job.json (written when the job
was submitted); a folder without one (a run started by hand) reports nothing. A daemon thread
writes a heartbeat every few seconds, independent of how long a training step takes, so
`last_heartbeat` says when the process was last seen alive.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cuset.jobs.store import ACTIVE, QUEUED, RUNNING, STARTING, JobStore

HEARTBEAT_S = 2.0


class JobReporter:
    """Reports one job's life to the store (used by rank 0 of the job process only)."""

    def __init__(self, store: JobStore, job_id: int, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.store = store
        self.job_id = job_id
        self.heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_folder(cls, folder: Path) -> JobReporter | None:
        path = Path(folder) / "job.json"
        if not path.is_file():
            return None
        info = json.loads(path.read_text())
        return cls(JobStore(Path(info["db"])), int(info["id"]))

    def start(self, pid: int) -> bool:
        """Mark the job running; False when it was cancelled before the process got here."""
        now = time.time()
        if not self.store.transition(self.job_id, (QUEUED, STARTING, RUNNING), RUNNING, phase="loading", last_heartbeat=now):
            return False
        if self.store.get(self.job_id).pid is None:
            self.store.update(self.job_id, pid=pid)
        self._thread = threading.Thread(target=self._beat, name="cuset-heartbeat", daemon=True)
        self._thread.start()
        return True

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                self.store.update(self.job_id, last_heartbeat=time.time())
            except Exception as exc:  # noqa: BLE001 - a missed heartbeat must not kill training
                print(f"cuset: heartbeat not written ({exc})", file=sys.stderr)

    def phase(self, text: str) -> None:
        self.store.update(self.job_id, phase=text[:200], last_heartbeat=time.time())

    def progress(self, step: int, total: int, eta_s: float, phase: str = "training") -> None:
        eta = eta_s if eta_s == eta_s else None  # NaN -> NULL
        self.store.update(self.job_id, step=int(step), total_steps=int(total), eta_s=eta, phase=phase, last_heartbeat=time.time())

    def finish(self, status: str, result: dict[str, Any] | None = None, error: str = "") -> None:
        """Write the final status, unless the job is being cancelled (cancel writes that)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        values: dict[str, Any] = {"finished": time.time(), "last_heartbeat": time.time(), "error": error, "eta_s": None, "phase": status}
        if result is not None:
            values["result"] = result
        self.store.transition(self.job_id, tuple(s for s in ACTIVE if s != "cancelling"), status, **values)
