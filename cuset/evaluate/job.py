"""The evaluation job process: run the EvalConfig in JOB_DIR/config.yaml, report to the store.

    python -m cuset.evaluate.job JOB_DIR

Started by cuset.jobs (`cuset eval ... --detach`, the Results page, or a fine-tune with
`evaluate: true`). Progress is reported per generated reply and per checked candidate; the
job's result names the evaluation run (`eval_run`) whose rows are in the store. Exit status:
0 done, 1 failed, 3 the job was not queued.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path


def run_job(folder: Path) -> int:
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation
    from cuset.evaluate.results import ResultStore
    from cuset.jobs import JobReporter, schedule

    config = EvalConfig.load(folder / "config.yaml")
    reporter = JobReporter.for_folder(folder)
    if reporter is not None and not reporter.start(os.getpid()):
        print(f"cuset: job {reporter.job_id} is not queued: nothing to run", flush=True)
        return 3
    started = time.time()
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        print(f"{phase}: {done}/{total}", flush=True)
        if reporter is None or time.time() - last[0] < 0.5 and done < total:
            return
        last[0] = time.time()
        rate = done / max(time.time() - started, 1e-6)
        reporter.progress(done, total, (total - done) / rate if rate > 0 else 0.0, phase=phase)

    try:
        run_id = run_evaluation(config, progress=progress, eval_job=reporter.job_id if reporter else None)
    except Exception as exc:  # noqa: BLE001 - any failure becomes the job's final status
        traceback.print_exc()
        if reporter is not None:
            reporter.finish("failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return 1
    summary = ResultStore().get_run(run_id)["summary"]
    result = {"eval_run": run_id, **{k: v for k, v in summary.items() if not isinstance(v, list)}}
    print(f"done: evaluation run {run_id}: {summary.get('correct_rate')} correct, {summary.get('compile_rate')} compiled", flush=True)
    if reporter is not None:
        reporter.finish("completed", result)
        if not reporter.store.get(reporter.job_id).on_ray:
            schedule(reporter.store)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cuset.evaluate.job JOB_DIR", file=sys.stderr)
        return 2
    return run_job(Path(args[0]))


if __name__ == "__main__":
    raise SystemExit(main())
