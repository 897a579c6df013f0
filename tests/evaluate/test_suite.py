"""The bundled benchmark suite (cuset/evaluate/suite): its contents and split, the KernelBench
loader, and (slow) the harness judging every reference `correct` and every planted bug as recorded."""

from __future__ import annotations

import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from cuset.data.corpus.build import HELD_OUT_FAMILIES
from cuset.evaluate.suite import (
    BUGS,
    backend_table,
    load_kernelbench,
    load_suite,
    read_rows,
    suite_split,
    table_markdown,
    verify_task,
)
from cuset.evaluate.suite import verify as verify_module
from cuset.evaluate.suite.__main__ import main as suite_main
from cuset.evaluate.suite.bundled import CORPUS_SPLIT_PATH, SPLIT_PATH, TASKS_DIR, apply_edits

CORPUS_PATH = CORPUS_SPLIT_PATH.parent / "corpus.jsonl"
TASKS = load_suite()
TASK_IDS = [t.id for t in TASKS]


def _forward_body(module_text: str) -> str:
    """The statements of Model.forward, whitespace-normalised."""
    match = re.search(r"def forward\(.*?\n(.*?)(?=\n\S|\Z)", module_text, re.S)
    assert match, "no forward() found"
    return " ".join(match.group(1).split())


def _exec(text: str, name: str) -> dict:
    namespace: dict = {"__name__": name}
    exec(compile(text, name, "exec"), namespace)  # noqa: S102 - our own task modules
    return namespace


# ---------------------------------------------------------------- contents and split


def test_suite_size_levels_and_solutions():
    levels = [t.level for t in TASKS]
    assert len(TASKS) >= 40
    assert levels.count(1) >= 20 and levels.count(2) >= 12 and levels.count(3) >= 8
    assert len(set(TASK_IDS)) == len(TASK_IDS)
    for t in TASKS:
        assert t.id.startswith(f"L{t.level}-")
        assert t.wrong and all(w.text != t.reference_text for w in t.wrong)
        assert "load_inline" in t.reference_text and "class ModelNew" in t.reference_text
        assert t.description


def test_split_follows_the_corpus_record():
    corpus = json.loads(CORPUS_SPLIT_PATH.read_text())
    train, held = set(corpus["train_families"]), set(corpus["held_out_families"])
    assert train.isdisjoint(held)
    by_split = {s: {t.family for t in TASKS if t.split == s} for s in ("in_distribution", "held_out")}
    assert by_split["held_out"] == held, "every held-out family has tasks"
    assert by_split["in_distribution"] <= train
    assert sum(t.split == "held_out" for t in TASKS) >= 8
    for t in TASKS:
        assert t.split == ("held_out" if t.family in held else "in_distribution")


def test_recorded_split_is_current():
    assert json.loads(SPLIT_PATH.read_text()) == json.loads(json.dumps(suite_split()))
    assert suite_main(["--check"]) == 0


def test_in_distribution_tasks_are_new_to_the_corpus():
    corpus_tasks = [json.loads(line)["task"] for line in CORPUS_PATH.read_text().splitlines()]
    corpus_bodies = {_forward_body(t) for t in corpus_tasks}
    keywords = [k for words in HELD_OUT_FAMILIES.values() for k in words]
    for t in TASKS:
        assert t.task_text not in corpus_tasks
        assert _forward_body(t.task_text) not in corpus_bodies, f"{t.id}: same forward() as a corpus sample"
        if t.split == "in_distribution":
            text = (t.task_text + t.reference_text).lower()
            assert not [k for k in keywords if k in text], f"{t.id} mentions a held-out op"


def test_bugs_cover_the_issue_list():
    bugs = {w.bug for t in TASKS for w in t.wrong}
    assert {"off_by_one_guard", "missing_sync", "wrong_reduction_init", "wrong_launch_size"} <= bugs
    assert bugs <= set(BUGS)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_model_runs_on_cpu(task_id):
    """The reference Model (pure torch) runs on its own inputs: finite, varying outputs."""
    task = next(t for t in TASKS if t.id == task_id)
    ns = _exec(task.task_text, task.id)
    torch.manual_seed(42)
    model = ns["Model"](*ns["get_init_inputs"]()).eval()
    with torch.no_grad():
        out = model(*ns["get_inputs"]())
    for o in out if isinstance(out, tuple) else (out,):
        assert torch.isfinite(o.float()).all()
        assert o.numel() == 1 or not bool((o == o.flatten()[0]).all()), "a constant reference would trip the constant-output rule"


def test_wrong_solutions_are_python_modules():
    for t in TASKS:
        for w in t.wrong:
            compile(w.text, f"{t.id}/{w.name}", "exec")


# ---------------------------------------------------------------- loading and validation


def test_load_suite_filters():
    assert {t.level for t in load_suite(levels=3)} == {3}
    assert {t.family for t in load_suite(families=["sorting", "pooling"])} == {"sorting", "pooling"}
    held = load_suite(split="held_out")
    assert held and all(t.split == "held_out" for t in held)
    assert [t.level for t in TASKS] == sorted(t.level for t in TASKS)


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "nope"}, "not a known suite"),
    ({"levels": [4]}, "unknown level"),
    ({"families": "attention"}, "unknown family"),
    ({"split": "test"}, "unknown split"),
])
def test_load_suite_rejects_unknown_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_suite(**kwargs)


def _copy_task(tmp_path: Path, task_id: str, meta_edit: tuple[str, str] | None = None) -> Path:
    dest = tmp_path / task_id
    shutil.copytree(TASKS_DIR / task_id, dest)
    if meta_edit:
        meta = dest / "meta.toml"
        meta.write_text(meta.read_text().replace(*meta_edit))
    return tmp_path


def test_load_suite_from_a_folder(tmp_path):
    tasks = load_suite(_copy_task(tmp_path, "L1-relu6"))
    assert [t.id for t in tasks] == ["L1-relu6"]
    assert tasks[0].wrong[0].text.count("n / threads") == 1


@pytest.mark.parametrize("edit, message", [
    (("level = 1", "level = 2"), "starts with 'L2-'"),
    (('bug = "wrong_launch_size"', 'bug = "typo"'), "not one of"),
    (('expect = "wrong_result"', 'expect = "correct"'), "expect"),
    (('family = "elementwise"', 'family = "attention"'), "neither a training nor a held-out family"),
    (('old = "(n + threads - 1) / threads"', 'old = "threads"'), "occurs"),
])
def test_bad_task_metadata_is_rejected(tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        load_suite(_copy_task(tmp_path, "L1-relu6", edit))


def test_apply_edits():
    assert apply_edits("a < n; b", [{"old": "<", "new": "<="}], "x") == "a <= n; b"
    with pytest.raises(ValueError, match="occurs 2 times"):
        apply_edits("n; n", [{"old": "n", "new": "m"}], "x")


def test_cli_lists_and_exports(tmp_path, capsys):
    assert suite_main(["--level", "3"]) == 0
    assert f"{sum(t.level == 3 for t in TASKS)} tasks" in capsys.readouterr().out
    assert suite_main(["--family", "sorting", "--export", str(tmp_path)]) == 0
    sorting = [t for t in TASKS if t.family == "sorting"]
    for t in sorting:
        files = sorted(p.name for p in (tmp_path / t.id).iterdir())
        assert files == ["reference.py", "task.py"] + [f"{w.name}.py" for w in t.wrong]
    assert (tmp_path / sorting[0].id / "wrong_1.py").read_text() == sorting[0].wrong[0].text


def test_cli_keeps_named_tasks_and_refuses_unknown_ones(capsys):
    assert suite_main(["--task", "L3-mha", "--task", "L1-absdiff"]) == 0
    out = capsys.readouterr().out
    assert "L1-absdiff" in out and "L3-mha" in out and "2 tasks" in out
    with pytest.raises(SystemExit):
        suite_main(["--level", "1", "--task", "L3-mha"])
    assert "--task L3-mha: no such task in the selection" in capsys.readouterr().err


# ---------------------------------------------------------------- backends side by side


def _row(task: str, backend: str, solution: str, status: str, expect: str = "wrong_result", bug: str = "missing_sync") -> dict:
    if solution == "reference":
        expect, bug = "correct", ""
    return {"task": task, "backend": backend, "solution": solution, "bug": bug, "expect": expect, "status": status,
            "ok": status == expect, "message": "", "wall_s": 1.0}


def test_backend_table_puts_each_solutions_verdicts_side_by_side():
    rows = [_row("L1-a", "cpu", "reference", "correct"), _row("L1-a", "cuda", "reference", "correct"),
            _row("L1-a", "cpu", "wrong_1", "wrong_result"), _row("L1-a", "cuda", "wrong_1", "correct"),
            _row("L3-b", "cpu", "reference", "correct")]
    backends, table = backend_table(rows)
    assert backends == ["cpu", "cuda"]
    assert [(e["task"], e["solution"], e["cpu"], e["cuda"], e["agree"]) for e in table] == [
        ("L1-a", "reference", "correct", "correct", True), ("L1-a", "wrong_1", "wrong_result", "correct", False),
        ("L3-b", "reference", "correct", None, None)]
    text = table_markdown(backends, table)
    assert "| L1-a | wrong_1 | missing_sync | wrong_result | wrong_result | correct | **no** |" in text
    assert "| L3-b | reference | - | correct | correct | - | - |" in text
    assert "- cpu: 3/3 solutions judged as the suite records" in text
    assert "- cuda: 1/2 solutions judged as the suite records" in text
    assert "- all backends the same: 1/2 solutions that every backend checked" in text


def test_backend_table_reads_the_compile_backend_as_a_build_verdict():
    rows = [_row("L1-a", "cpu", "reference", "correct"), _row("L1-a", "compile", "reference", "compiled"),
            _row("L1-a", "cpu", "wrong_1", "compile_error", expect="compile_error", bug="syntax"),
            _row("L1-a", "compile", "wrong_1", "compiled", expect="compile_error", bug="syntax")]
    backends, table = backend_table(rows)
    assert [e["agree"] for e in table] == [True, False]
    text = table_markdown(backends, table)
    assert "- compile: 1/2 solutions judged as the suite records" in text


def test_read_rows_names_the_file_and_line_of_a_bad_row(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(_row("L1-a", "cpu", "reference", "correct")) + "\n\n{not json\n")
    with pytest.raises(ValueError, match=r"rows.jsonl:3: not a JSON object"):
        read_rows(path)
    path.write_text(json.dumps({"task": "L1-a", "backend": "cpu"}) + "\n")
    with pytest.raises(ValueError, match=r"rows.jsonl:1: a verification row needs solution, expect, status"):
        read_rows(path)


def test_verify_suite_runs_pairs_at_once_and_returns_them_in_order(monkeypatch, tmp_path):
    import threading

    together = threading.Barrier(4, timeout=10)  # breaks (and fails the test) unless 4 pairs run at once

    def fake(task, folder, backend, trials, timeout, sanitizer=True):
        if len(started) < 4:
            started.append(task.id)
            together.wait()
        return [_row(task.id, backend, "reference", "correct")]

    started: list[str] = []
    monkeypatch.setattr(verify_module, "verify_task", fake)
    seen = []
    rows = verify_module.verify_suite(TASKS[:3], tmp_path, ["cpu", "cuda", "cpu"], workers=4, on_task=seen.append)
    assert [(r["task"], r["backend"]) for r in rows] == [(t.id, b) for t in TASKS[:3] for b in ("cpu", "cuda")]
    assert len(seen) == 6 and not together.broken
    with pytest.raises(ValueError, match="backends \\['gpu'\\]: choose from cpu, compile, cuda"):
        verify_module.verify_suite(TASKS[:1], tmp_path, ["gpu"])


def test_verify_suite_keeps_the_other_rows_when_one_pair_breaks(monkeypatch, tmp_path):
    def fake(task, folder, backend, trials, timeout, sanitizer=True):
        if backend == "cuda":
            raise RuntimeError("no nvcc")
        return [_row(task.id, backend, "reference", "correct")]

    monkeypatch.setattr(verify_module, "verify_task", fake)
    rows = verify_module.verify_suite(TASKS[:2], tmp_path, ["cpu", "cuda"], workers=2)
    assert [(r["backend"], r["status"], r["ok"]) for r in rows] == [("cpu", "correct", True), ("cuda", "error", False)] * 2
    assert rows[1]["message"] == "RuntimeError: no nvcc"


def test_cli_json_holds_one_runs_rows_and_a_bad_verdict_fails(monkeypatch, tmp_path, capsys):
    statuses = iter(["correct", "wrong_result"])

    def fake(task, folder, backend, trials, timeout, sanitizer=True):
        return [_row(task.id, backend, "reference", next(statuses))]

    monkeypatch.setattr(verify_module, "verify_task", fake)
    rows_path = tmp_path / "new" / "rows.jsonl"
    argv = ["--verify", "--task", "L1-absdiff", "--json", str(rows_path)]
    assert suite_main(argv) == 0
    assert suite_main(argv) == 1
    assert [r["status"] for r in read_rows(rows_path)] == ["wrong_result"]
    assert "1 solution(s) judged differently from the record" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--backend", "cuda"], "--backend: only with --verify"),
    (["--json", "x.jsonl", "--workers", "3"], "--json, --workers: only with --verify"),
    (["--verify", "--timeout", "0"], "--timeout 0: must be more than 0 seconds"),
    (["--rows", "x.jsonl", "--verify"], "does not go with --verify"),
])
def test_cli_refuses_options_that_would_be_ignored(argv, message, capsys):
    with pytest.raises(SystemExit):
        suite_main(argv)
    assert message in capsys.readouterr().err


def test_cli_verifies_a_task_and_rebuilds_the_table_from_its_rows(tmp_path, capsys):
    """A real check on the cpu backend (one task, two solutions), its rows kept as JSON lines, and
    the Markdown table written again from them."""
    rows_path, table_path = tmp_path / "rows.jsonl", tmp_path / "out" / "table.md"
    assert suite_main(["--verify", "--task", "L1-absdiff", "--trials", "2", "--json", str(rows_path)]) == 0
    rows = read_rows(rows_path)
    assert [(r["backend"], r["solution"], r["status"], r["ok"]) for r in rows] == [
        ("cpu", "reference", "correct", True), ("cpu", "wrong_1", "wrong_result", True)]
    assert "0 solution(s) judged differently from the record" in capsys.readouterr().out
    assert suite_main(["--rows", str(rows_path), "--markdown", str(table_path)]) == 0
    text = table_path.read_text()
    assert "| L1-absdiff | wrong_1 | missing_tail | wrong_result | wrong_result | yes |" in text
    assert "- cpu: 2/2 solutions judged as the suite records" in text
    rows_path.write_text("\n")
    with pytest.raises(SystemExit):
        suite_main(["--rows", str(rows_path)])
    assert "holds no rows" in capsys.readouterr().err


# ---------------------------------------------------------------- KernelBench


KB_CODE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * {factor}


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
"""

KB_PROBLEMS = {1: [(1, "Square_matrix_multiplication_"), (19, "ReLU")], 2: [(3, "Conv_ReLU_BiasAdd")]}


def _fake_checkout(root: Path) -> Path:
    for level, problems in KB_PROBLEMS.items():
        d = root / "KernelBench" / f"level{level}"
        d.mkdir(parents=True)
        for pid, name in problems:
            (d / f"{pid}_{name}.py").write_text(KB_CODE.format(factor=pid))
    (root / "KernelBench" / "level1" / "README.md").write_text("not a problem")
    return root


def test_kernelbench_checkout(tmp_path):
    root = _fake_checkout(tmp_path)
    tasks = load_kernelbench(root)
    assert [(t.id, t.level, t.problem_id, t.name) for t in tasks] == [
        ("KB-L1-1", 1, 1, "Square_matrix_multiplication_"), ("KB-L1-19", 1, 19, "ReLU"), ("KB-L2-3", 2, 3, "Conv_ReLU_BiasAdd")]
    assert all(t.source == "kernelbench" and t.family is None and t.split is None and not t.wrong for t in tasks)
    assert [t.id for t in load_kernelbench(root / "KernelBench", level=1, problem_ids=[19])] == ["KB-L1-19"]
    task = load_kernelbench(root, level=[2])[0]
    assert task.task_file(tmp_path) == task.task_path
    ns = _exec(task.task_text, task.id)
    assert torch.equal(ns["Model"]()(torch.ones(2)), torch.full((2,), 3.0))
    with pytest.raises(ValueError, match=r"problem id\(s\) \[3\] not found"):
        load_kernelbench(root, level=1, problem_ids=[3])
    with pytest.raises(ValueError, match="do not exist"):
        load_kernelbench(root, level=5)
    with pytest.raises(ValueError, match="neither a KernelBench checkout"):
        load_kernelbench(tmp_path / "KernelBench" / "level1")


def _rows(level: int) -> dict[str, list]:
    problems = KB_PROBLEMS[level]
    return {"code": [KB_CODE.format(factor=pid) for pid, _ in problems], "level": [level] * len(problems),
            "name": [f"{pid}_{name}" for pid, name in problems], "problem_id": [pid for pid, _ in problems]}


def test_kernelbench_hugging_face_folder(tmp_path):
    datasets = pytest.importorskip("datasets")
    splits = datasets.DatasetDict({f"level_{lv}": datasets.Dataset.from_dict(_rows(lv)) for lv in KB_PROBLEMS})
    splits.save_to_disk(str(tmp_path / "kb"))
    tasks = load_kernelbench(tmp_path / "kb", level=1, problem_ids=[1])
    assert [(t.id, t.name, t.task_path) for t in tasks] == [("KB-L1-1", "1_Square_matrix_multiplication_", None)]
    path = tasks[0].task_file(tmp_path)
    assert path.read_text() == KB_CODE.format(factor=1)
    assert [t.id for t in load_kernelbench(f"hf:{tmp_path / 'kb'}")] == ["KB-L1-1", "KB-L1-19", "KB-L2-3"]
    datasets.Dataset.from_dict(_rows(2)).save_to_disk(str(tmp_path / "flat"))
    assert [t.id for t in load_kernelbench(tmp_path / "flat", level=2)] == ["KB-L2-3"]


def test_kernelbench_hub_failure_says_what_to_do(monkeypatch):
    datasets = pytest.importorskip("datasets")

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(ValueError, match="save_to_disk"):
        load_kernelbench("ScalingIntelligence/KernelBench", level=1)


# ---------------------------------------------------------------- the harness on the suite (slow)


HARNESS_TEST = "test_harness_judges_reference_and_bugs"


@pytest.fixture(scope="module")
def harness_rows(request, tmp_path_factory) -> dict[str, list[dict]]:
    """verify_task for every task this session selected, two tasks at a time (each check is a
    sandboxed process that mostly waits on g++), so the whole suite takes half the wall time."""
    selected = [item.callspec.params["task_id"] for item in request.session.items if getattr(item, "originalname", "") == HARNESS_TEST]
    folder = tmp_path_factory.mktemp("suite")
    by_id = {t.id: t for t in TASKS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = pool.map(lambda tid: verify_task(by_id[tid], folder / tid), selected)
        return dict(zip(selected, rows))


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_harness_judges_reference_and_bugs(task_id, harness_rows):
    """cpu backend: the reference is `correct`; each planted bug fails with its recorded status."""
    rows = harness_rows[task_id]
    assert [r["solution"] for r in rows] == ["reference"] + [w.name for w in next(t for t in TASKS if t.id == task_id).wrong]
    wrong = [f"{r['solution']} ({r['bug']}): want {r['expect']}, got {r['status']}: {r['message'][:300]}" for r in rows if not r["ok"]]
    assert not wrong, "\n".join(wrong)


def test_cli_verifies_named_tasks_in_the_order_given(monkeypatch, tmp_path):
    """A device run names its most wanted tasks first, so that a cut keeps them."""
    seen = []

    def fake(task, folder, backend, trials, timeout, sanitizer=True):
        seen.append(task.id)
        return [_row(task.id, backend, "reference", "correct")]

    monkeypatch.setattr(verify_module, "verify_task", fake)
    rows_path = tmp_path / "rows.jsonl"
    assert suite_main(["--verify", "--task", "L1-relu6", "--task", "L1-absdiff", "--json", str(rows_path)]) == 0
    assert seen == ["L1-relu6", "L1-absdiff"]
    assert [r["task"] for r in read_rows(rows_path)] == ["L1-relu6", "L1-absdiff"]
