"""The KernelBench solutions benchmark's list and report (benchmarks/kernelbench_solutions.py):
every listed entry has its task and solution, its size edits apply and shrink the task, bad
lists are rejected naming the entry, and the summary counts the shim share. Nothing is built."""

from __future__ import annotations

import ast
import re

import pytest

from benchmarks import kernelbench_solutions as kbs


def _assignments(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^([A-Za-z_]\w*) *= *([^\n]+)$", text, re.M)}


def test_the_list_parses_into_at_least_twenty_distinct_tasks():
    entries = kbs.load_entries()
    assert len(entries) >= 20
    assert len({e.task for e in entries}) == len(entries)
    assert any(e.small for e in entries) and not all(e.small for e in entries)
    for e in entries:
        tree = ast.parse(e.solution_path.read_text(encoding="utf-8"))
        classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert "ModelNew" in classes, e.task
        assert "load_inline(" in e.solution_path.read_text(encoding="utf-8"), e.task


def test_each_edit_shrinks_a_size_of_the_verbatim_task():
    for e in kbs.load_entries():
        original, edited = _assignments(e.task_path.read_text(encoding="utf-8")), _assignments(e.task_text())
        changed = {k for k in original if original[k] != edited.get(k)}
        assert changed, f"{e.task}: the edits change no module-level size"
        for name in changed:  # every changed size is a smaller number or tuple of numbers
            before, after = eval(original[name].split("#")[0]), eval(edited[name])  # noqa: S307 - literals of our own list
            shrink = (lambda a, b: a > b) if isinstance(before, int) else (lambda a, b: a[0] > b[0])
            assert shrink(before, after), f"{e.task}: {name} {before} -> {after}"
        ast.parse(e.task_text())


def test_an_edit_that_does_not_apply_is_rejected_naming_the_entry(tmp_path):
    bad = tmp_path / "list.toml"
    bad.write_text('[[solution]]\ntask = "19_ReLU"\nedit = [{ old = "batch_size = 9999", new = "batch_size = 1" }]\n')
    with pytest.raises(ValueError, match="entry 19_ReLU: edit 1 `old` occurs 0 times"):
        kbs.load_entries(bad)
    bad.write_text('[[solution]]\ntask = "19_ReLU"\n[[solution]]\ntask = "19_ReLU"\n')
    with pytest.raises(ValueError, match="solution 2: task '19_ReLU' is listed twice"):
        kbs.load_entries(bad)
    bad.write_text('[[solution]]\ntask = "0_NoSuchTask"\n')
    with pytest.raises(ValueError, match="task file .*0_NoSuchTask.py not found"):
        kbs.load_entries(bad)


def test_summary_table_and_fallback_pieces():
    rows = [
        {"task": "a", "status": "correct", "path": "shim", "build_s": 1.0, "run_s": 2.0, "missing": ""},
        {"task": "b", "status": "correct", "path": "torch", "build_s": 40.0, "run_s": 2.5, "missing": "torch::matmul"},
        {"task": "c", "status": "wrong_result", "path": "shim", "build_s": 1.5, "run_s": 2.0, "missing": ""},
    ]
    assert kbs.summarize(rows) == {"kb_solutions": 3, "kb_correct": 2, "kb_shim": 2, "kb_torch": 1, "kb_shim_share": 0.667}
    table = kbs.render_table(rows).splitlines()
    assert table[3] == "| b | correct | torch | 40.00 | 2.50 | torch::matmul |"
    result = {"builds": [{"path": "torch", "missing": "", "shim_message": "s.py:3:9: error: 'matmul' is not a member of 'torch'"},
                         {"path": "shim"}, {"path": "torch", "missing": "at::Tensor::sum"}]}
    assert kbs._fallback_pieces(result) == "torch::matmul; at::Tensor::sum"
