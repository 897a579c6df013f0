"""Ray Jobs: a job handed to an existing Ray cluster's job server instead of started here.

    source .venv/bin/activate                 # a head on this machine, every port on 127.0.0.1:
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head --node-ip-address 127.0.0.1 --dashboard-host 127.0.0.1
    cuset train --preset tiny --ray http://127.0.0.1:8265      # or $CUSET_RAY_ADDRESS

    jobs.submit(TrainConfig.from_preset("tiny"), ray_address="http://127.0.0.1:8265")

The job is the same entry point as a local one, `python -m cuset.train.run JOB_DIR`, submitted
with `JobSubmissionClient.submit_job` (the job server is part of the dashboard: `ray[default]`)
under a submission id of our own (`cuset-<job>-<attempt>-<random>`, recorded in the store
before Ray sees it). Its runtime env carries CUSET_WORKSPACE, the settings every job gets
(`runner.job_env`) and FORWARDED_ENV. Ray sets OMP_NUM_THREADS for an entry point that reserves
no CPUs to 1: give a CPU job `threads` in its TrainConfig. `python` is the one on the PATH of
the `ray start` that started the node: start it from this project's virtualenv. (Ray turns
--node-ip-address 127.0.0.1 into the machine's network address and binds its other ports there
unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, which keeps a one-machine head on loopback.)

Shared file system: the job process reads JOB_DIR/config.yaml and writes status, heartbeats,
metrics and checkpoints into the same workspace (SQLite store, job folder) as a local job, by the
same absolute paths. So the node that runs the entry point must see this workspace at the same
path: a head on this machine, or a workspace on a file system mounted at the same path on every
node (SQLite needs working POSIX locks there). The job's stdout and stderr stay with Ray
(`logs`, the dashboard); there is no JOB_DIR/log.txt.

Ray's view of a job (`status`) is what `cuset.jobs.runner.reconcile` uses instead of the local
process table: PENDING or RUNNING means alive; SUCCEEDED, FAILED or STOPPED while the store has
no final status means the process ended without writing one. A cluster that cannot be reached
raises `RayUnavailable`, and the runner then leaves the job as it is.
"""

from __future__ import annotations

import os
import shlex
import socket
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from cuset.jobs.store import Job, JobError

DEFAULT_PORT = 8265
PROBE_TIMEOUT_S = 3.0
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
# Settings of this machine that a job needs to find the same models; secrets (HF_TOKEN) are
# not sent: the runtime env is shown in the Ray dashboard.
FORWARDED_ENV = ("CUSET_MODELS_DIR", "CUSET_MODEL", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HEAD_HINT = (
    "To run jobs on this machine, start a Ray head from this project's virtualenv: "
    "`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head --node-ip-address 127.0.0.1 --dashboard-host 127.0.0.1` "
    f"(its job server is then http://127.0.0.1:{DEFAULT_PORT}); for a cluster, pass its dashboard address."
)
_clients: dict[str, Any] = {}


class RayUnavailable(JobError):
    """Ray is not installed here, or the cluster's job server cannot be reached now."""


@dataclass(frozen=True)
class RayJobState:
    """Ray's view of one submission. `status`: PENDING, RUNNING, SUCCEEDED, FAILED or STOPPED."""

    status: str
    message: str = ""

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


def normalize_address(address: str) -> str:
    """The job server's URL: 'HOST' -> 'http://HOST:8265', 'HOST:PORT' -> 'http://HOST:PORT';
    http(s) URLs are kept as they are."""
    address = address.strip().rstrip("/")
    if not address:
        raise JobError(f"Empty Ray address: pass the job server's URL, e.g. http://127.0.0.1:{DEFAULT_PORT}.")
    if "://" not in address:
        address = "http://" + address
        if urllib.parse.urlsplit(address).port is None:
            address += f":{DEFAULT_PORT}"
    scheme = address.split("://", 1)[0]
    if scheme not in ("http", "https"):
        raise JobError(
            f"Ray address {address!r}: pass the job server's URL (the dashboard, http://HOST:{DEFAULT_PORT}), "
            f"not a {scheme}:// address."
        )
    return address


def _unreachable(address: str, reason: object) -> RayUnavailable:
    return RayUnavailable(f"Cannot reach the Ray job server at {address} ({reason}). {HEAD_HINT}")


def _probe(address: str) -> None:
    """Fail within PROBE_TIMEOUT_S when nothing listens at the address (the Ray client itself
    has no connect timeout, and `reconcile` runs on every page load)."""
    url = urllib.parse.urlsplit(address)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
        socket.create_connection((url.hostname or "", port), timeout=PROBE_TIMEOUT_S).close()
    except (OSError, ValueError) as exc:
        raise _unreachable(address, exc) from None


def client(address: str) -> Any:
    """A `ray.job_submission.JobSubmissionClient` for the address (one per address and
    process); RayUnavailable naming the address when Ray is missing or out of reach."""
    address = normalize_address(address)
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError as exc:
        raise RayUnavailable(
            f"Ray is not installed in this environment ({exc}), so no job can go to {address}: "
            "`pip install 'ray[default]==2.60.0'` (pinned in requirements.txt; the [default] extra brings the job server client)."
        ) from None
    _probe(address)
    if address in _clients:
        return _clients[address]
    try:
        made = JobSubmissionClient(address)
    except (OSError, RuntimeError) as exc:  # requests' errors are OSErrors; RuntimeError: not a Ray job server
        raise _unreachable(address, exc) from None
    _clients[address] = made
    return made


def _missing(exc: RuntimeError) -> bool:
    """The job server answered 404: it has no such submission."""
    return "status code 404" in str(exc)


def submit(job: Job, submission_id: str, argv: list[str], env: dict[str, str]) -> None:
    """Submit `python ARGV...` (the job's entry point) under `submission_id`, with `env` and
    FORWARDED_ENV in its runtime env. RayUnavailable when the cluster is out of reach,
    JobError when its job server refuses the job."""
    ray = client(job.ray_address)
    env_vars = {"OMP_WAIT_POLICY": "PASSIVE"} | {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ} | env
    try:
        ray.submit_job(
            entrypoint=shlex.join(["python", *argv]),
            submission_id=submission_id,
            runtime_env={"env_vars": env_vars},
            metadata={"cuset_job": str(job.id), "cuset_workspace": env_vars.get("CUSET_WORKSPACE", "")},
        )
    except OSError as exc:
        raise _unreachable(job.ray_address, exc) from None
    except RuntimeError as exc:
        raise JobError(f"The Ray job server at {job.ray_address} refused job {job.id}: {exc}") from None


def status(job: Job) -> RayJobState | None:
    """Ray's view of the job's submission; None when the cluster has no such submission."""
    ray = client(job.ray_address)
    try:
        info = ray.get_job_info(job.ray_job_id)
    except OSError as exc:
        raise _unreachable(job.ray_address, exc) from None
    except RuntimeError as exc:
        if _missing(exc):
            return None
        raise _unreachable(job.ray_address, exc) from None
    return RayJobState(str(getattr(info.status, "value", info.status)), info.message or "")


def stop(job: Job, timeout: float = 60.0) -> bool:
    """Ask Ray to stop the job (SIGTERM to its process tree, SIGKILL after the cluster's
    $RAY_JOB_STOP_WAIT_TIME_S, 3 s by default) and wait until Ray says it ended; True when it
    did within `timeout` seconds (or the cluster never had it)."""
    ray = client(job.ray_address)
    try:
        ray.stop_job(job.ray_job_id)
    except OSError as exc:
        raise _unreachable(job.ray_address, exc) from None
    except RuntimeError as exc:
        if _missing(exc):
            return True
        raise JobError(f"Ray at {job.ray_address} could not stop {job.ray_job_id}: {exc}") from None
    deadline = time.monotonic() + timeout
    while True:
        state = status(job)
        if state is None or state.is_terminal:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def logs(job: Job) -> str:
    """The job's stdout and stderr as Ray keeps them ('' when Ray has no such submission)."""
    ray = client(job.ray_address)
    try:
        return ray.get_job_logs(job.ray_job_id)
    except OSError as exc:
        raise _unreachable(job.ray_address, exc) from None
    except RuntimeError as exc:
        if _missing(exc):
            return ""
        raise _unreachable(job.ray_address, exc) from None
