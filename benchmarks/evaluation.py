"""Evaluation throughput on the cpu backend, and what the build cache saves.

    python -m benchmarks.evaluation            # the whole bundled suite x 1 candidate (its references)
    python -m benchmarks.evaluation --small    # 6 tasks (what CI runs)

The suite's reference solutions are checked the way an evaluation run checks candidates
(cuset.evaluate.harness: one sandboxed process per candidate, one per core), first with an
empty build cache, then again with the cache those builds filled. Printed: candidates per
minute for each pass, the whole-suite time (aim: <= 5 minutes for the suite x 1 sample on 2
cores) and the cache-hit speedup (cold / warm). Then the poisoned run's cost (issue 12): each of
the first 5 references checked one at a time with the build and reference caches warm, with
and without the poisoned run; printed per task and as the mean ratio (aim <= 1.3x). The last
line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from cuset.evaluate.evaluation import EvalConfig, build_candidates, select_tasks
from cuset.evaluate.harness import default_workers, evaluate_candidates

POISON_TASKS = 5


def run_pass(cands: list, label: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    records = evaluate_candidates(cands, backend="cpu", workers=default_workers())
    dt = time.perf_counter() - t0
    ok = sum(r["correct"] for r in records)
    for r in records:
        if not r["correct"]:
            print(f"  not correct: {r['task_id']}: {r['status']}: {r['message'][:300]}")
    print(f"{label}: {len(cands)} candidates in {dt:.1f} s = {len(cands) / dt * 60:.1f} per minute ({ok} correct)")
    return dt, ok


def poison_cost(tasks: list) -> tuple[float, list[dict]]:
    """Seconds per check with / without the poisoned run, per task (caches warm); mean ratio."""
    from pathlib import Path

    from cuset.evaluate.check import check_solution

    rows = []
    with tempfile.TemporaryDirectory(prefix="cuset-bench-poison-") as tmp:
        for t in tasks[:POISON_TASKS]:
            task = t.task_file(Path(tmp))
            check_solution(t.reference_path, task)  # warm the build and reference caches
            times = {}
            for poison in (False, True):
                t0 = time.perf_counter()
                r = check_solution(t.reference_path, task, poison=poison)
                times[poison] = time.perf_counter() - t0
                assert r["status"] == "correct", (t.id, r["status"], r["message"])
            rows.append({"task": t.id, "plain_s": round(times[False], 2), "poisoned_s": round(times[True], 2),
                         "ratio": round(times[True] / times[False], 3)})
            print(f"poisoned run {t.id:28s} {times[False]:.2f} s -> {times[True]:.2f} s  ({times[True] / times[False]:.2f}x)", flush=True)
    ratio = sum(r["ratio"] for r in rows) / len(rows)
    print(f"poisoned run cost: {ratio:.2f}x a check without it (mean over {len(rows)} tasks)   aim <= 1.3x")
    return ratio, rows


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
        ratio, rows = poison_cost(tasks)
    per_min = len(cands) / cold * 60
    n_suite = len(select_tasks(EvalConfig(solutions="reference")))
    suite_min = n_suite / per_min
    print(f"whole suite ({n_suite} tasks) x 1 candidate, cold cache: {suite_min:.1f} min on {default_workers()} workers   aim <= 5 min"
          + ("" if not args.small else f" (extrapolated from {len(cands)} tasks)"))
    print(f"cache-hit speedup (cold / warm): {cold / warm:.2f}x")
    print(json.dumps({"candidates": len(cands), "cold_s": round(cold, 1), "warm_s": round(warm, 1), "candidates_per_min_cold": round(per_min, 1),
                      "candidates_per_min_warm": round(len(cands) / warm * 60, 1), "cache_speedup": round(cold / warm, 2), "suite_minutes_cold": round(suite_min, 2),
                      "correct_cold": ok_cold, "correct_warm": ok_warm, "poison_ratio": round(ratio, 3), "poison_tasks": rows}))


if __name__ == "__main__":
    main()
