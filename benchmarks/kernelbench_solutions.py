"""Real KernelBench solutions on the CPU backend: which run on the torch shim, which fall back.

    python -m benchmarks.kernelbench_solutions              # every solution; writes benchmarks/reports/kernelbench_solutions.{md,json}
    python -m benchmarks.kernelbench_solutions --small      # the few marked `small` (what CI runs); no report unless --report
    python -m benchmarks.kernelbench_solutions --only 19_ReLU,23_Softmax --trials 2

benchmarks/kernelbench_solutions/solutions.toml lists the solutions: one `ModelNew` per
KernelBench level-1 task, written for this benchmark in the styles models produce (grid-stride
loops, 2D/3D grids, shared-memory tiling, warp shuffles, several kernels per file, streams,
CUDA guards, AT_DISPATCH_*, packed accessors, ATen calls in host code). The task files are
KernelBench's own (tasks/, verbatim, see its README.md); each entry's `edit` shrinks the
problem sizes to fit a 2-core CPU, applied the way the bundled suite applies its planted bugs
(cuset.evaluate.suite.bundled.apply_edits).

Each solution goes through the project's check path (cuset.evaluate.check.check_solution,
backend "cpu": reference and candidate in sandboxes, 5 trials, the poisoned run), one at a
time. Per solution the table gives the verdict, the build path (shim: the small stand-in for
torch's C++ API; torch: torch's own headers, when the host code uses ATen the shim lacks), the
build seconds (all load_inline calls), the run seconds (the candidate process's wall clock less
its builds: interpreter start, trials and the poisoned run) and, for each torch fallback, the
ATen pieces the shim lacked. The last line is one JSON object:
{"kb_solutions": N, "kb_correct": c, "kb_shim_share": x}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuset.evaluate.check import check_solution
from cuset.evaluate.cpu.build import BackendError, compiler, cuda_include_dir
from cuset.evaluate.cpu.kernelbench import missing_aten
from cuset.evaluate.suite.bundled import apply_edits

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "kernelbench_solutions"
LIST = FOLDER / "solutions.toml"
REPORTS = HERE / "reports"


@dataclass(frozen=True)
class Entry:
    """One listed solution: KernelBench task `task` (tasks/TASK.py), solutions/TASK.py, the size edits."""

    task: str  # KernelBench's file stem, e.g. "19_ReLU"
    style: str  # how the solution is written (launch style, ATen used), for the report
    edit: tuple[tuple[str, str], ...]  # (old, new) replacements that shrink the task's sizes
    small: bool = False  # part of the --small run

    @property
    def task_path(self) -> Path:
        return FOLDER / "tasks" / f"{self.task}.py"

    @property
    def solution_path(self) -> Path:
        return FOLDER / "solutions" / f"{self.task}.py"

    def task_text(self) -> str:
        """The KernelBench task with this entry's sizes."""
        edits = [{"old": old, "new": new} for old, new in self.edit]
        return apply_edits(self.task_path.read_text(encoding="utf-8"), edits, f"{LIST.name} entry {self.task}")


def load_entries(path: Path = LIST) -> list[Entry]:
    """The listed solutions, validated: files present, names unique, every edit applies once."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from exc
    entries, seen = [], set()
    for k, spec in enumerate(data.get("solution", []), start=1):
        where = f"{path} solution {k}"
        task = spec.get("task")
        if not isinstance(task, str) or not task:
            raise ValueError(f"{where}: needs a `task` (a KernelBench file stem such as \"19_ReLU\").")
        if task in seen:
            raise ValueError(f"{where}: task {task!r} is listed twice.")
        seen.add(task)
        edits = spec.get("edit", [])
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            raise ValueError(f"{where}: `edit` must be a list of {{ old = ..., new = ... }} tables.")
        entry = Entry(task, str(spec.get("style", "")), tuple((str(e.get("old", "")), str(e.get("new", ""))) for e in edits),
                      bool(spec.get("small", False)))
        for label, file in (("task", entry.task_path), ("solution", entry.solution_path)):
            if not file.is_file():
                raise ValueError(f"{where}: {label} file {file} not found.")
        entry.task_text()  # raises, naming the entry, if an edit does not apply
        entries.append(entry)
    if not entries:
        raise ValueError(f"{path}: no [[solution]] entries.")
    return entries


def _fallback_pieces(result: dict[str, Any]) -> str:
    """What the torch-path builds of a result needed from ATen: the record's `missing`, or
    (records from before that field) the names read from the shim's messages."""
    pieces = []
    for build in result.get("builds") or []:
        if build.get("path") == "torch":
            pieces.append(build.get("missing") or missing_aten(build.get("shim_message", "")) or "(not named)")
    return "; ".join(dict.fromkeys(pieces))


def run_entry(entry: Entry, folder: Path, trials: int = 5, timeout: float = 300.0) -> dict[str, Any]:
    """Check one solution on the cpu backend; returns its report row."""
    task_file = folder / f"{entry.task}_task.py"
    task_file.write_text(entry.task_text(), encoding="utf-8")
    t0 = time.perf_counter()
    result = check_solution(entry.solution_path, task_file, backend="cpu", trials=trials, timeout=timeout)
    build_s = float(result.get("compile_s") or 0.0)
    run_s = result.get("run_s")
    if run_s is None:
        run_s = max(0.0, float(result.get("wall_s") or 0.0) - build_s)
    return {
        "task": entry.task, "status": result.get("status"), "path": result.get("path"), "build_s": round(build_s, 2),
        "run_s": round(float(run_s), 2), "check_s": round(time.perf_counter() - t0, 2), "missing": _fallback_pieces(result),
        "message": "" if result.get("status") == "correct" else str(result.get("message", ""))[:600], "style": entry.style,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    shim = sum(r["path"] == "shim" for r in rows)
    return {"kb_solutions": n, "kb_correct": sum(r["status"] == "correct" for r in rows),
            "kb_shim": shim, "kb_torch": sum(r["path"] == "torch" for r in rows), "kb_shim_share": round(shim / n, 3) if n else 0.0}


def render_table(rows: list[dict[str, Any]]) -> str:
    """The report's Markdown table, one row per solution."""
    lines = ["| task | verdict | path | build s | run s | missing from the shim (torch fallback) |", "|---|---|---|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['status']} | {r['path'] or '-'} | {r['build_s']:.2f} | {r['run_s']:.2f} | {r['missing'] or ''} |")
    return "\n".join(lines)


def render_report(rows: list[dict[str, Any]], summary: dict[str, Any], trials: int) -> str:
    failures = [r for r in rows if r["status"] != "correct"]
    parts = [
        "# KernelBench solutions on the CPU backend",
        "",
        "Written by `python -m benchmarks.kernelbench_solutions` (see its docstring). Each row is one `ModelNew` written "
        "for a KernelBench level-1 task (benchmarks/kernelbench_solutions/), checked with `check_solution(backend=\"cpu\", "
        f"trials={trials})` against KernelBench's own task file, sizes shrunk by the entry's edits. Build s: the "
        "load_inline builds (0 when cached); run s: the candidate process less its builds.",
        "",
        f"**{summary['kb_correct']} / {summary['kb_solutions']} correct; {summary['kb_shim']} on the shim, "
        f"{summary['kb_torch']} on the torch fallback (shim share {summary['kb_shim_share']:.0%}).**",
        "",
        render_table(rows),
        "",
        "## How each is written",
        "",
        *[f"- {r['task']}: {r['style']}" for r in rows],
    ]
    if failures:
        parts += ["", "## Not correct", "", *[f"- {r['task']} ({r['status']}): {r['message']}" for r in failures]]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", action="store_true", help="only the entries marked small (CI)")
    p.add_argument("--only", help="comma-separated task stems to run")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--report", action="store_true", help="write the report even with --small/--only")
    args = p.parse_args(argv)
    entries = load_entries()
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = sorted(set(wanted) - {e.task for e in entries})
        if unknown:
            p.error(f"--only: {unknown} not in {LIST.name}; listed: {[e.task for e in entries]}")
        entries = [e for e in entries if e.task in wanted]
    if args.small:
        entries = [e for e in entries if e.small]
    try:
        compiler(), cuda_include_dir()
    except BackendError as exc:  # nothing can be built here: say so, no table
        print(f"kernelbench_solutions: skipped, the CPU backend cannot build here: {exc}")
        print(json.dumps({"kb_solutions": 0, "kb_correct": 0, "kb_shim_share": None, "skipped": str(exc)}))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="cuset-kb-solutions-") as tmp:
        for entry in entries:
            row = run_entry(entry, Path(tmp), args.trials)
            rows.append(row)
            print(f"{row['task']:<50} {row['status']:<14} {row['path'] or '-':<6} build {row['build_s']:6.2f} s  run {row['run_s']:6.2f} s"
                  + (f"  missing: {row['missing']}" if row["missing"] else "")
                  + (f"\n    {row['message'][:300]}" if row["message"] else ""), flush=True)
    summary = summarize(rows)
    print()
    print(render_table(rows))
    if args.report or not (args.small or args.only):
        REPORTS.mkdir(parents=True, exist_ok=True)
        (REPORTS / "kernelbench_solutions.md").write_text(render_report(rows, summary, args.trials), encoding="utf-8")
        (REPORTS / "kernelbench_solutions.json").write_text(json.dumps({**summary, "trials": args.trials, "rows": rows}, indent=1) + "\n",
                                                            encoding="utf-8")
    print(json.dumps({k: summary[k] for k in ("kb_solutions", "kb_correct", "kb_shim_share")}))
    return 0 if summary["kb_correct"] == summary["kb_solutions"] or not args.small else 1


if __name__ == "__main__":
    sys.exit(main())
