"""Jobs on a Ray cluster: a Ray head of this module's own on 127.0.0.1 runs the tiny preset
through the Ray Jobs API (completed with metrics in the store, log from Ray), a cancelled job
leaves no process, a job stopped behind our back is lost and resumes as a new submission, and
a cluster that cannot be reached is named and leaves jobs as they are."""

from __future__ import annotations

import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cuset import cli, jobs
from cuset.jobs import ray_jobs
from cuset.jobs.runner import group_members
from tests.jobs.conftest import processes_naming, tiny, wait_for

HEAD_START_S = 90.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _stop_head(head: subprocess.Popen) -> None:
    """SIGTERM to `ray start --block` makes it stop every process it started; what is left of
    its process group after that gets SIGKILL. (`ray stop` would end every Ray process on the
    machine, not only this head's.)"""
    if head.poll() is None:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait(10)
    deadline = time.monotonic() + 20
    while group_members(head.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if group_members(head.pid):
        os.killpg(head.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """The job server URL of a one-CPU Ray head started for this module. Every port is on
    127.0.0.1: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray from replacing 127.0.0.1 by the
    machine's network address, and all fixed ports are free ones. The head's PATH starts with
    this virtualenv, so the jobs' `python` is this one."""
    temp = Path(tempfile.mkdtemp(prefix="cuset-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    dashboard = free_port()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "AUTOSCALER_METRIC_PORT": str(free_port()),  # fixed ports by default: two heads would share them
        "DASHBOARD_METRIC_PORT": str(free_port()),
    }
    command = [
        str(bin_dir / "ray"), "start", "--head", "--block", "--disable-usage-stats",
        "--node-ip-address=127.0.0.1", "--dashboard-host=127.0.0.1", "--include-dashboard=true",
        f"--dashboard-port={dashboard}", f"--port={free_port()}", f"--ray-client-server-port={free_port()}",
        f"--dashboard-agent-listen-port={free_port()}", "--min-worker-port=0", "--max-worker-port=0",
        "--num-cpus=1", "--object-store-memory=80000000", f"--temp-dir={temp}",
    ]
    log_path = temp / "head.log"
    with log_path.open("wb") as log:
        head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    address = f"http://127.0.0.1:{dashboard}"
    try:
        deadline = time.monotonic() + HEAD_START_S
        while True:
            try:
                ray_jobs.client(address)
                break
            except ray_jobs.RayUnavailable:
                if head.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the Ray head did not come up:\n{log_path.read_text()[-4000:]}") from None
                time.sleep(0.5)
        yield address
    finally:
        _stop_head(head)
        ray_jobs._clients.pop(address, None)
        assert group_members(head.pid) == []
        shutil.rmtree(temp, ignore_errors=True)


def ray_status(job: jobs.Job) -> str:
    state = ray_jobs.status(job)
    return state.status if state else "unknown"


def test_a_tiny_job_runs_on_ray_and_reports_to_the_store(workspace, ray_head, capsys):
    job = jobs.submit(tiny(), ray_address=ray_head)
    assert job.on_ray and job.ray_address == ray_head
    assert job.ray_job_id.startswith(f"cuset-{job.id}-1-") and job.status == "starting"
    assert ray_status(job) in ("PENDING", "RUNNING", "SUCCEEDED")

    done = jobs.wait(job.id, timeout=180)
    assert done.status == "completed", jobs.read_log(job.id, 0)
    assert (done.step, done.total_steps, done.error) == (4, 4, "")
    assert done.pid and done.last_heartbeat and done.finished >= done.started
    rows = jobs.read_job_metrics(job.id)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    assert all(math.isfinite(r["loss"]) and r["loss"] > 0 for r in rows)
    assert math.isfinite(done.result["final_loss"]) and (done.folder / "final").is_dir()
    wait_for(lambda: ray_status(done) == "SUCCEEDED", 30, "Ray to see the job end")

    assert not (done.folder / "log.txt").exists()  # the log stays with Ray
    log = jobs.read_log(job.id, 0)
    assert f"cuset.train.run {done.folder.resolve()}" in log and "done: loss" in log
    assert cli.main(["jobs", "logs", str(job.id), "--tail", "3"]) == 0
    printed = capsys.readouterr().out
    assert "done: loss" in printed and len(printed.strip().splitlines()) == 3
    assert cli.main(["jobs", "show", str(job.id)]) == 0
    assert f"{done.ray_job_id} at {ray_head}" in capsys.readouterr().out


def test_cancelling_a_ray_job_stops_it_and_leaves_no_process(workspace, ray_head):
    job = jobs.submit(tiny(max_steps=5000, save_steps=5000), ray_address=ray_head)
    wait_for(lambda: jobs.get(job.id).step >= 1, 120, "the first step")
    folder = job.folder.resolve()
    assert processes_naming(folder)  # the head is this machine: the job's process is here

    cancelled = jobs.cancel(job.id)
    assert cancelled.status == "cancelled" and cancelled.finished and cancelled.step < 5000
    assert ray_status(cancelled) == "STOPPED"
    assert processes_naming(folder) == []
    with pytest.raises(jobs.JobError, match="only queued or running"):
        jobs.cancel(job.id)


def test_a_ray_job_stopped_behind_our_back_is_lost_then_resumes_as_a_new_submission(workspace, ray_head):
    job = jobs.submit(tiny(max_steps=10, save_steps=2), ray_address=ray_head)
    checkpoint = job.folder / "checkpoints" / "checkpoint-2" / "trainer_state.json"
    wait_for(checkpoint.is_file, 120, "the first checkpoint")
    ray_jobs.client(ray_head).stop_job(job.ray_job_id)  # as `ray job stop` would
    wait_for(lambda: ray_status(job) == "STOPPED", 30, "Ray to stop the job")

    assert jobs.reconcile() == [job.id]
    lost = jobs.get(job.id)
    assert lost.status == "lost" and lost.step < 10
    assert f"the Ray job {job.ray_job_id} at {ray_head} ended STOPPED" in lost.error and "last heartbeat" in lost.error

    resumed = jobs.resume(job.id)
    assert resumed.ray_job_id.startswith(f"cuset-{job.id}-2-") and resumed.ray_job_id != job.ray_job_id
    done = jobs.wait(job.id, timeout=180)
    assert done.status == "completed", jobs.read_log(job.id, 0)
    assert done.result["resumed_from"].startswith("checkpoint-") and (done.attempts, done.step) == (2, 10)
    assert f"resuming from {done.result['resumed_from']}" in jobs.read_log(job.id, 0)


def test_a_cluster_out_of_reach_is_named_and_leaves_jobs_as_they_are(workspace, capsys):
    address = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(jobs.RayUnavailable, match="ray start --head --node-ip-address 127.0.0.1 --dashboard-host 127.0.0.1") as raised:
        jobs.submit(tiny(), ray_address=address)
    assert address in str(raised.value) and jobs.list_jobs() == []

    assert cli.main(["train", "--preset", "tiny", "--detach", "--ray", address.removeprefix("http://")]) == 2
    err = capsys.readouterr().err
    assert f"Cannot reach the Ray job server at {address}" in err and "ray start --head" in err

    store = jobs.JobStore()
    hour_ago = time.time() - 3600
    running = store.create("train", "sft", "tiny", "tiny", ray_address=address)
    store.update(running, status="running", ray_job_id="cuset-1-1-gone", started=hour_ago, last_heartbeat=hour_ago)
    queued = store.create("train", "sft", "tiny", "tiny", ray_address=address)

    assert jobs.reconcile() == []
    assert jobs.get(running).status == "running"  # it may well still run there
    waiting = jobs.get(queued)
    assert waiting.status == "queued" and waiting.phase.startswith("waiting for Ray: Cannot reach") and not waiting.ray_job_id
    with pytest.raises(jobs.RayUnavailable, match=address):
        jobs.cancel(running)
    assert jobs.get(running).status == "running"
    assert address in jobs.read_log(running)


def test_without_ray_installed_the_error_says_how_to_install_it(workspace, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.job_submission", None)  # `import` now raises ImportError
    with pytest.raises(jobs.RayUnavailable, match=r"pip install 'ray\[default\]==2.60.0'"):
        jobs.submit(tiny(), ray_address="127.0.0.1:1")
    assert jobs.list_jobs() == []


def test_ray_addresses_are_normalized_to_the_job_server_url():
    assert ray_jobs.normalize_address("127.0.0.1") == "http://127.0.0.1:8265"
    assert ray_jobs.normalize_address(" 127.0.0.1:9000/ ") == "http://127.0.0.1:9000"
    assert ray_jobs.normalize_address("https://127.0.0.1:8443") == "https://127.0.0.1:8443"
    with pytest.raises(jobs.JobError, match="not a ray:// address"):
        ray_jobs.normalize_address("ray://127.0.0.1:10001")
