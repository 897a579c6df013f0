"""The job process's side: status, phase, progress and heartbeats written to the store.

`JobReporter.for_folder(JOB_DIR)` finds the job from JOB_DIR/job.json (written when the job
was submitted); a folder without one (a run started by hand) reports nothing. A daemon thread
writes a heartbeat every few seconds, independent of how long a training step takes, so
`last_heartbeat` says when the process was last seen alive.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
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


def run_as_job(folder: Path, work: Callable[[Callable[[str, int, int], None]], dict[str, Any]]) -> int:
    """The body of a job process other than training (evaluations, figures): claim the job in
    JOB_DIR, run `work(progress)` with `progress(phase, done, total)` reported to the store (at
    most twice a second, and always the last step), write the final status with the dict
    `work` returns, then start the next queued job. Exit status: 0 done, 1 failed, 3 the job
    was not queued. Without JOB_DIR/job.json (a folder run by hand) nothing is reported."""
    from cuset.jobs.runner import schedule

    reporter = JobReporter.for_folder(folder)
    if reporter is not None and not reporter.start(os.getpid()):
        print(f"cuset: job {reporter.job_id} is not queued: nothing to run", flush=True)
        return 3
    started, last = time.time(), [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        print(f"{phase}: {done}/{total}", flush=True)
        if reporter is None or (time.time() - last[0] < 0.5 and done < total):
            return
        last[0] = time.time()
        rate = done / max(time.time() - started, 1e-6)
        # Nothing done yet: the time left is unknown (NULL), not zero. A batch whose rows all run
        # to the token cap finishes none until the end, and a zero here read as "done in 0 min".
        reporter.progress(done, total, (total - done) / rate if rate > 0 else float("nan"), phase=phase)

    try:
        result = work(progress)
    except Exception as exc:  # noqa: BLE001 - any failure becomes the job's final status
        traceback.print_exc()
        if reporter is not None:
            reporter.finish("failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return 1
    if reporter is not None:
        reporter.finish("completed", result)
        if not reporter.store.get(reporter.job_id).on_ray:
            schedule(reporter.store)
    return 0
