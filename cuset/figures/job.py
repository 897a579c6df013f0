"""The figures job process: run the FiguresConfig in JOB_DIR/config.yaml, report to the store.

    python -m cuset.figures.job JOB_DIR

Started by cuset.jobs when the Figures page's "Regenerate all figures" button (or
`jobs.submit(FiguresConfig())`) queues one. Progress is reported per scored sample (only
samples missing from the score cache are scored) and per figure; the job's result lists the
figures made and the reasons for the ones skipped. Exit status: 0 done, 1 failed, 3 the job
was not queued.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_job(folder: Path) -> int:
    from cuset.figures import FiguresConfig, make_all
    from cuset.jobs.reporter import run_as_job

    config = FiguresConfig.load(folder / "config.yaml")

    def work(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
        figures = make_all(config=config, progress=progress)
        made = [f.name for f in figures if f.made]
        skipped = {f.name: f.skipped for f in figures if not f.made}
        for name, why in skipped.items():
            print(f"skipped {name}: {why}", flush=True)
        print(f"done: {len(made)} figures in {config.out_dir}", flush=True)
        return {"out_dir": config.out_dir, "made": made, "skipped": skipped}

    return run_as_job(folder, work)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cuset.figures.job JOB_DIR", file=sys.stderr)
        return 2
    return run_job(Path(args[0]))


if __name__ == "__main__":
    raise SystemExit(main())
