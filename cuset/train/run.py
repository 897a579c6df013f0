"""The job process: run the fine-tune described by JOB_DIR/config.yaml, writing into JOB_DIR.

    python -m cuset.train.run JOB_DIR
    torchrun --nproc_per_node 2 -m cuset.train.run JOB_DIR          # gloo on CPU, nccl on GPUs
    accelerate launch --num_processes 2 -m cuset.train.run JOB_DIR

JOB_DIR needs a config.yaml (a TrainConfig; `cuset train --detach` writes one, or save one
with `TrainConfig.save`). When JOB_DIR/job.json exists (a job submitted through cuset.jobs),
rank 0 reports status, progress and heartbeats to the workspace store, writes the final status,
runs the follow-ups other stages registered for a completed fine-tune (cuset.jobs.kinds: the
evaluations TrainConfig.evaluate asks for) and then starts the next queued job (not on a Ray
cluster: see cuset.jobs.ray_jobs). A run resumes from the last complete checkpoint in the folder;
importing this module registers that as the `train` job kind's resume. Exit status: 0 done,
1 failed, 3 the job was not queued (e.g. cancelled before it started).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from cuset.jobs import kinds


def resume_phase(folder: Path) -> str:
    """What a resumed fine-tune does: go on from its last complete checkpoint, or start over."""
    from cuset.train.config import TrainConfig
    from cuset.train.recipe import last_checkpoint

    config = TrainConfig.load(folder / "config.yaml")
    run_dir = Path(config.output_dir) if config.output_dir else folder
    checkpoint = last_checkpoint(run_dir / "checkpoints")
    return f"queued to resume from {checkpoint.name}" if checkpoint else "queued to start over (no checkpoint)"


kinds.register(kinds.JobKind("train", resume_phase=resume_phase))


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def set_threads(threads: int) -> None:
    """CPU threads of this process: `threads`, else the cores shared among the jobs allowed
    to run at once (torchrun sets OMP_NUM_THREADS itself). Oversubscribed OpenMP threads spin
    at barriers: on a busy 2-core machine the tiny model trains ~5x slower with 2 threads."""
    import torch

    from cuset.jobs import max_running

    if torch.cuda.is_available():
        return
    if threads > 0:
        torch.set_num_threads(threads)
    elif "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max_running()))


def _quiet_libraries() -> None:
    """No progress bars in a log file."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def run_job(folder: Path) -> int:
    from cuset.jobs import JobReporter, schedule
    from cuset.train.config import TrainConfig
    from cuset.train.recipe import FineTune

    config = TrainConfig.load(folder / "config.yaml")
    rank = _rank()
    reporter = JobReporter.for_folder(folder) if rank == 0 else None
    if reporter is not None and not reporter.start(os.getpid()):
        status = reporter.store.get(reporter.job_id).status
        print(f"cuset: job {reporter.job_id} is {status}, not queued: nothing to run (resume it with `cuset jobs resume {reporter.job_id}`)", flush=True)
        return 3
    log = print if rank == 0 else (lambda _text: None)
    set_threads(config.threads)
    _quiet_libraries()
    try:
        result = FineTune(config, folder, reporter, log=log).run()
    except Exception as exc:  # noqa: BLE001 - any failure becomes the job's final status
        traceback.print_exc()
        if reporter is not None:
            reporter.finish("failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return 1
    if reporter is not None:
        reporter.finish("completed", result)
        for line in kinds.completed("train", reporter.job_id, folder, config):
            log(line)
        log(f"done: loss {result.get('final_loss')}, {result.get('steps')} steps in {result.get('total_s')} s")
        if not reporter.store.get(reporter.job_id).on_ray:  # a Ray job frees no local slot, and its node may be another machine
            schedule(reporter.store)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuset.train.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("job_dir", help="folder holding config.yaml; outputs go there")
    args = parser.parse_args(argv)
    folder = Path(args.job_dir).expanduser().resolve()
    if not (folder / "config.yaml").is_file():
        print(f"cuset.train.run: {folder}/config.yaml not found; write one with TrainConfig.save or use `cuset train --detach`.", file=sys.stderr)
        return 2
    try:
        return run_job(folder)
    finally:
        _leave_process_group()


def _leave_process_group() -> None:
    """A torchrun worker leaves its process group before the interpreter exits: gloo's threads,
    torn down at exit instead, can abort the process ("terminate called without an active
    exception", SIGABRT on rank 1 after the final model was saved, seen in a clean-clone CI)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    raise SystemExit(main())
