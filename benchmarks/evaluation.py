"""Evaluation throughput on the cpu backend, and what the build cache saves.

    python -m benchmarks.evaluation            # the whole bundled suite x 1 candidate (its references)
    python -m benchmarks.evaluation --small    # 6 tasks (what CI runs)

The suite's reference solutions are checked the way an evaluation run checks candidates
(cuset.evaluate.harness: one sandboxed process per candidate, one per core), first with an
empty build cache, then again with the cache those builds filled. Printed: candidates per
minute for each pass, the whole-suite time (aim: <= 5 minutes for the suite x 1 sample on 2
cores) and the cache-hit speedup (cold / warm). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from cuset.evaluate.evaluation import EvalConfig, build_candidates, select_tasks
from cuset.evaluate.harness import default_workers, evaluate_candidates


def run_pass(cands: list, label: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    records = evaluate_candidates(cands, backend="cpu", workers=default_workers())
    dt = time.perf_counter() - t0
    ok = sum(r["correct"] for r in records)
    print(f"{label}: {len(cands)} candidates in {dt:.1f} s = {len(cands) / dt * 60:.1f} per minute ({ok} correct)")
    return dt, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="6 tasks (CI)")
    args = ap.parse_args()
    config = EvalConfig(solutions="reference", limit=6 if args.small else 0)
    tasks = select_tasks(config)
    cands = build_candidates(config, tasks)
    with tempfile.TemporaryDirectory(prefix="cuset-bench-cache-") as cache:
        os.chmod(cache, 0o755)  # the sandboxed checks (uid nobody) read the shared cache
        os.environ["CUSET_BUILD_CACHE"] = cache
        cold, ok_cold = run_pass(cands, "cold build cache")
        warm, ok_warm = run_pass(cands, "warm build cache")
    per_min = len(cands) / cold * 60
    n_suite = len(select_tasks(EvalConfig(solutions="reference")))
    suite_min = n_suite / per_min
    print(f"whole suite ({n_suite} tasks) x 1 candidate, cold cache: {suite_min:.1f} min on {default_workers()} workers   aim <= 5 min"
          + ("" if not args.small else f" (extrapolated from {len(cands)} tasks)"))
    print(f"cache-hit speedup (cold / warm): {cold / warm:.2f}x")
    print(json.dumps({"candidates": len(cands), "cold_s": round(cold, 1), "warm_s": round(warm, 1), "candidates_per_min_cold": round(per_min, 1),
                      "candidates_per_min_warm": round(len(cands) / warm * 60, 1), "cache_speedup": round(cold / warm, 2), "suite_minutes_cold": round(suite_min, 2),
                      "correct_cold": ok_cold, "correct_warm": ok_warm}))


if __name__ == "__main__":
    main()
