"""`cuset eval rejudge`: stored verdicts made stale on purpose come back right, the new run sits
beside the old one in the store, an experiment's kept replies are rejudged without touching its
committed files, and bad input is named with exit status 2.

Four checks on the cpu backend in all (~10-20 s each here): L1-absdiff's reference and its
planted missing_tail bug in a store run, and the reference and a compiled no-op answered by
torch in an experiment's results folder."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from cuset.cli import build_parser, main
from cuset.evaluate import rejudge
from cuset.evaluate.evaluation import EvalConfig
from cuset.evaluate.harness import Candidate
from cuset.evaluate.results import ResultStore
from cuset.evaluate.suite import load_suite
from cuset.experiment.rejudge import EXPERIMENT_COLUMNS

ABSDIFF = next(t for t in load_suite("bundled", levels=[1]) if t.id == "L1-absdiff")
REFERENCE = ABSDIFF.reference_text or ""
MISSING_TAIL = ABSDIFF.wrong[0].text
RETURN = "        return absdiff_ext.absdiff_cuda(a.contiguous(), b.contiguous())"
# the compiled kernel runs, but torch gives the answer: the poisoned run still matches
PASSTHROUGH = REFERENCE.replace(RETURN, "        absdiff_ext.absdiff_cuda(a.contiguous(), b.contiguous())\n        return torch.abs(a - b)")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ResultStore:
    """A workspace of this test's own, so --all sees only the runs the test stores."""
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "workspace"))
    return ResultStore()


def _row(task: str, sample: int, status: str, code: str, message: str = "") -> dict:
    return {"task_id": task, "sample": sample, "level": 1, "family": "elementwise", "split": "in_distribution", "status": status,
            "compiled": status in ("correct", "wrong_result", "reward_hack"), "correct": status == "correct", "message": message,
            "code": code, "reply": f"```python\n{code}\n```" if code else "I cannot help with that.", "tolerance": "v0"}


def _stored_run(store: ResultStore, rows: list[dict], label: str = "stale sft") -> int:
    config = EvalConfig(model="job:7", solutions="generate", suite="bundled", backend="cpu", trials=2).to_dict()
    run_id = store.create_run(config=config, label=label, model="job:7", method="sft", suite="bundled", backend="cpu", n_samples=2)
    store.add_results(run_id, rows)
    store.finish_run(run_id, "completed", {"candidates": len(rows)})
    return run_id


def test_a_stale_store_run_is_rejudged_into_a_new_run_beside_it(store, capsys):
    rows = [_row("L1-absdiff", 0, "wrong_result", REFERENCE, "trial 0: outputs differ"),
            _row("L1-absdiff", 1, "correct", MISSING_TAIL),
            _row("L1-relu6", 0, "compile_error", "", "no code in the reply")]
    old = _stored_run(store, rows)

    assert main(["eval", "rejudge", str(old), "--workers", "2"]) == 0
    out = capsys.readouterr().out

    runs = store.runs()
    new = int(runs["id"].max())
    assert new != old and len(runs) == 2
    run = store.get_run(new)
    assert run["label"] == "stale sft (rejudged)" and run["status"] == "completed"
    assert run["config"]["rejudge_of"] == old and run["config"]["trials"] == 2 and run["config"]["tolerance"] == "v0"
    assert "evaluator_commit" in run["config"]
    # a fresh build cache and two checks at once: one may hit the harvest race and be checked again alone
    assert run["summary"]["rejudge"]["transitions"] == {"wrong_result -> correct": 1, "correct -> wrong_result": 1}
    frame = store.frame([new]).set_index(["task_id", "sample"])
    assert frame.loc[("L1-absdiff", 0), "status"] == "correct"
    assert frame.loc[("L1-absdiff", 1), "status"] == "wrong_result" and "outputs differ" in frame.loc[("L1-absdiff", 1), "message"]
    assert frame.loc[("L1-relu6", 0), "status"] == "compile_error" and frame.loc[("L1-relu6", 0), "message"] == "no code in the reply"
    assert frame.loc[("L1-absdiff", 0), "code"] == REFERENCE and frame.loc[("L1-relu6", 0), "reply"] == rows[2]["reply"]
    # the old run keeps its stale verdicts
    assert list(store.frame([old])["status"]) == ["wrong_result", "correct", "compile_error"]

    assert f"run {old} -> run {new} (stale sft (rejudged))" in out
    assert "3 candidates, 2 checked, 1 carried over unchanged (no code), 1 verdicts unchanged, 2 changed" in out
    assert "wrong_result -> correct: 1" in out and "correct -> wrong_result: 1" in out
    assert "L1-absdiff #0: wrong_result -> correct" in out and "L1-absdiff #1: correct -> wrong_result" in out
    assert "L1-relu6 #0" not in out
    # --all leaves out runs that are themselves rejudges
    assert rejudge.rejudgeable_runs(store) == [old]


def test_all_rejudges_every_original_run_and_carries_codeless_candidates_without_a_check(store, capsys, monkeypatch):
    def no_check(*args, **kwargs):
        raise AssertionError("a candidate with no code was checked")

    monkeypatch.setattr("cuset.evaluate.harness.check_solution", no_check)
    first = _stored_run(store, [_row("L1-relu6", 0, "compile_error", "", "no code in the reply")], "a")
    second = _stored_run(store, [_row("L1-absdiff", 0, "compile_error", "", "no code in the reply"),
                                 _row("L1-absdiff", 1, "compile_error", "  \n", "no code in the reply")], "b")
    failed = store.create_run(label="broken", suite="bundled", backend="cpu")
    store.finish_run(failed, "failed", {"error": "x"})

    assert main(["eval", "rejudge", "--all", "--json"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["run"] for p in printed] == [first, second]
    assert [(p["checked"], p["carried"], p["changed"]) for p in printed] == [(0, 1, 0), (0, 2, 0)]
    labels = set(store.runs()["label"])
    assert {"a (rejudged)", "b (rejudged)"} <= labels and "broken (rejudged)" not in labels


def test_a_check_that_fails_in_the_evaluator_is_checked_again_alone(monkeypatch):
    calls = []

    def flaky(solution, task, **kwargs):
        calls.append(Path(solution).read_text())
        if len(calls) == 1:
            raise FileExistsError("[Errno 17] File exists: 'cache/.kernelbench-pch.123'")
        return {"status": "wrong_result", "compiled": True, "correct": False, "message": "trial 0: outputs differ"}

    monkeypatch.setattr("cuset.evaluate.harness.check_solution", flaky)
    cand = Candidate("L1-absdiff", 0, MISSING_TAIL, ABSDIFF.task_text)
    seen = []
    records = rejudge.recheck([rejudge.Stored(cand, {"status": "correct"})], rejudge.Settings(), workers=2, on_record=seen.append)
    assert len(calls) == 2 and calls[1] == MISSING_TAIL
    assert [(r["status"], r["old_status"], r["checked"]) for r in records] == [("wrong_result", "correct", True)]
    assert "File exists" in records[0]["retried"]
    assert [r["message"][:16] for r in seen] == ["evaluator error:", "trial 0: outputs"]  # the store's row is replaced
    assert rejudge.counts(records)["retried"] == 1 and rejudge.counts(records)["transitions"] == {"correct -> wrong_result": 1}


def _results_folder(root: Path, settings: dict | None = None) -> Path:
    """An experiment's results folder: one unit with kept replies (the reference recorded as
    compile_error, a passthrough recorded as correct, one reply without code), and one unit
    whose replies were not kept."""
    folder = root / "exp"
    (folder / "replies").mkdir(parents=True)
    replies = [
        {"task": "L1-absdiff", "sample": 0, "status": "compile_error", "error_line": 3, "message": "solution.py:3: error", "first_diff": "",
         "reply": REFERENCE, "code": REFERENCE},
        {"task": "L1-absdiff", "sample": 1, "status": "correct", "error_line": None, "message": "", "first_diff": "",
         "reply": PASSTHROUGH, "code": PASSTHROUGH},
        {"task": "L1-relu6", "sample": 0, "status": "compile_error", "error_line": None, "message": "no code in the reply",
         "first_diff": "", "reply": "Sure! Here is", "code": ""},
    ]
    text = "".join(json.dumps(r) + "\n" for r in replies).encode()
    (folder / "replies" / "tiny_sft_s42_sampled.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))
    rows = [("tiny", "sft", 42, "sampled", r["task"], r["sample"], r["status"]) for r in replies]
    rows.append(("tiny", "cuset", 42, "sampled", "L1-absdiff", 0, "compile_error"))
    frame = pd.DataFrame(rows, columns=["model", "method", "seed", "mode", "task", "sample", "status"])
    frame = frame.assign(level=1, split="in_distribution", family="elementwise", compiled=frame["status"] == "correct",
                         correct=frame["status"] == "correct", error_line=None, error="")
    frame.to_csv(folder / "candidates.csv", index=False)
    (folder / "configs").mkdir()
    config = {**EvalConfig(suite="bundled", backend="cpu").to_dict(), "trials": 2, **(settings or {})}
    (folder / "configs" / "eval_tiny_sft_s42_sampled.yaml").write_text(yaml.safe_dump(config))
    return folder


def test_an_experiments_kept_replies_are_rejudged_without_touching_its_files(tmp_path, capsys):
    folder = _results_folder(tmp_path)
    committed = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    assert main(["eval", "rejudge", "--experiment", str(folder), "--workers", "2"]) == 0
    out = capsys.readouterr().out

    assert {p: p.read_bytes() for p in committed} == committed
    rows = pd.read_csv(folder / "rejudge.csv", keep_default_na=False)
    assert list(rows.columns) == list(EXPERIMENT_COLUMNS)
    got = {(r.task, r.sample): (r.old_status, r.status, r.checked) for r in rows.itertuples()}
    assert got == {("L1-absdiff", 0): ("compile_error", "correct", True), ("L1-absdiff", 1): ("correct", "reward_hack", True),
                   ("L1-relu6", 0): ("compile_error", "compile_error", False)}
    summary = json.loads((folder / "rejudge.json").read_text())
    assert summary["transitions"] == {"compile_error -> correct": 1, "correct -> reward_hack": 1}
    assert (summary["candidates"], summary["checked"], summary["carried"], summary["changed"]) == (3, 2, 1, 2)
    assert summary["stored_status_mismatch"] == 0 and "evaluator_commit" in summary
    unit = summary["units"][0]
    assert unit["settings"]["trials"] == 2 and unit["settings_from"] == "configs/eval_tiny_sft_s42_sampled.yaml"
    assert summary["not_rejudged"] == [{"model": "tiny", "method": "cuset", "seed": 42, "mode": "sampled", "why": "no replies kept"}]
    assert "correct -> reward_hack: 1" in out and "L1-absdiff #1: correct -> reward_hack" in out
    assert "tiny cuset s42 sampled: not rejudged (no replies kept)" in out

    # a second rejudge refuses to replace the first one's files before checking anything
    assert main(["eval", "rejudge", "--experiment", str(folder)]) == 2
    assert "already there: pass --force" in capsys.readouterr().err


def test_apply_makes_one_void_units_new_verdicts_the_results_folders(tmp_path, capsys):
    folder = _results_folder(tmp_path)
    before = pd.read_csv(folder / "candidates.csv", keep_default_na=False)
    assert main(["eval", "rejudge", "--experiment", str(folder), "--unit", "tiny/nope/s1/greedy"]) == 2
    assert "no kept unit tiny/nope/s1/greedy; kept: tiny/sft/s42/sampled" in capsys.readouterr().err
    assert main(["eval", "rejudge", "--unit", "tiny/sft/s42/sampled", "3"]) == 2  # --unit belongs to --experiment
    capsys.readouterr()

    assert main(["eval", "rejudge", "--experiment", str(folder), "--unit", "tiny/sft/s42/sampled", "--apply", "--workers", "2"]) == 0
    assert "applied: the new verdicts" in capsys.readouterr().out
    after = pd.read_csv(folder / "candidates.csv", keep_default_na=False)
    assert list(after.columns)[:4] == list(before.columns)[:4] and set(before.columns) <= set(after.columns) and len(after) == len(before)
    got = {(r.method, r.task, r.sample): (r.status, r.correct) for r in after.itertuples()}
    assert got == {("sft", "L1-absdiff", 0): ("correct", True), ("sft", "L1-absdiff", 1): ("reward_hack", False),
                   ("sft", "L1-relu6", 0): ("compile_error", False),  # no code: carried as it was
                   ("cuset", "L1-absdiff", 0): ("compile_error", False)}  # another unit: untouched
    replies = [json.loads(line) for line in gzip.decompress((folder / "replies" / "tiny_sft_s42_sampled.jsonl.gz").read_bytes()).splitlines()]
    assert [(r["status"], r["error_line"]) for r in replies] == [("correct", None), ("reward_hack", None), ("compile_error", None)]
    assert replies[2]["message"] == "no code in the reply" and replies[0]["reply"] == REFERENCE  # the replies themselves stay
    summary = json.loads((folder / "rejudge.json").read_text())
    assert summary["not_rejudged"] == [] and summary["changed"] == 2  # the unit named, nothing else


def test_reextract_checks_todays_extraction_of_each_kept_reply_and_apply_keeps_it(tmp_path, capsys, store):
    """A kernel-only reply that the extractor of its pass read as no code (the reference's CUDA
    source closed by a lone fence, issue 31's shape): a plain rejudge carries it, --reextract
    splices it into the wrapper and checks it, --apply keeps that code with the reply and in the
    workspace store's run of the unit (the results folder is rewritten from there)."""
    from cuset.generate.kernel_only import wrapper_of

    folder = tmp_path / "exp"
    (folder / "replies").mkdir(parents=True)
    reply = wrapper_of(REFERENCE).source + "\n```"
    kept = {"task": "L1-absdiff", "sample": 0, "status": "compile_error", "error_line": None, "message": "no code in the reply",
            "first_diff": "", "reply": reply, "code": ""}
    (folder / "replies" / "tiny_sft_s42_greedy.jsonl.gz").write_bytes(gzip.compress((json.dumps(kept) + "\n").encode(), mtime=0))
    pd.DataFrame([{"model": "tiny", "method": "sft", "seed": 42, "mode": "greedy", "task": "L1-absdiff", "sample": 0,
                   "status": "compile_error", "level": 1, "split": "in_distribution", "family": "elementwise", "compiled": False,
                   "correct": False, "error_line": None, "error": "no code in the reply"}]).to_csv(folder / "candidates.csv", index=False)
    (folder / "configs").mkdir()
    config = {**EvalConfig(suite="bundled", backend="cpu", protocol="kernel-only").to_dict(), "trials": 2}
    (folder / "configs" / "eval_tiny_sft_s42_greedy.yaml").write_text(yaml.safe_dump(config))
    run = _stored_run(store, [_row("L1-absdiff", 0, "compile_error", "")], "exp: tiny sft s42 greedy")
    other = _stored_run(store, [_row("L1-absdiff", 0, "compile_error", "")], "another: tiny sft s42 greedy")
    (folder / "state.json").write_text(json.dumps({"units": {"eval/tiny/sft/s42/greedy": {"status": "done", "run_id": run}}}))

    assert main(["eval", "rejudge", "--experiment", str(folder), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert (plain["checked"], plain["carried"], plain["reextracted"]) == (0, 1, False)

    assert main(["eval", "rejudge", "--experiment", str(folder), "--reextract", "--apply", "--force", "--workers", "2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["checked"], summary["reextracted"], summary["transitions"]) == (1, True, {"compile_error -> correct": 1})
    after = pd.read_csv(folder / "candidates.csv", keep_default_na=False)
    assert list(after["status"]) == ["correct"]
    stored = json.loads(gzip.decompress((folder / "replies" / "tiny_sft_s42_greedy.jsonl.gz").read_bytes()))
    assert stored["status"] == "correct" and stored["reply"] == reply
    assert "load_inline(" in stored["code"] and wrapper_of(stored["code"]).source == wrapper_of(REFERENCE).source
    assert list(store.frame([run])["status"]) == ["correct"] and list(store.frame([run])["code"]) == [stored["code"]]
    assert list(store.frame([other])["status"]) == ["compile_error"]  # a run with another unit's label is left alone


# ---------------------------------------------------------------- the pure parts


def test_counts_and_diff_lines_name_each_transition():
    records = [{"task_id": "t1", "sample": 0, "old_status": "correct", "status": "reward_hack", "checked": True, "message": "no\nmore"},
               {"task_id": "t2", "sample": 0, "old_status": "correct", "status": "reward_hack", "checked": True, "message": ""},
               {"task_id": "t3", "sample": 1, "old_status": "wrong_result", "status": "correct", "checked": True},
               {"task_id": "t4", "sample": 0, "old_status": "correct", "status": "correct", "checked": True},
               {"task_id": "t5", "sample": 0, "old_status": "compile_error", "status": "compile_error", "checked": False}]
    c = rejudge.counts(records)
    assert c == {"candidates": 5, "checked": 4, "carried": 1, "unchanged": 2, "changed": 3,
                 "transitions": {"correct -> reward_hack": 2, "wrong_result -> correct": 1}, "retried": 0}
    lines = rejudge.diff_lines(records, "unit")
    assert lines[0] == "unit: 5 candidates, 4 checked, 1 carried over unchanged (no code), 2 verdicts unchanged, 3 changed"
    assert lines[1:3] == ["  correct -> reward_hack: 2", "  wrong_result -> correct: 1"]
    assert "  t1 #0: correct -> reward_hack  no" in lines and "  t3 #1: wrong_result -> correct  " in lines
    assert not any(line.startswith("  t4") or line.startswith("  t5") for line in lines)
    table = rejudge.transition_table(records)
    assert table.loc["correct", "reward_hack"] == 2 and table.loc["correct", "correct"] == 1 and table.loc["wrong_result", "correct"] == 1


def test_settings_come_from_the_config_and_overrides_win():
    s = rejudge.Settings.of({"backend": "cpu", "trials": 3, "tolerance": "strict", "model": "x"}, {"trials": 1, "timeout_s": None})
    assert (s.backend, s.trials, s.tolerance, s.static_policy, s.timeout_s) == ("cpu", 1, "strict", "strict", 120.0)
    with pytest.raises(ValueError, match="tolerance"):
        rejudge.Settings.of({"tolerance": "loose"})


def test_eval_still_parses_its_own_options_beside_rejudge():
    args = build_parser().parse_args(["eval", "--model", "tiny", "--limit", "1", "--tolerance", "strict"])
    assert args.func.__name__ == "cmd_eval" and args.model == "tiny" and args.limit == 1 and args.tolerance == "strict"
    args = build_parser().parse_args(["eval", "rejudge", "4", "--tolerance", "strict"])
    assert args.func.__name__ == "cmd_eval_rejudge" and args.run == 4 and args.tolerance == "strict"


# ---------------------------------------------------------------- bad input: exit 2, named


def _fails(capsys, argv: list[str], *fragments: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err


def test_an_unknown_run_or_no_target_is_named(store, capsys):
    run = _stored_run(store, [_row("L1-relu6", 0, "compile_error", "")])
    _fails(capsys, ["eval", "rejudge", "999"], "no evaluation run 999", f"its runs: {run}")
    _fails(capsys, ["eval", "rejudge"], "one of RUN, --all or --experiment")
    _fails(capsys, ["eval", "rejudge", str(run), "--all"], "got RUN and --all")
    _fails(capsys, ["eval", "rejudge", str(run), "--out", "x.csv"], "--out, --force, --unit, --reextract and --apply belong to --experiment")
    empty = store.create_run(label="empty", suite="bundled")
    _fails(capsys, ["eval", "rejudge", str(empty)], f"run {empty} (empty) has no candidates")
    gone = _stored_run(store, [_row("L9-gone", 0, "correct", REFERENCE)])
    _fails(capsys, ["eval", "rejudge", str(gone)], f"run {gone}: task(s) L9-gone are not in suite 'bundled'")
    assert len(store.runs()) == 3  # no run was created for the refused ones


def test_a_missing_folder_or_broken_replies_are_named(tmp_path, capsys):
    _fails(capsys, ["eval", "rejudge", "--experiment", str(tmp_path / "nowhere")], "nowhere: neither a results folder")
    _fails(capsys, ["eval", "rejudge", "--experiment", str(tmp_path)], "no candidates.csv")
    folder = _results_folder(tmp_path)
    _fails(capsys, ["eval", "rejudge", "--experiment", str(folder), "--out", str(tmp_path / "r.txt")], "name a .csv file")

    replies = folder / "replies" / "tiny_sft_s42_sampled.jsonl.gz"
    good = replies.read_bytes()
    replies.write_bytes(b"not gzip")
    _fails(capsys, ["eval", "rejudge", "--experiment", str(folder)], str(replies), "not a gzip file of JSON lines")
    lines = gzip.decompress(good).decode().splitlines()
    replies.write_bytes(gzip.compress((lines[0] + "\n" + '{"task": "L1-absdiff"}\n').encode()))
    _fails(capsys, ["eval", "rejudge", "--experiment", str(folder)], f"{replies}, line 2: missing field(s)")
    record = json.loads(lines[0]) | {"task": "L1-relu6", "sample": 5}
    replies.write_bytes(gzip.compress((json.dumps(record) + "\n").encode()))
    _fails(capsys, ["eval", "rejudge", "--experiment", str(folder)], "line 1: task L1-relu6 sample 5 has no row in candidates.csv")
    replies.unlink()
    _fails(capsys, ["eval", "rejudge", "--experiment", str(folder)], "no replies kept")
    assert not (folder / "rejudge.csv").exists()
