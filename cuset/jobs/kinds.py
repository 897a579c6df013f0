"""Job kinds: what the generic runner (cuset.jobs.runner) needs to know about each kind of job,
filled in by the stage that owns the kind, so that the runner imports no stage.

    entry_point("train")                       # 'cuset.train.run': the job is `python -m MODULE JOB_DIR`
    register(JobKind("train", resume_phase=f)) # done by the kind's entry module when it is imported
    get("train").resume_phase(job.folder)      # 'queued to resume from checkpoint-8'
    on_completed("train", hook)                # a higher stage's follow-up to a completed job
    completed("train", job_id, folder, config) # the job process runs the follow-ups; their log lines

`get` imports a kind's entry module by its name in ENTRY_POINTS when the kind is not registered
yet, so a job queued by the app is resumed by `cuset jobs resume` in a fresh process all the
same; an unknown kind is refused with the list of known ones. A kind that registers nothing gets
the defaults (a resumed job runs again from the start).

Follow-ups let a stage act when a job of a lower stage completes without that stage importing
it: a fine-tune whose TrainConfig asks for evaluations has them queued by cuset.evaluate.job.
FOLLOWERS names the modules that register follow-ups of a kind; `completed` imports them first.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuset.jobs.store import JobError

# kind -> the module its job process runs (`python -m MODULE JOB_DIR`), which registers the kind
ENTRY_POINTS = {"train": "cuset.train.run", "eval": "cuset.evaluate.job", "figures": "cuset.figures.job"}
# kind -> the modules that register follow-ups to its completed jobs (on_completed)
FOLLOWERS = {"train": ("cuset.evaluate.job",)}

FollowUp = Callable[[int, Path, Any], list[str]]  # (job id, job folder, the job's config) -> log lines


def run_again(folder: Path) -> str:
    """The default resume: no checkpoints, the job runs again from the start."""
    return "queued to run again"


@dataclass(frozen=True)
class JobKind:
    """What the runner asks of one kind of job beyond its entry point."""

    name: str
    resume_phase: Callable[[Path], str] = run_again  # job folder -> the phase a resumed job is queued with


_registered: dict[str, JobKind] = {}
_follow_ups: dict[str, dict[str, FollowUp]] = {}


def _check(name: str) -> None:
    if name not in ENTRY_POINTS:
        raise JobError(f"unknown job kind {name!r}; known kinds: {', '.join(ENTRY_POINTS)} (add a new one to ENTRY_POINTS in cuset.jobs.kinds)")


def entry_point(name: str) -> str:
    """The module a job of kind `name` runs as `python -m MODULE JOB_DIR`."""
    _check(name)
    return ENTRY_POINTS[name]


def register(kind: JobKind) -> JobKind:
    """Make `kind` the registered one of its name (again, when its module runs as __main__ too)."""
    _check(kind.name)
    _registered[kind.name] = kind
    return kind


def get(name: str) -> JobKind:
    """The registered kind `name`, importing its entry module first if needed; the defaults
    when the module registers nothing."""
    _check(name)
    if name not in _registered:
        importlib.import_module(ENTRY_POINTS[name])
    return _registered.get(name) or JobKind(name)


def on_completed(name: str, follow_up: FollowUp) -> None:
    """Call `follow_up(job id, folder, config)` in the job process when a job of kind `name`
    completes (registered once per function, however often its module is imported)."""
    _check(name)
    _follow_ups.setdefault(name, {})[follow_up.__qualname__] = follow_up


def completed(name: str, job_id: int, folder: Path, config: Any) -> list[str]:
    """Run the follow-ups to completed job `job_id` of kind `name`; their log lines, in order."""
    for module in FOLLOWERS.get(name, ()):
        importlib.import_module(module)
    lines: list[str] = []
    for follow_up in _follow_ups.get(name, {}).values():
        lines += follow_up(job_id, folder, config)
    return lines
