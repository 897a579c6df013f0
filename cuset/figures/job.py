"""The figures job process: run the FiguresConfig in JOB_DIR/config.yaml, report to the store.

    python -m cuset.figures.job JOB_DIR

Started by cuset.jobs when the Figures page's "Regenerate all figures" button (or
`jobs.submit(FiguresConfig())`) queues one. Progress is reported per scored sample (only
samples missing from the score cache are scored) and per figure; the job's result lists the
figures made and the reasons for the ones skipped. Exit status: 0 done, 1 failed, 3 the job
was not queued.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path


def run_job(folder: Path) -> int:
    from cuset.figures import FiguresConfig, make_all
    from cuset.jobs import JobReporter, schedule

    config = FiguresConfig.load(folder / "config.yaml")
    reporter = JobReporter.for_folder(folder)
    if reporter is not None and not reporter.start(os.getpid()):
        print(f"cuset: job {reporter.job_id} is not queued: nothing to run", flush=True)
        return 3
    started, last = time.time(), [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        print(f"{phase}: {done}/{total}", flush=True)
        if reporter is None or time.time() - last[0] < 0.5 and done < total:
            return
        last[0] = time.time()
        rate = done / max(time.time() - started, 1e-6)
        reporter.progress(done, total, (total - done) / rate if rate > 0 else 0.0)
        reporter.phase(phase)  # after progress(), which names every phase "training"

    try:
        figures = make_all(config=config, progress=progress)
    except Exception as exc:  # noqa: BLE001 - any failure becomes the job's final status
        traceback.print_exc()
        if reporter is not None:
            reporter.finish("failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return 1
    made = [f.name for f in figures if f.made]
    skipped = {f.name: f.skipped for f in figures if not f.made}
    for name, why in skipped.items():
        print(f"skipped {name}: {why}", flush=True)
    print(f"done: {len(made)} figures in {config.out_dir}", flush=True)
    if reporter is not None:
        reporter.finish("completed", {"out_dir": config.out_dir, "made": made, "skipped": skipped})
        if not reporter.store.get(reporter.job_id).on_ray:
            schedule(reporter.store)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cuset.figures.job JOB_DIR", file=sys.stderr)
        return 2
    return run_job(Path(args[0]))


if __name__ == "__main__":
    raise SystemExit(main())
