"""Failures against regions: do a run's failing lines fall inside low-confidence sensitive regions?

For every failed candidate of an evaluation run the failure is located in the candidate's own
file (`solution.py`, the code the results store keeps):

    error line     the line the compiler, the emulator's fault or race/barrier report, or the
                   runtime names (the results' `error_line`, parsed from `solution.py:N` by the
                   evaluator)
    output stores  a wrong result has no line of its own: the lines of the `__global__` kernels
                   that store into a non-const pointer parameter (`out[i] = ...`, `y[j] += ...`,
                   `reinterpret_cast<float4*>(y)[i] = ...`, `atomicAdd(&out[k], ...)`) are the lines that write the differing output;
                   which of them wrote the first differing element cannot be told from the
                   output alone, so all of them are the location
    unlocated      otherwise (a timeout, no code, a wrong result whose kernels store nowhere
                   we can see); counted and reported, never guessed

The code is scored under the model that wrote it (the run's model, `job:ID` for a fine-tune;
teacher-forced on the task's user turn, without the one-shot example the generation prompt
also showed), its low-confidence sensitive regions found with an ObjectiveConfig (default: the
app's), and each located failure asks: does a located line overlap a region? The chance rate
is what a line drawn at random from the same kernel would give: per failure, the probability
that k random non-blank lines of its CUDA source hit one the regions cover (for k = 1: the
covered share of its CUDA lines); its mean over the failures is the run's chance rate. The
observed share carries a 95% Wilson interval; both are also given per error status and per
region kind. Failures located outside the CUDA source (a Python line of the wrapper) are
counted apart: no region can hold them.

    cuset failures 7 [--model M] [--json]
    from cuset.failures import run_failures
    report = run_failures(7)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuset.confidence import TokenScores, TokenTable
from cuset.evaluate.metrics import wilson_interval
from cuset.objective import ObjectiveConfig, compute
from cuset.regions import REGION_KINDS
from cuset.sensitivity import TagResult, tag

FAILED = ("compile_error", "runtime_error", "timeout", "resource_limit", "unsupported", "wrong_result", "reward_hack", "race", "memory_error",
          "sync_error")
# `__global__ void k(...)  {`, with `__launch_bounds__(...)` before or after the return type.
_KERNEL = re.compile(r"__global__(?:__launch_bounds__\s*\([^)]*\)|[\w\s:<>*&])*?\b(\w+)\s*\(([^)]*)\)\s*\{", re.S)
_ASSIGN = r"(?:=(?!=)|\+=|-=|\*=|/=|\|=|&=|\^=|<<=|>>=)"


@dataclass(frozen=True)
class Location:
    """Where a failure is: 1-based lines of the candidate's file, how they were found, or why not."""

    lines: tuple[int, ...] = ()
    how: str = ""  # "error line", "output stores" or "" (unlocated)
    reason: str = ""  # why it is unlocated

    @property
    def located(self) -> bool:
        return bool(self.lines)


def _matching_brace(text: str, open_at: int) -> int:
    """Index just past the brace that closes the one at `open_at` (or len(text))."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def output_store_lines(code: str) -> list[int]:
    """1-based lines of `code` where a `__global__` kernel stores into one of its non-const
    pointer parameters: `p[...] op= ...`, a cast `reinterpret_cast<float4*>(p)[i] = ...`,
    `*p = ...`, `*(p + i) = ...` or an atomic on `p`."""
    found: set[int] = set()
    for match in _KERNEL.finditer(code):
        outputs = []
        for param in match.group(2).split(","):
            if "*" not in param:
                continue
            name = re.findall(r"\w+", param.split("*")[-1])
            before_star = param.split("*")[0]
            if name and not re.search(r"\bconst\b", before_star):
                outputs.append(name[-1])
        body_start = match.end() - 1
        body_end = _matching_brace(code, body_start)
        body = code[body_start:body_end]
        for name in outputs:
            n = re.escape(name)
            patterns = [rf"\b{n}\s*\[[^;]*?\]\s*{_ASSIGN}", rf"\(\s*{n}\s*(?:[+-][^()]*)?\)\s*\[[^;]*?\]\s*{_ASSIGN}", rf"\*\s*\(?\s*{n}\b[^;=]*?\)?\s*{_ASSIGN}", rf"\batomic\w+\s*\(\s*&?\s*\(?\s*{n}\b"]
            for pattern in patterns:
                for hit in re.finditer(pattern, body):
                    found.add(code.count("\n", 0, body_start + hit.start()) + 1)
    return sorted(found)


def locate(record: dict[str, Any]) -> Location:
    """The location of a failed candidate (a results row: status, code, error_line)."""
    code = record.get("code") or ""
    if not code.strip():
        return Location(reason="no code")
    n_lines = len(code.splitlines())
    line = record.get("error_line")
    if line is not None and line == line and not (isinstance(line, float) and math.isnan(line)):
        line = int(line)
        if 1 <= line <= n_lines:
            return Location((line,), "error line")
        return Location(reason=f"error line {line} is outside the code's {n_lines} lines")
    if record.get("status") == "wrong_result":
        stores = output_store_lines(code)
        if stores:
            return Location(tuple(stores), "output stores")
        return Location(reason="wrong result, but no kernel line storing into an output pointer was found")
    return Location(reason=f"{record.get('status')}: the evaluator named no line")


def cuda_lines(code: str, tagged: TagResult) -> set[int]:
    """1-based non-blank lines inside the code's CUDA blocks (a load_inline string, a fence);
    every non-blank line when the code is CUDA as it stands (no block found)."""
    lines = code.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(x) for x in lines])
    blocks = [(b.start, b.end) for b in tagged.blocks] or [(0, len(code))]
    out = set()
    for k, text in enumerate(lines):
        if not text.strip():
            continue
        # The line's own characters, without surrounding whitespace: a block that opens with the
        # newline after `source = """` does not claim that line.
        lo = int(starts[k]) + len(text) - len(text.lstrip())
        hi = int(starts[k]) + len(text.rstrip())
        if any(lo < end and hi > start for start, end in blocks):
            out.add(k + 1)
    return out


def region_lines(code: str, char_ranges: Sequence[tuple[int, int]]) -> set[int]:
    """1-based lines that the character ranges [start, end) overlap."""
    out = set()
    for a, b in char_ranges:
        first = code.count("\n", 0, a) + 1
        out.update(range(first, first + code.count("\n", a, max(b - 1, a)) + 1))
    return out


def hit_chance(n_lines: int, n_covered: int, k: int) -> float:
    """P(at least one of k distinct lines drawn at random from n_lines is among n_covered):
    1 - C(n - c, k) / C(n, k)."""
    if n_lines <= 0:
        return float("nan")
    k = min(max(k, 1), n_lines)
    return 1.0 - math.comb(n_lines - n_covered, k) / math.comb(n_lines, k)


def judge(records: Sequence[dict[str, Any]], scores: Sequence[TokenScores], tags: Sequence[TagResult],
          config: ObjectiveConfig | None = None) -> list[dict[str, Any]]:
    """One row per failed record (index-aligned with its scores and tags of its code): location,
    CUDA lines, the lines regions cover, whether a located line is inside a region (and which
    kinds), and the chance of that under random placement."""
    config = config or ObjectiveConfig()
    result = compute(TokenTable.build(list(scores), list(tags)), config, "cuset")
    regions = result.regions
    kinds = regions.kind_names()
    rows = []
    for s, (record, tagged) in enumerate(zip(records, tags)):
        code = record.get("code") or ""
        location = locate(record)
        mine = np.flatnonzero(regions.sample == s)
        per_region = [(region_lines(code, [(int(regions.char_start[r]), int(regions.char_end[r]))]), kinds[r]) for r in mine]
        covered = set().union(*[lines for lines, _ in per_region]) if per_region else set()
        kernel = cuda_lines(code, tagged)
        located = set(location.lines)
        in_cuda = bool(located & kernel)
        hit_kinds = sorted({kind for lines, kind in per_region if lines & located})
        rows.append({
            "task_id": record.get("task_id"), "sample": record.get("sample"), "status": record.get("status"),
            "located": location.located, "how": location.how, "reason": location.reason, "lines": list(location.lines),
            "in_cuda": in_cuda, "cuda_lines": len(kernel), "covered_lines": len(covered & kernel), "regions": int(mine.size),
            "inside": bool(hit_kinds), "kinds": hit_kinds,
            "chance": hit_chance(len(kernel), len(covered & kernel), len(located & kernel)) if in_cuda else float("nan"),
            "kind_chance": {kind: hit_chance(len(kernel), len(set().union(*[ls for ls, k in per_region if k == kind]) & kernel),
                                             len(located & kernel)) for kind in sorted({k for _, k in per_region})} if in_cuda else {},
        })
    return rows


def _rate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    inside = sum(r["inside"] for r in rows)
    low, high = wilson_interval(inside, n)
    chance = float(np.mean([r["chance"] for r in rows])) if n else float("nan")
    return {"n": n, "inside": inside, "share": inside / n if n else float("nan"), "interval": [low, high], "chance": chance}


def statistics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run's figures from `judge` rows: counts (failed, located, in the CUDA source,
    unlocated with reasons), the overall share inside a region vs chance with a Wilson
    interval, the same per status, and per region kind (a failure inside a region of that kind;
    its chance from that kind's lines alone)."""
    tested = [r for r in rows if r["located"] and r["in_cuda"]]
    reasons: dict[str, int] = {}
    for r in rows:
        if not r["located"]:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    by_kind = {}
    for kind in REGION_KINDS:
        n_in = sum(kind in r["kinds"] for r in tested)
        chance = [r["kind_chance"].get(kind, 0.0) for r in tested]
        if n_in or any(chance):
            low, high = wilson_interval(n_in, len(tested))
            by_kind[kind] = {"n": len(tested), "inside": n_in, "share": n_in / len(tested), "interval": [low, high], "chance": float(np.mean(chance))}
    return {
        "failed": len(rows), "located": sum(r["located"] for r in rows), "located_in_cuda": len(tested),
        "located_outside_cuda": sum(r["located"] and not r["in_cuda"] for r in rows),
        "unlocated": sum(not r["located"] for r in rows), "unlocated_reasons": reasons,
        "by_how": {how: sum(r["how"] == how for r in tested) for how in ("error line", "output stores")},
        "overall": _rate(tested),
        "by_status": {status: _rate([r for r in tested if r["status"] == status]) for status in FAILED if any(r["status"] == status for r in tested)},
        "by_kind": by_kind,
    }


def _instructions(run: dict[str, Any], records: Sequence[dict[str, Any]]) -> tuple[list[str], str]:
    """The user turn each candidate was written for (the task's instruction), and a note."""
    try:
        from cuset.evaluate.evaluation import EvalConfig, select_tasks
        from cuset.generate.prompts import task_instruction

        fields = {k: v for k, v in (run.get("config") or {}).items() if k in EvalConfig.__dataclass_fields__}
        tasks = {t.id: t.task_text for t in select_tasks(EvalConfig(**{**fields, "limit": 0}))}
        missing = sorted({str(r["task_id"]) for r in records} - set(tasks))
        note = f"{len(missing)} task(s) not in the run's suite {fields.get('suite', 'bundled')!r} ({', '.join(missing[:5])}): their code scored without its prompt" if missing else ""
        return [task_instruction(tasks[r["task_id"]]) if r["task_id"] in tasks else "" for r in records], note
    except Exception as exc:  # noqa: BLE001 - a missing suite still lets the code be scored, without the prompt
        return ["" for _ in records], f"the run's tasks could not be loaded ({type(exc).__name__}: {exc}); code scored without its prompt"


def run_failures(run_id: int, model: str | None = None, config: ObjectiveConfig | None = None,
                 progress: Callable[[str, int, int], None] | None = None, fallback: str = "") -> dict[str, Any]:
    """The failures-in-regions report of evaluation run `run_id` (scores are cached). The code
    is scored under `model`, else the model that wrote it, else (a run of the suite's own
    reference or wrong solutions: no model wrote them) under `fallback`."""
    from cuset.confidence import score_samples
    from cuset.data import Sample
    from cuset.diff import score_config
    from cuset.evaluate.results import ResultStore

    store = ResultStore()
    run = store.get_run(run_id)
    generated = (run.get("config") or {}).get("solutions", "generate") == "generate"
    writer = model or (run.get("model") if generated else "") or fallback
    if not writer:
        raise ValueError(f"run {run_id} ({run.get('label') or run.get('method')}): its candidates were not written by a model "
                         "(suite solutions); pass --model to score them under one.")
    frame = store.frame([run_id])
    records = [] if frame.empty else [r for r in frame.to_dict("records") if r["status"] in FAILED]
    with_code = [r for r in records if (r.get("code") or "").strip()]
    instructions, note = _instructions(run, with_code)
    samples = [Sample(id=f"{r['task_id']}#{r['sample']}", instruction=i, response=r["code"]) for r, i in zip(with_code, instructions)]
    scores: list[TokenScores] = []
    if samples:
        report = (lambda done, total: progress(writer, done, total)) if progress else None
        scores = score_samples(samples, score_config(writer, max_length=4096), report)[0]
    tags = [tag(r["code"], "python") for r in with_code]
    rows = judge(with_code, scores, tags, config)
    rows += [{"task_id": r["task_id"], "sample": r["sample"], "status": r["status"], "located": False, "how": "", "reason": "no code",
              "lines": [], "in_cuda": False, "cuda_lines": 0, "covered_lines": 0, "regions": 0, "inside": False, "kinds": [],
              "chance": float("nan"), "kind_chance": {}} for r in records if not (r.get("code") or "").strip()]
    return {"run": run_id, "label": run.get("label", ""), "model": writer, "candidates": 0 if frame.empty else len(frame),
            "note": note, **statistics(rows), "failures": rows}


def format_report(report: dict[str, Any]) -> list[str]:
    """The report as text lines for the CLI."""
    o = report["overall"]

    def rate(r: dict[str, Any]) -> str:
        return (f"{r['inside']}/{r['n']} inside = {r['share']:.1%} [95% {r['interval'][0]:.1%}, {r['interval'][1]:.1%}] vs chance {r['chance']:.1%}"
                if r["n"] else "none located")

    lines = [f"run {report['run']} ({report['label']}), code scored under {report['model']}: {report['candidates']} candidates, "
             f"{report['failed']} failed; {report['located_in_cuda']} located in the CUDA source "
             f"({report['by_how']['error line']} by error line, {report['by_how']['output stores']} by output stores), "
             f"{report['located_outside_cuda']} outside it, {report['unlocated']} unlocated",
             f"  failing line inside a low-confidence sensitive region: {rate(o)}"]
    lines += [f"  {status:<16} {rate(r)}" for status, r in report["by_status"].items()]
    lines += [f"  region kind {kind:<21} {rate(r)}" for kind, r in report["by_kind"].items()]
    lines += [f"  unlocated: {count} x {reason}" for reason, count in report["unlocated_reasons"].items()]
    if report["note"]:
        lines.append(f"  note: {report['note']}")
    return lines
