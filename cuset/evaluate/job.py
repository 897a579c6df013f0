"""The evaluation job process: run the EvalConfig in JOB_DIR/config.yaml, report to the store.

    python -m cuset.evaluate.job JOB_DIR

Started by cuset.jobs (`cuset eval ... --detach`, the Results page, or a fine-tune with
`evaluate: true`: importing this module registers `queue_evaluations`, which the fine-tune's
job process runs when it completes, through cuset.jobs.kinds). Progress is reported per generated reply and per checked candidate; the
job's result names the evaluation run (`eval_run`) whose rows are in the store. Exit status:
0 done, 1 failed, 3 the job was not queued.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuset.jobs import kinds


def run_job(folder: Path) -> int:
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation
    from cuset.evaluate.results import ResultStore
    from cuset.jobs import JobReporter
    from cuset.jobs.reporter import run_as_job

    config = EvalConfig.load(folder / "config.yaml")
    reporter = JobReporter.for_folder(folder)

    def work(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
        run_id = run_evaluation(config, progress=progress, eval_job=reporter.job_id if reporter else None)
        summary = ResultStore().get_run(run_id)["summary"]
        print(f"done: evaluation run {run_id}: {summary.get('correct_rate')} correct, {summary.get('compile_rate')} compiled", flush=True)
        return {"eval_run": run_id, **{k: v for k, v in summary.items() if not isinstance(v, list)}}

    return run_as_job(folder, work)


def queue_evaluations(train_job: int, folder: Path, config: Any) -> list[str]:
    """A completed fine-tune's evaluations, queued when its TrainConfig asks for them
    (`evaluate`, `eval_every`); one log line per job."""
    if not config.evaluate:
        return []
    from cuset.evaluate.evaluation import submit_after_training

    return [f"evaluation job {job.id} queued for {job.model}" for job in submit_after_training(train_job, config, folder)]


kinds.on_completed("train", queue_evaluations)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cuset.evaluate.job JOB_DIR", file=sys.stderr)
        return 2
    return run_job(Path(args[0]))


if __name__ == "__main__":
    raise SystemExit(main())
