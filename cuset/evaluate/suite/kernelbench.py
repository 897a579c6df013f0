"""KernelBench itself as a task list, so the public benchmark runs the same way as the bundled suite.

    from cuset.evaluate.suite import load_kernelbench
    tasks = load_kernelbench("~/src/KernelBench", level=1, problem_ids=[1, 19])   # a git checkout
    tasks = load_kernelbench("ScalingIntelligence/KernelBench", level=[1, 2])     # the Hugging Face data set
    tasks = load_kernelbench("kb_saved/")                                          # datasets' save_to_disk folder
    check_solution(solution, tasks[0].task_file(tmp))

Two sources:

- a checkout of github.com/ScalingIntelligence/KernelBench: `KernelBench/level1/19_ReLU.py`, ...
  (the repository root or its `KernelBench/` folder); the number before the first `_` is the
  problem id, the rest of the file name is the task's name;
- the Hugging Face data set `ScalingIntelligence/KernelBench` (splits `level_1` ... `level_4`,
  columns `code`, `level`, `name`, `problem_id`), from the hub (needs the network or the hub
  cache) or from a folder written by `datasets`' `save_to_disk`.

Tasks come back as `Task`s with `source="kernelbench"`, id `KB-L{level}-{problem_id}`, and no
family, split or solutions (KernelBench ships none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cuset.evaluate.suite.bundled import Task

HUB_ID = "ScalingIntelligence/KernelBench"
KB_LEVELS = (1, 2, 3, 4)
_PROBLEM_FILE = re.compile(r"^(\d+)_(.+)\.py$")
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_LEVEL_SPLIT = re.compile(r"^level_(\d+)$")


def _wanted(level: int | Iterable[int] | None) -> set[int] | None:
    if level is None:
        return None
    levels = {level} if isinstance(level, int) else {int(x) for x in level}
    unknown = sorted(levels - set(KB_LEVELS))
    if unknown:
        raise ValueError(f"KernelBench level(s) {unknown} do not exist; choose from {list(KB_LEVELS)}.")
    return levels


def _task(level: int, problem_id: int, name: str, code: str, path: Path | None = None) -> Task:
    return Task(id=f"KB-L{level}-{problem_id}", level=level, task_text=code, task_path=path, source="kernelbench",
                problem_id=problem_id, name=name)


def _checkout_root(path: Path) -> Path | None:
    """The folder holding level1/, level2/, ...: `path` itself or its KernelBench/ subfolder."""
    for root in (path / "KernelBench", path):
        if root.is_dir() and any(_LEVEL_DIR.match(d.name) and d.is_dir() for d in root.iterdir()):
            return root
    return None


def _from_checkout(root: Path, levels: set[int] | None) -> list[Task]:
    tasks = []
    for level_dir in sorted(root.iterdir()):
        match = _LEVEL_DIR.match(level_dir.name)
        if not match or not level_dir.is_dir():
            continue
        level = int(match.group(1))
        if levels is not None and level not in levels:
            continue
        for f in sorted(level_dir.glob("*.py")):
            m = _PROBLEM_FILE.match(f.name)
            if m:
                tasks.append(_task(level, int(m.group(1)), m.group(2), f.read_text(encoding="utf-8"), f))
    return tasks


def _from_rows(rows: Iterable[dict[str, Any]], levels: set[int] | None) -> list[Task]:
    tasks = []
    for row in rows:
        missing = [c for c in ("code", "level", "problem_id") if c not in row]
        if missing:
            raise ValueError(f"KernelBench data set rows need columns code, level, name, problem_id; missing {missing}.")
        level = int(row["level"])
        if levels is None or level in levels:
            tasks.append(_task(level, int(row["problem_id"]), str(row.get("name") or ""), str(row["code"])))
    return tasks


def _from_dataset(data: Any, levels: set[int] | None) -> list[Task]:
    """A `datasets.DatasetDict` with level_N splits, or one `Dataset` with a level column."""
    if hasattr(data, "keys"):
        rows: list[dict[str, Any]] = []
        for split in data.keys():
            match = _LEVEL_SPLIT.match(split)
            if match and (levels is None or int(match.group(1)) in levels):
                rows.extend(data[split])
        return _from_rows(rows, levels)
    return _from_rows(data, levels)


def _load_hf(source: str | Path) -> Any:
    import datasets

    path = Path(source).expanduser()
    if path.is_dir():
        return datasets.load_from_disk(str(path))
    try:
        return datasets.load_dataset(str(source))
    except Exception as exc:  # network, cache or name problems all need the same advice
        raise ValueError(
            f"could not load the Hugging Face data set {source!r} ({type(exc).__name__}: {exc}). Without the network, pass a "
            f"KernelBench checkout folder or a folder written by datasets' save_to_disk."
        ) from exc


def load_kernelbench(source: str | Path = HUB_ID, level: int | Iterable[int] | None = None,
                     problem_ids: Iterable[int] | None = None) -> list[Task]:
    """KernelBench tasks from a checkout folder, a saved data set folder or the hub, sorted by
    (level, problem id). `level` and `problem_ids` select; a requested id that is not there is
    an error naming it."""
    levels = _wanted(level)
    text = str(source)
    path = Path(text.removeprefix("hf:")).expanduser()
    root = _checkout_root(path) if path.is_dir() else None
    if root is not None:
        tasks = _from_checkout(root, levels)
    elif path.is_dir() and not any(path.glob("*.json")):
        raise ValueError(f"{path}: neither a KernelBench checkout (KernelBench/level1/1_....py) nor a save_to_disk data set folder.")
    else:
        tasks = _from_dataset(_load_hf(text.removeprefix("hf:")), levels)
    if problem_ids is not None:
        ids = {int(i) for i in problem_ids}
        found = {t.problem_id for t in tasks}
        missing = sorted(ids - found)
        if missing:
            where = f"level(s) {sorted(levels)}" if levels else "any level"
            raise ValueError(f"KernelBench problem id(s) {missing} not found in {where} of {text}.")
        tasks = [t for t in tasks if t.problem_id in ids]
    return sorted(tasks, key=lambda t: (t.level, t.problem_id or 0))
