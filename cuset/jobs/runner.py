"""Starting, watching, cancelling and resuming job processes on this machine or on a Ray cluster.

A job is `python -m MODULE JOB_DIR`, MODULE its kind's entry point (`cuset.train.run` for a
fine-tune; or `torchrun --nproc_per_node N -m ...` when its config asks for several processes), started in its own session so that the job and all
its workers form one process group: cancelling signals the group (SIGTERM, then SIGKILL after
a grace period) and waits until no process of it is left. Its stdout and stderr go to
JOB_DIR/log.txt.

At most `max_running()` jobs run at once (`$CUSET_MAX_JOBS`, default 1: one training run
already uses every core of a small machine); `schedule()` starts queued jobs into free slots.
It runs when a job is submitted, cancelled or resumed, when a job process finishes, and in
`reconcile()`, which the CLI and the app call on start: it also marks `lost` every job whose
process is gone without a final status.

A job submitted with a Ray address runs the same entry point on that cluster instead
(`cuset.jobs.ray_jobs`): it takes no local slot (`schedule()` hands every queued Ray job to its
cluster), `cancel()` calls Ray's stop_job, `reconcile()` asks Ray whether it still runs (and
leaves it alone while the cluster cannot be reached), and `read_log()` fetches Ray's log.

What differs between kinds of job (their entry point, what a resumed one does) comes from
`cuset.jobs.kinds`, which each kind's own module fills in: nothing here imports a stage.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from cuset.jobs import kinds, ray_jobs
from cuset.jobs.store import (
    ACTIVE,
    CANCELLED,
    CANCELLING,
    FAILED,
    LOST,
    QUEUED,
    RESUMABLE,
    STARTING,
    Job,
    JobError,
    JobStore,
    job_folder,
)
from cuset.workspace import workspace_dir

START_GRACE_S = 120.0
_children: dict[int, subprocess.Popen] = {}


def max_running() -> int:
    """How many jobs may run at once: `$CUSET_MAX_JOBS`, default 1."""
    raw = os.environ.get("CUSET_MAX_JOBS", "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise JobError(f"CUSET_MAX_JOBS={raw!r}: set it to a whole number >= 1 (how many jobs may run at once).")
    return value


# --- processes ------------------------------------------------------------------------------


def job_command(kind: str, folder: Path, nproc: int) -> list[str]:
    """The command line of a job process."""
    module = kinds.entry_point(kind)
    if nproc > 1:
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", "-m", module, str(folder)]
    return [sys.executable, "-m", module, str(folder)]


def job_env() -> dict[str, str]:
    """What every job process gets on top of its environment: this workspace, unbuffered
    output, no progress bars in logs."""
    return {
        "CUSET_WORKSPACE": str(workspace_dir().resolve()),
        "PYTHONUNBUFFERED": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }


def launch(job: Job, nproc: int = 1) -> int:
    """Start the job's process in a new session; returns its pid (= its process group id).

    OpenMP threads wait passively (unless set otherwise): spinning threads of a job that
    shares its cores with other work made a training step 2-4x slower on a busy 2-core box."""
    folder = job.folder.resolve()
    env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, **job_env()}
    with (folder / "log.txt").open("ab") as log:
        proc = subprocess.Popen(
            job_command(job.kind, folder, nproc),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=str(Path(__file__).resolve().parents[2]),
            env=env,
            start_new_session=True,
        )
    _children[proc.pid] = proc
    return proc.pid


def _proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, process group) of a live pid from /proc, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _reap(pid: int) -> None:
    proc = _children.get(pid)
    if proc is not None and proc.poll() is not None:
        _children.pop(pid, None)


def process_alive(pid: int, folder: Path) -> bool:
    """The job's process still runs (not a zombie, and the pid was not reused by another
    program: its command line names the job folder)."""
    _reap(pid)
    if not Path("/proc").is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    state = _proc_state(pid)
    if state is None or state[0] in ("Z", "X"):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return str(folder.resolve()) in cmdline


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`."""
    _reap(pgid)
    if not Path("/proc").is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            state = _proc_state(int(entry.name))
            if state is not None and state[1] == pgid and state[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_group_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not group_members(pgid):
            return True
        time.sleep(0.1)
    return not group_members(pgid)


def stop_group(pgid: int, grace: float = 10.0) -> bool:
    """SIGTERM the process group, SIGKILL what is left after `grace` seconds; True when no
    process of the group is left."""
    if not group_members(pgid):
        return True
    _signal_group(pgid, signal.SIGTERM)
    if _wait_group_gone(pgid, grace):
        return True
    _signal_group(pgid, signal.SIGKILL)
    return _wait_group_gone(pgid, 10.0)


# --- the queue ------------------------------------------------------------------------------


def _job_nproc(job: Job) -> int:
    try:
        return int(json.loads((job.folder / "job.json").read_text()).get("nproc", 1))
    except (OSError, ValueError):
        return 1


def schedule(store: JobStore | None = None) -> list[int]:
    """Start queued local jobs while slots are free and hand queued Ray jobs to their
    clusters; returns the ids started or submitted."""
    store = store or JobStore()
    limit = max_running()
    started = []
    while (job := store.claim_next(limit)) is not None:
        try:
            pid = launch(job, _job_nproc(job))
        except OSError as exc:
            store.transition(job.id, (STARTING,), FAILED, finished=time.time(), error=f"could not start the job process: {exc}")
            continue
        store.update(job.id, pid=pid)
        started.append(job.id)
    for job in reversed(store.list((QUEUED,), limit=10_000, on_ray=True)):
        if submit_to_ray(job, store):
            started.append(job.id)
    return started


def submit_to_ray(job: Job, store: JobStore) -> bool:
    """Claim a queued Ray job (compare-and-set: two schedulers never submit it twice; its
    submission id is in the store before Ray sees it) and submit it. A cluster out of reach
    puts it back in the queue; one that refuses it fails it. True when Ray accepted it."""
    submission_id = f"cuset-{job.id}-{job.attempts}-{uuid.uuid4().hex[:8]}"
    now = time.time()
    claimed = store.transition(
        job.id, (QUEUED,), STARTING, ray_job_id=submission_id, pid=None, started=now, last_heartbeat=now,
        phase=f"submitting to Ray at {job.ray_address}",
    )
    if not claimed:
        return False
    argv = job_command(job.kind, job.folder.resolve(), _job_nproc(job))[1:]
    try:
        ray_jobs.submit(store.get(job.id), submission_id, argv, job_env())
    except ray_jobs.RayUnavailable as exc:
        store.transition(job.id, (STARTING,), QUEUED, ray_job_id=job.ray_job_id, started=None, last_heartbeat=None, phase=f"waiting for Ray: {exc}"[:200])
        return False
    except JobError as exc:
        store.transition(job.id, (STARTING,), FAILED, finished=time.time(), error=str(exc)[:2000])
        return False
    store.transition(job.id, (STARTING,), STARTING, phase=f"submitted to Ray as {submission_id}")
    return True


def _heartbeat_text(when: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when)) if when else "never"


def _ray_job_ended(job: Job, store: JobStore, now: float) -> bool:
    """Settle an active Ray job that Ray says has ended (or never had) without a final status
    in the store: `cancelled` when it was being cancelled, else `lost`. Returns whether it was
    marked lost. A cluster out of reach settles nothing: the job may well still run."""
    try:
        state = ray_jobs.status(job)
    except ray_jobs.RayUnavailable:
        return False
    if state is None:
        if now - (job.started or job.created) < START_GRACE_S:
            return False  # the submitter may not have reached Ray yet
        error = f"the Ray cluster at {job.ray_address} has no job {job.ray_job_id} (never submitted, or the cluster was restarted)"
    elif not state.is_terminal:
        return False
    elif job.status == CANCELLING:
        store.transition(job.id, (CANCELLING,), CANCELLED, finished=now)
        return False
    else:
        error = (
            f"the Ray job {job.ray_job_id} at {job.ray_address} ended {state.status} without a final status "
            f"({state.message or 'no message'}); last heartbeat {_heartbeat_text(job.last_heartbeat)}; see `cuset jobs logs {job.id}`"
        )
        if job.status == STARTING:
            error += f"; the job process never reported: the Ray node must see the workspace {workspace_dir().resolve()} at the same path"
    return store.transition(job.id, (job.status,), LOST, finished=now, error=error[:2000])


def reconcile(store: JobStore | None = None) -> list[int]:
    """Mark jobs whose process is gone without a final status as `lost` (a job being
    cancelled becomes `cancelled`), then start queued jobs; returns the ids marked lost.
    Ray jobs are checked with their cluster (`_ray_job_ended`)."""
    store = store or JobStore()
    lost = []
    now = time.time()
    for job in store.list(ACTIVE, limit=10_000):
        if job.on_ray:
            if _ray_job_ended(job, store, now):
                lost.append(job.id)
            continue
        if job.pid is None:
            if now - (job.started or job.created) < START_GRACE_S:
                continue
        elif process_alive(job.pid, job.folder):
            continue
        if job.status == CANCELLING:
            store.transition(job.id, (CANCELLING,), CANCELLED, finished=now)
            continue
        error = f"the job process ({job.pid or 'never started'}) ended without a final status; last heartbeat {_heartbeat_text(job.last_heartbeat)}"
        if store.transition(job.id, (job.status,), LOST, finished=now, error=error):
            lost.append(job.id)
    schedule(store)
    return lost


# --- requests -------------------------------------------------------------------------------


def submit(config: Any, start: bool = True, store: JobStore | None = None, ray_address: str | None = None) -> Job:
    """Queue a fine-tune of `config` (a TrainConfig; or an evaluation, an EvalConfig: its
    JOB_KIND names the entry point) as a job: the resolved config goes to
    workspace/jobs/<id>/config.yaml; the job starts now when a slot is free.

    `ray_address` (default `$CUSET_RAY_ADDRESS`; '' = this machine) is a Ray cluster's job
    server, e.g. http://127.0.0.1:8265: the job is submitted there instead (see
    cuset.jobs.ray_jobs for the shared-workspace assumption). RayUnavailable, before any job
    exists, when Ray is not installed or the cluster cannot be reached."""
    store = store or JobStore()
    address = os.environ.get("CUSET_RAY_ADDRESS", "") if ray_address is None else ray_address
    if address:
        address = ray_jobs.normalize_address(address)
        ray_jobs.client(address)
    config = config.resolved()
    kind = getattr(config, "JOB_KIND", "train")
    job_id = store.create(kind, config.method, config.preset, config.model, ray_address=address)
    folder = job_folder(job_id)
    folder.mkdir(parents=True, exist_ok=True)
    config.save(folder / "config.yaml")
    (folder / "job.json").write_text(json.dumps({"id": job_id, "db": str(store.path.resolve()), "nproc": config.nproc}))
    if start:
        schedule(store)
    return store.get(job_id)


def cancel(job_id: int, grace: float = 10.0, store: JobStore | None = None) -> Job:
    """Cancel a queued or running job: its whole process group ends, its status becomes
    `cancelled`. Raises JobError for a job that already ended. A Ray job is stopped through
    Ray (its cluster's $RAY_JOB_STOP_WAIT_TIME_S, not `grace`, sets when SIGKILL follows);
    while its cluster cannot be reached, RayUnavailable and nothing changes."""
    store = store or JobStore()
    job = store.get(job_id)
    if job.status == QUEUED and store.transition(job.id, (QUEUED,), CANCELLED, finished=time.time(), phase="cancelled before it started"):
        return store.get(job.id)
    if job.status not in ACTIVE:
        raise JobError(f"Job {job.id} is {job.status}: only queued or running jobs can be cancelled.")
    if job.on_ray:
        ray_jobs.client(job.ray_address)
    store.transition(job.id, ACTIVE, CANCELLING, phase="cancelling")
    job = store.get(job.id)
    if job.on_ray:
        if not ray_jobs.stop(job, timeout=grace + 30.0):
            raise JobError(
                f"Job {job.id}: Ray still runs {job.ray_job_id} after stop_job; "
                f"check `ray job status {job.ray_job_id} --address {job.ray_address}`."
            )
    elif job.pid is not None and not stop_group(job.pid, grace):
        raise JobError(f"Job {job.id}: processes of group {job.pid} survived SIGKILL ({group_members(job.pid)}); check `ps -g {job.pid}`.")
    store.transition(job.id, (CANCELLING,), CANCELLED, finished=time.time(), phase="cancelled", eta_s=None)
    schedule(store)
    return store.get(job.id)


def resume(job_id: int, store: JobStore | None = None) -> Job:
    """Queue a lost, failed or cancelled job again; what it then does is its kind's (a
    fine-tune resumes from the last complete checkpoint in its folder, or starts over when there
    is none; evaluations and figures have no checkpoints and run again from the start)."""
    store = store or JobStore()
    job = store.get(job_id)
    if job.status not in RESUMABLE:
        raise JobError(f"Job {job.id} is {job.status}: only {', '.join(RESUMABLE)} jobs can be resumed.")
    phase = kinds.get(job.kind).resume_phase(job.folder)
    if not store.transition(job.id, RESUMABLE, QUEUED, phase=phase, error="", pid=None, finished=None, eta_s=None, attempts=job.attempts + 1):
        raise JobError(f"Job {job.id} changed status while resuming; try again.")
    schedule(store)
    return store.get(job.id)


def read_log(job_id: int, tail_lines: int = 200, store: JobStore | None = None) -> str:
    """The last `tail_lines` lines of the job's log.txt, or for a Ray job of the log Ray keeps
    ('' before the job starts; a line saying why when its cluster cannot be reached)."""
    path = job_folder(int(job_id)) / "log.txt"
    if path.is_file():
        text = path.read_bytes().decode(errors="replace")
    else:
        try:
            job = (store or JobStore()).get(job_id)
        except JobError:
            return ""
        if not (job.on_ray and job.ray_job_id):
            return ""
        try:
            text = ray_jobs.logs(job)
        except ray_jobs.RayUnavailable as exc:
            return f"(job {job.id} runs on Ray; its log is there: {exc})"
    lines = text.splitlines()
    return "\n".join(lines[-tail_lines:] if tail_lines > 0 else lines)


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a metrics.jsonl, one per step; a step written twice (the run resumed from an
    earlier checkpoint) keeps its last row. A torn last line (a killed job) is skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    rows: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("step"), int):
            rows[row["step"]] = row
    return [rows[k] for k in sorted(rows)]


def read_job_metrics(job_id: int) -> list[dict[str, Any]]:
    """The job's per-step metrics (one dict per optimizer step, for loss curves)."""
    return read_metrics(job_folder(int(job_id)) / "metrics.jsonl")


def wait(job_id: int, timeout: float = 600.0, poll: float = 0.5, store: JobStore | None = None) -> Job:
    """Block until the job reaches a final status (reconciling as it waits); returns it."""
    store = store or JobStore()
    deadline = time.monotonic() + timeout
    while True:
        job = store.get(job_id)
        if job.is_final:
            return job
        if time.monotonic() > deadline:
            raise TimeoutError(f"Job {job_id} is still {job.status} after {timeout:.0f} s.")
        reconcile(store)
        time.sleep(poll)
