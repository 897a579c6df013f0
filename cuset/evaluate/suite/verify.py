"""Check that the harness judges a bundled task's solutions as the suite says: the reference is
`correct`, each planted wrong solution gets its expected failing status.

    from cuset.evaluate.suite import load_suite, verify_task
    for row in verify_task(load_suite()[0], Path("/tmp/x")):
        print(row["solution"], row["expect"], row["status"], row["ok"])

    python -m cuset.evaluate.suite --verify --level 1      # the same over the suite, one line per solution
    python -m cuset.evaluate.suite --verify --backend cpu --backend cuda --workers 12 --json rows.jsonl
                                                           # both backends, then a table task by task

`verify_suite` runs many (task, backend) pairs at once; `backend_table` puts each solution's
verdicts side by side and `table_markdown` writes that table. On the `compile` backend nothing
runs, so a solution is expected to be "compiled" unless its bug is a compile error.

On the cuda backend a solution the trials pass also goes through compute-sanitizer
(cuset.evaluate.sanitizer; `sanitizer=False`, `--no-sanitizer` turn it off): its verdict and
seconds are a column of the table, `sanitizer_lines` sums them up, and a planted bug it catches
counts as judged as recorded (`matches`).

Every solution runs through `cuset.evaluate.check.check_solution` (sandboxed), so this is also
the end-to-end test of the CPU backend on KernelBench-format code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from cuset.evaluate.suite.bundled import Task


def wanted(backend: str, expect: str) -> str:
    """The status a solution recorded as `expect` should get on `backend`: the record itself, but
    "compiled" on the compile backend (nothing runs there) unless the bug is a compile error."""
    return "compiled" if backend == "compile" and expect != "compile_error" else expect


def matches(backend: str, expect: str, status: str) -> bool:
    """Whether `status` is the verdict recorded as `expect` on `backend`: `wanted`, or on the cuda
    backend a compute-sanitizer finding (race, memory_error, sync_error) for a planted bug whose
    trials passed (the suite records what the emulator answers; the GPU reaches it through the
    sanitizer)."""
    from cuset.evaluate.sanitizer import STATUSES

    return status == wanted(backend, expect) or (backend == "cuda" and expect != "correct" and status in STATUSES)


def verify_task(task: Task, folder: Path, backend: str = "cpu", trials: int = 5, timeout: float = 120.0,
                sanitizer: bool = True) -> list[dict[str, Any]]:
    """One row per solution of `task` (reference first): task, backend, solution, bug, expect,
    status, ok, message, first_bad, wall_s, and where the time went (reference_s, build_s,
    run_s), and the compute-sanitizer stage's `sanitizer`, `sanitizer_s`, `sanitizer_note`
    (sanitizer_fields). Wrong solutions are written into `folder` to be checked. `expect` is the
    suite's record; `ok` is `matches(backend, expect, status)`."""
    from cuset.evaluate.check import check_solution

    if task.reference_path is None:
        raise ValueError(f"{task.id}: has no reference solution to verify (KernelBench tasks ship none).")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    task_file = task.task_file(folder)
    runs = [("reference", "", "correct", task.reference_path)]
    runs += [(w.name, w.bug, w.expect, w.write(folder, prefix=f"{task.id}_")) for w in task.wrong]
    rows = []
    for name, bug, expect, path in runs:
        t0 = time.perf_counter()
        result = check_solution(path, task_file, backend=backend, trials=trials, timeout=timeout, sanitizer=sanitizer)
        rows.append({"task": task.id, "backend": backend, "solution": name, "bug": bug, "expect": expect, "status": result["status"],
                     "ok": matches(backend, expect, result["status"]), "message": result.get("message", ""),
                     "first_bad": result.get("first_bad"), "wall_s": round(time.perf_counter() - t0, 2),
                     **{k: result.get(k) for k in ("reference_s", "build_s", "run_s")}, **sanitizer_fields(result)})
    return rows


def sanitizer_fields(result: dict[str, Any]) -> dict[str, Any]:
    """A row's sanitizer columns from a check record: `sanitizer` (the tool that found something,
    else the verdict word: clean, timeout, unchecked, not run, off, not found, unusable, n/a),
    `sanitizer_s` and `sanitizer_note`; none for a record without a sanitizer stage."""
    info = result.get("sanitizer")
    if not isinstance(info, dict):
        return {}
    return {"sanitizer": info.get("finding") or info.get("verdict"), "sanitizer_s": result.get("sanitizer_s"), "sanitizer_note": info.get("note", "")}


def verify_suite(tasks: Sequence[Task], folder: Path, backends: Sequence[str] = ("cpu",), trials: int = 5, timeout: float = 120.0,
                 workers: int = 1, on_task: Callable[[list[dict[str, Any]]], None] | None = None,
                 sanitizer: bool = True) -> list[dict[str, Any]]:
    """verify_task for every (task, backend) pair, `workers` pairs at a time (each check is a
    sandboxed process that mostly waits on a compiler). `on_task` gets each pair's rows as it
    finishes; the result is all rows in task, backend order. A pair whose verification raises
    gives one row with status "error" and the exception as its message, so the others still
    report; an interrupt cancels the pairs not yet started."""
    from cuset.evaluate.check import BACKENDS

    unknown = [b for b in backends if b not in BACKENDS]
    if unknown or not backends:
        raise ValueError(f"backends {list(backends)}: choose from {', '.join(BACKENDS)}")
    if workers < 1:
        raise ValueError(f"workers {workers}: must be at least 1")
    pairs = [(t, b) for t in tasks for b in dict.fromkeys(backends)]
    done: dict[tuple[str, str], list[dict[str, Any]]] = {}
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = {pool.submit(verify_task, t, Path(folder) / b / t.id, b, trials, timeout, sanitizer): (t, b) for t, b in pairs}
        for future in as_completed(futures):
            task, backend = futures[future]
            try:
                rows = future.result()
            except Exception as exc:  # noqa: BLE001 - one broken pair must not lose the others' rows
                rows = [{"task": task.id, "backend": backend, "solution": "-", "bug": "", "expect": "-", "status": "error",
                         "ok": False, "message": f"{type(exc).__name__}: {exc}", "first_bad": None, "wall_s": 0.0}]
            done[(task.id, backend)] = rows
            if on_task:
                on_task(rows)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return [row for t, b in pairs for row in done[(t.id, b)]]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows written one JSON object per line (`--json`); an unreadable line names file and line."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not a JSON object ({exc.msg})") from None
        missing = [k for k in ("task", "backend", "solution", "expect", "status") if not isinstance(row, dict) or k not in row]
        if missing:
            raise ValueError(f"{path}:{n}: a verification row needs {', '.join(missing)}")
        rows.append(row)
    return rows


def backend_table(rows: Iterable[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """(backends, table): one table row per (task, solution) in first-seen order with task,
    solution, bug, expect, each backend's status (None where it did not run), "BACKEND sanitizer"
    where a row carries a sanitizer verdict (sanitizer_cell), and `agree`: every
    backend gave the same status (None where one of them did not run). "compiled" on the compile
    backend agrees with any status but a compile error, "compile_error" with a compile error."""
    rows = list(rows)
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        entry = table.setdefault((r["task"], r["solution"]), {"task": r["task"], "solution": r["solution"], "bug": r.get("bug", ""),
                                                             "expect": r["expect"], **{b: None for b in backends}})
        entry[r["backend"]] = r["status"]
        cell = sanitizer_cell(r)
        if cell:
            entry[f"{r['backend']} sanitizer"] = cell
    for entry in table.values():
        if any(entry[b] is None for b in backends):
            entry["agree"] = None
            continue
        ran = [entry[b] for b in backends if b != "compile"]
        compiled = entry.get("compile")
        same_build = compiled is None or not ran or compiled == ("compile_error" if ran[0] == "compile_error" else "compiled")
        entry["agree"] = len(set(ran)) <= 1 and same_build
    return backends, list(table.values())


def table_markdown(backends: Sequence[str], table: Sequence[dict[str, Any]]) -> str:
    """The table as Markdown (a "BACKEND sanitizer" column where rows carry one: the verdict and
    its seconds), then per backend how many solutions it judged as the suite records, and how
    many every backend judged alike."""
    sanitized = [f"{b} sanitizer" for b in backends if any(e.get(f"{b} sanitizer") for e in table)]
    head = ["task", "solution", "bug", "expected", *backends, *sanitized, "same"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in table:
        cells = [e["task"], e["solution"], e["bug"] or "-", e["expect"], *[e[b] or "-" for b in backends], *[e.get(c) or "-" for c in sanitized],
                 {True: "yes", False: "**no**", None: "-"}[e["agree"]]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines.append("")
    for b in backends:
        ran = [e for e in table if e[b] is not None]
        hit = sum(matches(b, e["expect"], e[b]) for e in ran)
        lines.append(f"- {b}: {hit}/{len(ran)} solutions judged as the suite records")
        bugs = [e for e in ran if e["solution"] != "reference"]
        if bugs and b != "compile":
            caught = sum(e[b] != "correct" for e in bugs)
            lines.append(f"- {b}: {caught}/{len(bugs)} planted bugs not passed as correct")
    both = [e for e in table if e["agree"] is not None]
    if len(backends) > 1:
        lines.append(f"- all backends the same: {sum(e['agree'] for e in both)}/{len(both)} solutions that every backend checked")
    return "\n".join(lines) + "\n"


def sanitizer_cell(row: dict[str, Any]) -> str:
    """The table's sanitizer cell of a row: "racecheck 41 s" (a finding), "clean 96 s", "not run",
    "not found", ...; "" for rows without one or where it does not apply (n/a)."""
    verdict = row.get("sanitizer")
    if not verdict or verdict == "n/a":
        return ""
    seconds = row.get("sanitizer_s")
    return f"{verdict} {float(seconds):.0f} s" if seconds else str(verdict)


def sanitizer_lines(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Markdown bullet lines on the compute-sanitizer stage of the cuda rows (none without it):
    what it found over the candidates it ran on, its extra seconds per such candidate (mean,
    median), the references it left correct and the missing_sync bugs caught."""
    import statistics

    from cuset.evaluate.sanitizer import STATUSES, TOOLS

    cuda = [r for r in rows if r.get("backend") == "cuda" and r.get("sanitizer")]
    if not cuda:
        return []
    ran = [r for r in cuda if r.get("sanitizer_s")]
    if not ran:
        notes = sorted({str(r.get("sanitizer_note") or r["sanitizer"]) for r in cuda if r["sanitizer"] != "not run"})
        return [f"- cuda sanitizer: ran over no candidate ({'; '.join(notes) or 'none passed the trials'})"]
    found = [r for r in ran if r["sanitizer"] in TOOLS]
    kinds = ", ".join(f"{s} {sum(r['status'] == s for r in found)}" for s in STATUSES)
    others = ", ".join(f"{sum(r['sanitizer'] == v for r in ran)} {v}" for v in ("timeout", "unchecked"))
    seconds = [float(r["sanitizer_s"]) for r in ran]
    lines = [f"- cuda sanitizer: ran over {len(ran)} candidates the trials passed: {len(found)} findings ({kinds}), {others}; "
             f"extra time per candidate: mean {statistics.mean(seconds):.1f} s, median {statistics.median(seconds):.1f} s"]
    refs = [r for r in cuda if r.get("solution") == "reference"]
    if refs:
        lines.append(f"- cuda references correct with the sanitizer: {sum(r['status'] == 'correct' for r in refs)}/{len(refs)}")
    sync = [r for r in cuda if r.get("bug") == "missing_sync"]
    if sync:
        lines.append(f"- cuda missing_sync bugs caught: {sum(r['status'] != 'correct' for r in sync)}/{len(sync)}")
    return lines
