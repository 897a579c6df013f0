"""The bundled benchmark suite from the command line.

    python -m cuset.evaluate.suite                      # list the tasks: id, level, family, split, bugs
    python -m cuset.evaluate.suite --export DIR         # DIR/<id>/{task,reference,wrong_N}.py for `cuset check`
    python -m cuset.evaluate.suite --verify --level 1   # run the harness: references pass, bugs fail as recorded
    python -m cuset.evaluate.suite --write-split        # rewrite the recorded split (split.json)
    python -m cuset.evaluate.suite --check              # exit 1 if split.json differs from the tasks
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from cuset.evaluate.suite.bundled import SPLIT_PATH, load_suite, suite_split
from cuset.evaluate.suite.verify import verify_task


def _split_text() -> str:
    return json.dumps(suite_split(), indent=2, sort_keys=True) + "\n"


def _export(tasks: list, out: Path) -> None:
    for t in tasks:
        d = out / t.id
        d.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(t.task_path, d / "task.py")
        shutil.copyfile(t.reference_path, d / "reference.py")
        for w in t.wrong:
            w.write(d)
    print(f"wrote {len(tasks)} tasks to {out}")


def _verify(tasks: list, trials: int) -> int:
    bad = 0
    with tempfile.TemporaryDirectory(prefix="cuset-suite-") as tmp:
        for t in tasks:
            for row in verify_task(t, Path(tmp) / t.id, trials=trials):
                bad += not row["ok"]
                mark = "ok " if row["ok"] else "BAD"
                note = "" if row["ok"] else f"  {row['message'][:200]}"
                print(f"{mark} {row['task']:28s} {row['solution']:10s} {row['bug']:22s} want {row['expect']:13s} got {row['status']:13s} "
                      f"{row['wall_s']:6.1f}s{note}", flush=True)
    print(f"{bad} solution(s) judged differently from the record")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The bundled KernelBench-format benchmark suite.")
    parser.add_argument("--level", type=int, action="append", help="keep tasks of this level (repeatable)")
    parser.add_argument("--family", action="append", help="keep tasks of this op family (repeatable)")
    parser.add_argument("--split", choices=["in_distribution", "held_out"], help="keep tasks of this split")
    parser.add_argument("--export", type=Path, metavar="DIR", help="write every task's files under DIR/<id>/")
    parser.add_argument("--verify", action="store_true", help="check every reference and wrong solution with the cpu backend")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials per solution for --verify")
    parser.add_argument("--write-split", action="store_true", help=f"rewrite {SPLIT_PATH.name}")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {SPLIT_PATH.name} is stale")
    args = parser.parse_args(argv)
    if args.write_split:
        SPLIT_PATH.write_text(_split_text(), encoding="utf-8")
        print(f"wrote {SPLIT_PATH}")
        return 0
    if args.check:
        current = SPLIT_PATH.exists() and SPLIT_PATH.read_text(encoding="utf-8") == _split_text()
        print(f"{SPLIT_PATH.name}: {'up to date' if current else 'stale; run python -m cuset.evaluate.suite --write-split'}")
        return 0 if current else 1
    try:
        tasks = load_suite(levels=args.level, families=args.family, split=args.split)
    except ValueError as exc:
        parser.error(str(exc))
    if args.export:
        _export(tasks, args.export)
        return 0
    if args.verify:
        return _verify(tasks, args.trials)
    for t in tasks:
        bugs = ", ".join(f"{w.bug}->{w.expect}" for w in t.wrong)
        print(f"{t.id:28s} L{t.level} {t.family:15s} {t.split:16s} {bugs}")
    print(f"{len(tasks)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
