"""The bundled benchmark suite from the command line.

    python -m cuset.evaluate.suite                      # list the tasks: id, level, family, split, bugs
    python -m cuset.evaluate.suite --export DIR         # DIR/<id>/{task,reference,wrong_N}.py for `cuset check`
    python -m cuset.evaluate.suite --verify --level 1   # run the harness: references pass, bugs fail as recorded
    python -m cuset.evaluate.suite --verify --backend cpu --backend cuda --workers 12 --json rows.jsonl --markdown table.md
                                                        # the verdicts of two backends side by side, task by task
    python -m cuset.evaluate.suite --verify --backend cuda --no-sanitizer   # the cuda backend without compute-sanitizer
    python -m cuset.evaluate.suite --rows rows.jsonl --markdown table.md   # that table again from saved rows
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
from cuset.evaluate.suite.verify import backend_table, read_rows, sanitizer_cell, sanitizer_lines, table_markdown, verify_suite


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


def _verify(tasks: list, backends: list[str], trials: int, timeout: float, workers: int, json_path: Path | None,
            sanitizer: bool = True) -> list[dict]:
    """Every (task, backend) pair, one printed line per solution as each pair finishes; with
    `json_path` (emptied first), each row is written to it as one JSON line at once (a run cut
    short keeps what finished)."""
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
    out = json_path.open("w", encoding="utf-8") if json_path else None

    def report(rows: list[dict]) -> None:
        for row in rows:
            mark = "ok " if row["ok"] else "BAD"
            note = "" if row["ok"] else f"  {row['message'][:200]}"
            if row.get("sanitizer_s"):
                note = f"  (sanitizer {sanitizer_cell(row)})" + note
            print(f"{mark} {row['backend']:7s} {row['task']:28s} {row['solution']:10s} {row['bug']:22s} want {row['expect']:13s} "
                  f"got {row['status']:13s} {row['wall_s']:6.1f}s{note}", flush=True)
            if out:
                out.write(json.dumps(row, default=str) + "\n")
                out.flush()

    if sanitizer and "cuda" in backends:
        from cuset.evaluate.sanitizer import warning

        line = warning()  # once, before the run: the rows then say it per solution
        if line:
            print(f"cuset.evaluate.suite: {line}", file=sys.stderr, flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="cuset-suite-") as tmp:
            rows = verify_suite(tasks, Path(tmp), backends, trials=trials, timeout=timeout, workers=workers, on_task=report,
                                sanitizer=sanitizer)
    finally:
        if out:
            out.close()
    print(f"{sum(not r['ok'] for r in rows)} solution(s) judged differently from the record")
    return rows


def _table(rows: list[dict], markdown: Path | None) -> None:
    backends, table = backend_table(rows)
    text = table_markdown(backends, table)
    extra = sanitizer_lines(rows)
    if extra:
        text += "\n".join(extra) + "\n"
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        tmp = markdown.with_name(markdown.name + ".part")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(markdown)
        print(f"wrote {markdown}")
    print("\n".join(line for line in text.splitlines() if line.startswith("- ") or "**no**" in line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The bundled KernelBench-format benchmark suite.")
    parser.add_argument("--level", type=int, action="append", help="keep tasks of this level (repeatable)")
    parser.add_argument("--family", action="append", help="keep tasks of this op family (repeatable)")
    parser.add_argument("--task", action="append", metavar="ID", help="keep this task (repeatable; verified in the order given)")
    parser.add_argument("--split", choices=["in_distribution", "held_out"], help="keep tasks of this split")
    parser.add_argument("--export", type=Path, metavar="DIR", help="write every task's files under DIR/<id>/")
    parser.add_argument("--verify", action="store_true", help="check every reference and wrong solution (the cpu backend unless --backend)")
    parser.add_argument("--backend", action="append", choices=["cpu", "compile", "cuda"],
                        help="backend for --verify (repeatable: each solution on each, then a table side by side)")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials per solution for --verify")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per check for --verify (the cuda backend's build included)")
    parser.add_argument("--workers", type=int, default=1, help="(task, backend) pairs checked at once for --verify")
    parser.add_argument("--no-sanitizer", action="store_true",
                        help="--verify on the cuda backend: skip compute-sanitizer after the trials (cuset.evaluate.sanitizer)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write each --verify row to FILE (emptied first) as a JSON line as it finishes")
    parser.add_argument("--rows", type=Path, metavar="FILE", help="read rows written by --json instead of verifying (for the table)")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write the backends' verdicts side by side as a Markdown table")
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
        unknown = sorted(set(args.task or []) - {t.id for t in tasks})
        if unknown:
            raise ValueError(f"--task {', '.join(unknown)}: no such task in the selection (python -m cuset.evaluate.suite lists them)")
        if args.task:  # in the order given: the first named are verified first (a run cut short keeps them)
            tasks = sorted((t for t in tasks if t.id in args.task), key=lambda t: args.task.index(t.id))
    except ValueError as exc:
        parser.error(str(exc))
    if args.export:
        _export(tasks, args.export)
        return 0
    if args.rows:
        if args.verify or args.json:
            parser.error("--rows reads saved rows for the table; it does not go with --verify or --json")
        try:
            rows = read_rows(args.rows)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
        if not rows:
            parser.error(f"{args.rows}: holds no rows")
        _table(rows, args.markdown)
        return 0
    verify_only = [name for name, given in (("--backend", args.backend), ("--json", args.json), ("--markdown", args.markdown),
                                            ("--workers", args.workers != 1), ("--timeout", args.timeout != 120.0),
                                            ("--no-sanitizer", args.no_sanitizer)) if given]
    if verify_only and not args.verify:
        parser.error(f"{', '.join(verify_only)}: only with --verify (or --markdown with --rows)")
    if args.verify:
        if args.workers < 1:
            parser.error(f"--workers {args.workers}: must be at least 1")
        if args.timeout <= 0:
            parser.error(f"--timeout {args.timeout:g}: must be more than 0 seconds")
        rows = _verify(tasks, args.backend or ["cpu"], args.trials, args.timeout, args.workers, args.json, sanitizer=not args.no_sanitizer)
        if args.markdown or len(set(args.backend or [])) > 1:
            _table(rows, args.markdown)
        elif sanitizer_lines(rows):
            print("\n".join(sanitizer_lines(rows)))
        return 1 if any(not r["ok"] for r in rows) else 0
    for t in tasks:
        bugs = ", ".join(f"{w.bug}->{w.expect}" for w in t.wrong)
        print(f"{t.id:28s} L{t.level} {t.family:15s} {t.split:16s} {bugs}")
    print(f"{len(tasks)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
