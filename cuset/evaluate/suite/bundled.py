"""The bundled benchmark suite: KernelBench-format tasks written for this project, each with a
reference solution the harness must pass and planted wrong solutions it must fail.

    from cuset.evaluate.suite import load_suite
    tasks = load_suite(levels=[1], split="held_out")
    t = tasks[0]
    t.task_path, t.reference_path          # files to hand to `cuset check`
    t.wrong[0].bug, t.wrong[0].expect      # e.g. "missing_sync", "wrong_result"

One folder per task, `tasks/<id>/`:

- `task.py`: the reference `Model`, `get_inputs`, `get_init_inputs` (shapes small enough for the
  CPU backend: a few thousand elements, 64x64 matmuls, attention over 32 positions);
- `reference.py`: `ModelNew`, its CUDA built with `load_inline`; correct on a real GPU too;
- `meta.toml`: level, family, description, and the wrong solutions. A wrong solution is written
  as exact edits of the reference (`old` -> `new`, each `old` found exactly once), so it differs
  from the correct code only where the bug is and cannot drift from it.

The split follows the training corpus's record (cuset/data/bundled/split.json): a task of a
family the corpus trains on is `in_distribution` (with an op, shape or fusion no corpus sample
has), one of a held-out family is `held_out`.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUITE_DIR = Path(__file__).resolve().parent
TASKS_DIR = SUITE_DIR / "tasks"
SPLIT_PATH = SUITE_DIR / "split.json"
CORPUS_SPLIT_PATH = SUITE_DIR.parent.parent / "data" / "bundled" / "split.json"
SUITES = {"bundled": TASKS_DIR}
LEVELS = (1, 2, 3)
SPLITS = ("in_distribution", "held_out")
# What the harness must answer for a wrong solution (cuset.evaluate.check.CATEGORIES minus "correct").
FAIL_CATEGORIES = ("compile_error", "runtime_error", "timeout", "resource_limit", "unsupported", "wrong_result", "reward_hack", "race",
                   "memory_error", "sync_error")
BUGS = {
    "off_by_one_guard": "a bounds or mask comparison one element off (`<=` for `<`, `n - 1` for `n`)",
    "off_by_one_loop": "a loop bound or start one off, so an element is skipped or one too many is read",
    "off_by_one_index": "an index one element off (`cols - c` for `cols - 1 - c`, `t` for `t + 1`)",
    "off_by_one_size": "an output size one off (a convolution's output length L - K instead of L - K + 1)",
    "missing_sync": "a __syncthreads() left out between writes to shared memory and reads of them",
    "wrong_reduction_init": "an accumulator started at the wrong identity (0 for a max, 0 for a product) or never cleared",
    "wrong_launch_size": "a grid or block too small (floor instead of ceiling division), so part of the output is never computed",
    "wrong_index": "index arithmetic that addresses the wrong element (a stride, offset or broadcast dimension)",
    "missing_broadcast": "a warp reduction's result used in every lane although only lane 0 holds it (no __shfl_sync from lane 0)",
    "missing_bounds_check": "a range check left out, so out-of-range elements are read or counted",
    "missing_tail": "a vectorised loop without the scalar loop for the last n % 4 elements",
    "wrong_normalisation": "a mean or variance divided by the wrong count",
    "wrong_dtype": "a tensor read through a pointer of the wrong element type",
}


@dataclass(frozen=True)
class WrongSolution:
    """A planted wrong solution: the reference with one bug, and what the harness must say."""

    name: str  # "wrong_1", ...
    bug: str  # a key of BUGS
    expect: str  # the check status it must get, one of FAIL_CATEGORIES
    why: str  # one sentence: what goes wrong
    text: str  # the whole solution module

    def __post_init__(self) -> None:
        if self.bug not in BUGS:
            raise ValueError(f"{self.name}: bug {self.bug!r} is not one of {sorted(BUGS)}; add it to BUGS with a description.")
        if self.expect not in FAIL_CATEGORIES:
            raise ValueError(f"{self.name}: expect {self.expect!r} is not one of {list(FAIL_CATEGORIES)}.")

    def write(self, folder: Path, prefix: str = "") -> Path:
        """Write the solution module to `folder/{prefix}{name}.py` and return the path."""
        path = Path(folder) / f"{prefix}{self.name}.py"
        path.write_text(self.text, encoding="utf-8")
        return path


@dataclass(frozen=True)
class Task:
    """One benchmark task: the reference module and, for bundled tasks, its solutions.

    Tasks from KernelBench (`load_kernelbench`) have no family, split or solutions; their
    `source` is "kernelbench" and `problem_id` is KernelBench's number.
    """

    id: str  # "L1-relu6", or "KB-L1-19" for KernelBench
    level: int
    task_text: str
    family: str | None = None
    split: str | None = None  # "in_distribution" | "held_out"; None outside the bundled suite
    description: str = ""
    task_path: Path | None = None
    reference_text: str | None = None
    reference_path: Path | None = None
    wrong: tuple[WrongSolution, ...] = field(default_factory=tuple)
    source: str = "bundled"  # "bundled" | "kernelbench"
    problem_id: int | None = None
    name: str = ""

    def task_file(self, folder: Path) -> Path:
        """A path to the task module: its own file, or the text written into `folder`."""
        if self.task_path is not None and self.task_path.is_file():
            return self.task_path
        path = Path(folder) / f"{self.id}_task.py"
        path.write_text(self.task_text, encoding="utf-8")
        return path


def corpus_split(path: Path = CORPUS_SPLIT_PATH) -> dict[str, list[str]]:
    """The training corpus's recorded families: {"train_families": [...], "held_out_families": [...]}."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {"train_families": list(data["train_families"]), "held_out_families": list(data["held_out_families"])}


def _split_of(family: str, families: dict[str, list[str]]) -> str:
    if family in families["train_families"]:
        return "in_distribution"
    if family in families["held_out_families"]:
        return "held_out"
    known = families["train_families"] + families["held_out_families"]
    raise ValueError(f"family {family!r} is neither a training nor a held-out family of the corpus; use one of {known}.")


def apply_edits(text: str, edits: list[dict[str, str]], where: str) -> str:
    """The reference with each `old` replaced by its `new`, in order; each `old` must occur once."""
    for k, edit in enumerate(edits):
        old, new = edit.get("old"), edit.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ValueError(f"{where}: edit {k + 1} needs non-empty `old` and a `new` string.")
        count = text.count(old)
        if count != 1:
            raise ValueError(f"{where}: edit {k + 1} `old` occurs {count} times in the reference; give it enough context to be unique.")
        text = text.replace(old, new)
    return text


def _load_task(folder: Path, families: dict[str, list[str]]) -> Task:
    """One task folder, validated: ids, levels, families, bugs and edits that apply."""
    meta_path = folder / "meta.toml"
    try:
        meta: dict[str, Any] = tomllib.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{meta_path}: {exc}") from exc
    level = meta.get("level")
    if level not in LEVELS:
        raise ValueError(f"{meta_path}: level {level!r} must be one of {list(LEVELS)}.")
    if not folder.name.startswith(f"L{level}-"):
        raise ValueError(f"{folder.name}: a level-{level} task's id starts with 'L{level}-'; rename the folder or fix the level.")
    family = str(meta.get("family", ""))
    task_path, reference_path = folder / "task.py", folder / "reference.py"
    reference = reference_path.read_text(encoding="utf-8")
    wrong = []
    for k, spec in enumerate(meta.get("wrong", []), start=1):
        where = f"{meta_path} wrong {k}"
        text = apply_edits(reference, spec.get("edit", []), where)
        if text == reference:
            raise ValueError(f"{where}: the edits leave the reference unchanged.")
        wrong.append(WrongSolution(f"wrong_{k}", spec.get("bug", ""), spec.get("expect", ""), spec.get("why", ""), text))
    if not wrong:
        raise ValueError(f"{meta_path}: a task needs at least one [[wrong]] solution.")
    return Task(
        id=folder.name, level=level, task_text=task_path.read_text(encoding="utf-8"), family=family,
        split=_split_of(family, families), description=str(meta.get("description", "")), task_path=task_path,
        reference_text=reference, reference_path=reference_path, wrong=tuple(wrong), name=folder.name,
    )


def _selection(values: Any, allowed: tuple | list, what: str) -> set | None:
    if values is None:
        return None
    chosen = {values} if isinstance(values, (str, int)) else set(values)
    unknown = sorted(str(v) for v in chosen - set(allowed))
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; choose from {list(allowed)}.")
    return chosen


def load_suite(name: str | Path = "bundled", levels: int | list[int] | None = None, families: str | list[str] | None = None,
               split: str | None = None) -> list[Task]:
    """The suite's tasks, sorted by level then id, optionally filtered.

    `name` is "bundled" or a folder with the same layout (tasks/<id>/ folders directly in it);
    `levels`, `families` and `split` keep only matching tasks (unknown values are rejected).
    """
    folder = SUITES.get(str(name)) or Path(name)
    if not Path(folder).is_dir():
        raise ValueError(f"suite {name!r}: not a known suite ({sorted(SUITES)}) nor a folder of task folders.")
    corpus = corpus_split()
    want_levels = _selection(levels, LEVELS, "level(s)")
    want_families = _selection(families, corpus["train_families"] + corpus["held_out_families"], "family(ies)")
    want_split = _selection(split, SPLITS, "split")
    tasks = [_load_task(d, corpus) for d in sorted(Path(folder).iterdir()) if (d / "meta.toml").is_file()]
    return sorted(
        (t for t in tasks if (want_levels is None or t.level in want_levels) and (want_families is None or t.family in want_families)
         and (want_split is None or t.split in want_split)),
        key=lambda t: (t.level, t.id),
    )


def suite_split(tasks: list[Task] | None = None) -> dict[str, Any]:
    """What the suite holds: task ids per split, families per split, counts by level, family and
    bug; the record shipped as split.json (`python -m cuset.evaluate.suite --write-split`)."""
    tasks = load_suite() if tasks is None else tasks
    corpus = corpus_split()
    out: dict[str, Any] = {"n_tasks": len(tasks), "corpus_split": "cuset/data/bundled/split.json"}
    for split in SPLITS:
        mine = [t for t in tasks if t.split == split]
        out[split] = {"families": sorted({t.family for t in mine}), "tasks": [t.id for t in mine]}
    out["corpus_train_families"] = corpus["train_families"]
    out["corpus_held_out_families"] = corpus["held_out_families"]
    out["by_level"] = {str(k): v for k, v in sorted(Counter(t.level for t in tasks).items())}
    out["by_family"] = dict(sorted(Counter(t.family for t in tasks).items()))
    out["by_bug"] = dict(sorted(Counter(w.bug for t in tasks for w in t.wrong).items()))
    out["by_expected_status"] = dict(sorted(Counter(w.expect for t in tasks for w in t.wrong).items()))
    out["n_wrong_solutions"] = sum(len(t.wrong) for t in tasks)
    return out
