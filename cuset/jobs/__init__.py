"""Background jobs: fine-tunes as separate OS processes, tracked in the workspace's SQLite.

    cuset train --method cuset --detach      # submit; prints the job id
    cuset train --detach --ray http://127.0.0.1:8265   # run it on that Ray cluster instead
    cuset jobs list                          # id, method, status, step/total, ETA, pid, heartbeat
    cuset jobs logs 3 --follow               # the job's log.txt
    cuset jobs cancel 3                      # ends the job's whole process group
    cuset jobs resume 3                      # from the last complete checkpoint

    from cuset import jobs
    jobs.reconcile()                         # on app/CLI start: mark lost jobs, start queued ones
    job = jobs.submit(TrainConfig.from_preset("cpu", method="cuset"))
    job = jobs.submit(config, ray_address="http://127.0.0.1:8265")   # or $CUSET_RAY_ADDRESS
    jobs.list_jobs(); jobs.get(job.id).progress; jobs.read_job_metrics(job.id); jobs.read_log(job.id)
    jobs.cancel(job.id); jobs.resume(job.id)

Each job has a folder workspace/jobs/<id>/ with config.yaml (the resolved TrainConfig),
job.json, log.txt, metrics.jsonl (one JSON line per optimizer step), checkpoints/ and, once
done, final/ and result.json. `store` holds the table and the Job record, `runner` the
processes and the queue, `kinds` what differs between kinds of job (filled in by each kind's
own module, so nothing here imports a stage), `ray_jobs` submission to a Ray cluster (which
must see this workspace at the same path), `reporter` the job process's side (progress and
heartbeats).
"""

from __future__ import annotations

from cuset.jobs.ray_jobs import RayUnavailable
from cuset.jobs.reporter import JobReporter
from cuset.jobs.runner import (
    cancel,
    max_running,
    process_alive,
    read_job_metrics,
    read_log,
    reconcile,
    resume,
    schedule,
    submit,
    wait,
)
from cuset.jobs.store import ACTIVE, FINAL, Job, JobError, JobStore, job_folder


def get(job_id: int) -> Job:
    """One job by id (JobError naming recent ids when there is none)."""
    return JobStore().get(job_id)


def list_jobs(limit: int = 100) -> list[Job]:
    """Jobs, newest first, with status, step/total_steps, eta_s, pid and last_heartbeat."""
    return JobStore().list(limit=limit)


__all__ = [
    "ACTIVE",
    "FINAL",
    "Job",
    "JobError",
    "JobReporter",
    "JobStore",
    "RayUnavailable",
    "cancel",
    "get",
    "job_folder",
    "list_jobs",
    "max_running",
    "process_alive",
    "read_job_metrics",
    "read_log",
    "reconcile",
    "resume",
    "schedule",
    "submit",
    "wait",
]
