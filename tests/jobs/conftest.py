"""What the job tests share: a workspace of each test's own, waiting, the tiny preset, and
finding a job's processes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cuset import jobs
from cuset.jobs.runner import stop_group
from cuset.train import TrainConfig


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A workspace of the test's own (so other tests' jobs never share the queue); jobs run
    here unless a test names a Ray cluster. Any job still running at the end is stopped."""
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.delenv("CUSET_RAY_ADDRESS", raising=False)
    yield tmp_path / "ws"
    for job in jobs.JobStore().list(jobs.ACTIVE):
        if job.on_ray:
            try:
                jobs.cancel(job.id)
            except jobs.JobError:
                pass
        elif job.pid:
            stop_group(job.pid, grace=2)


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def tiny(method: str = "sft", **values) -> TrainConfig:
    return TrainConfig.from_preset("tiny", method=method, **values)


def processes_naming(folder: Path) -> list[int]:
    """Live processes whose command line names `folder` (independent of process groups)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
