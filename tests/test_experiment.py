"""Experiments: the YAML, the plan, the statistics against hand computations, the results
written from a hand-built result store, and a tiny experiment end to end through the jobs."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import binomtest

from cuset.experiment import ExperimentConfig, list_experiments, load_experiment, plan, read_results, sign_test
from cuset.experiment.results import (
    CANDIDATE_COLUMNS,
    RunInfo,
    bootstrap_interval,
    candidate_rows,
    markdown_table,
    paired_table,
    read_table,
    summary_table,
    write_results,
)
from cuset.experiment.runner import State, UnitState, collect

TINY = {
    "name": "tiny-test", "models": ["tiny"], "methods": ["sft", "cuset"], "seeds": [42], "preset": "tiny",
    "train": {"max_steps": 2, "max_samples": 4, "save_steps": 2},
    "evaluation": {"limit": 1, "levels": [1], "greedy": True, "n_samples": 0, "max_new_tokens": 8, "options": {"trials": 1, "timeout_s": 60}},
}


# --- the YAML -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list_experiments())
def test_every_shipped_experiment_loads_and_plans(name):
    config = load_experiment(name)
    assert config.name == name and config.description
    units = plan(config)
    trained = [m for m in config.methods if m != "base"]
    assert sum(u.kind == "train" for u in units) == len(config.models) * sum(len(config.seeds_of(m)) for m in trained)
    assert "sft" in config.methods or config.methods == ["base"]  # the paired comparisons' reference (a base-only reference row compares nothing)
    assert set(config.estimate) == {"train_min", "greedy_min", "sampled_min"}  # the stated time of every stage


@pytest.mark.parametrize("name", list_experiments())
def test_committed_fine_tune_configs_are_what_the_experiment_resolves_to_now(name):
    # A change of TrainConfig's defaults or of a preset must not move a shipped experiment's recipe
    # between its fine-tunes: the cpu preset's new epochs/warm-up once leaked into cpu-coder, whose
    # sft had run with warm-up 0 while its cuset and dft would have got 5%.
    from cuset.experiment.runner import State, config_differences, unit_config

    config = load_experiment(name)
    folder = Path(__file__).resolve().parents[1] / "analysis" / "results" / name
    state = State.load(folder / "state.json")
    checked = 0
    units = plan(config)
    for unit in units:
        saved = folder / "configs" / (unit.key.replace("/", "_") + ".yaml")
        if unit.kind == "train" and saved.is_file():
            differ = config_differences(saved, unit_config(config, unit, state))
            if config.train.get("bf16") is None:  # decided per machine (bf16_supported): not the recipe's
                differ = [d for d in differ if not d.startswith("bf16:")]
            assert differ == [], saved.name
            checked += 1
    assert checked or not (folder / "configs").is_dir() or not any(u.kind == "train" for u in units)  # base only: nothing trained


def test_shipped_experiments_are_the_issues_two():
    assert {"cpu-135m", "cpu-coder"} <= set(list_experiments())
    assert load_experiment("cpu-135m").methods == ["sft", "cuset", "dft", "profit"]
    coder = load_experiment("cpu-coder")
    assert (coder.models, coder.methods, coder.preset) == (["coder-0.5b"], ["base", "sft", "cuset", "dft"], "cpu-coder")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"methods": ["sft", "rlhf"]}, r"unknown method\(s\) \['rlhf'\]; valid: base, sft, dft"),
        ({"colour": "red"}, r"unknown field\(s\) \['colour'\]; valid: "),
        ({"train": {"lr": -1.0}}, "lr=-1.0"),
        ({"train": {"lora_rank": 8}}, r"unknown field\(s\) \['lora_rank'\]"),
        ({"train": {"seed": 1}}, "the experiment sets those"),
        ({"preset": "laptop"}, "valid: tiny, cpu, cpu-coder, gpu"),
        ({"evaluation": {"n_samples": 2, "temperature": 0.0}}, "needs temperature > 0"),
        ({"evaluation": {"options": {"trails": 5}}}, r"unknown field\(s\) \['trails'\]"),
        ({"evaluation": {"greedy": False}}, "train sets no holdout, so nothing is measured"),
        ({"evaluation": {"greedy": False}, "methods": ["base", "sft"], "train": {"holdout": 2}}, "`base` has no fine-tune to validate"),
        ({"estimate": {"eval_min": 3}}, "valid: train_min, greedy_min, sampled_min"),
    ],
)
def test_bad_experiments_say_what_is_valid(tmp_path, change, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**TINY, **change}))
    with pytest.raises(ValueError, match=message):
        load_experiment(str(path))


def test_unknown_experiment_lists_the_shipped_ones():
    with pytest.raises(ValueError, match="shipped: .*cpu-135m"):
        load_experiment("nope")


def test_plan_evaluates_base_greedy_once_and_after_each_fine_tune():
    config = ExperimentConfig.from_dict({**TINY, "methods": ["base", "sft"], "seeds": [1, 2],
                                         "evaluation": {"greedy": True, "n_samples": 2, "temperature": 0.8}})
    keys = [u.key for u in plan(config)]
    assert keys == [
        "train/tiny/sft/s1", "train/tiny/sft/s2",
        "eval/tiny/base/s1/greedy", "eval/tiny/base/s1/sampled", "eval/tiny/base/s2/sampled",
        "eval/tiny/sft/s1/greedy", "eval/tiny/sft/s1/sampled", "eval/tiny/sft/s2/greedy", "eval/tiny/sft/s2/sampled",
    ]
    assert {u.needs for u in plan(config) if u.method == "sft" and u.kind == "eval"} == {"train/tiny/sft/s1", "train/tiny/sft/s2"}


# --- statistics ---------------------------------------------------------------------------------


def test_sign_test_is_the_exact_binomial_tail():
    # 8 wins, 1 loss: 2 * (C(9,0) + C(9,1)) / 2^9 = 20 / 512
    assert sign_test(8, 1) == pytest.approx(20 / 512)
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    for wins, losses in [(5, 0), (7, 2), (12, 30), (1, 1)]:
        assert sign_test(wins, losses) == pytest.approx(binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_tasks():
    rng = np.random.default_rng(1)
    few, many = rng.normal(0.2, 1, 10), rng.normal(0.2, 1, 1000)
    for values in (few, many):
        low, high = bootstrap_interval(values)
        assert low < values.mean() < high
    assert np.ptp(bootstrap_interval(many)) < np.ptp(bootstrap_interval(few)) / 5
    # a constant has a zero-width interval
    assert bootstrap_interval(np.full(7, 0.5)) == (0.5, 0.5)


def rows(method: str, mode: str, outcomes: dict[str, list[bool]], seed: int = 42, level: int = 1, split: str = "in_distribution") -> list[dict]:
    return [{"model": "m", "method": method, "seed": seed, "mode": mode, "task": task, "level": level if task < "t5" else 2,
             "split": split if task < "t3" else "held_out", "family": "f", "sample": i, "status": "correct" if ok else "wrong_result",
             "compiled": ok or i == 0, "correct": ok, "error_line": None, "error": "" if ok else "mismatch"}
            for task, results in outcomes.items() for i, ok in enumerate(results)]


def test_summary_pass_at_k_and_intervals_by_hand():
    # 4 tasks x 2 samples: c = 2, 1, 0, 1 -> pass@1 = mean(1, .5, 0, .5) = .5; pass@2 = mean(1, 1, 0, 1) = .75
    frame = pd.DataFrame(rows("sft", "sampled", {"t1": [True, True], "t2": [True, False], "t3": [False, False], "t4": [False, True]}))
    summary = summary_table(frame, ks=(1, 2, 5))
    overall = summary[summary["by"] == "all"].iloc[0]
    assert (overall["tasks"], overall["candidates"], overall["pass@1"], overall["pass@2"]) == (4, 8, 0.5, 0.75)
    assert "pass@5" not in summary.columns  # k > n is left out
    # compile: every first sample compiles, and the correct second ones: 4 + 2 = 6 of 8
    assert overall["compile_rate"] == 6 / 8
    from cuset.evaluate.metrics import wilson_interval

    assert (overall["compile_low"], overall["compile_high"]) == pytest.approx(wilson_interval(6, 8))
    assert overall["pass@1_low"] < 0.5 < overall["pass@1_high"]  # bootstrap over tasks
    by_split = summary[summary["by"] == "split"].set_index("group")
    assert by_split.loc["in_distribution", "pass@1"] == 0.75 and by_split.loc["held_out", "pass@1"] == 0.25
    greedy = summary_table(pd.DataFrame(rows("sft", "greedy", {"t1": [True], "t2": [False], "t3": [True]})))
    g = greedy[greedy["by"] == "all"].iloc[0]
    assert (g["pass@1_low"], g["pass@1_high"]) == pytest.approx(wilson_interval(2, 3))  # one candidate per task: Wilson


def test_no_task_solved_in_n_samples_has_a_wilson_bound_not_a_zero_width_bootstrap():
    frame = pd.DataFrame(rows("sft", "sampled", {f"t{i}": [False, False] for i in range(1, 6)}))
    overall = summary_table(frame).query("by == 'all'").iloc[0]
    from cuset.evaluate.metrics import wilson_interval

    assert overall["pass@1"] == 0.0
    assert (overall["pass@1_low"], overall["pass@1_high"]) == pytest.approx(wilson_interval(0, 5))  # 0 of 5 tasks: up to 43%
    assert overall["pass@1_high"] > 0.4


def test_paired_differences_by_task():
    sft = {"t1": [True], "t2": [False], "t3": [False], "t4": [True], "t5": [False]}
    cuset = {"t1": [True], "t2": [True], "t3": [True], "t4": [False], "t5": [False]}
    # two seeds of dft: per-task rates averaged over seeds first: t1 (1+0)/2, t2 (1+1)/2, others 0
    dft_a = {"t1": [True], "t2": [True], "t3": [False], "t4": [False], "t5": [False]}
    dft_b = {"t1": [False], "t2": [True], "t3": [False], "t4": [False], "t5": [False]}
    frame = pd.DataFrame(rows("sft", "greedy", sft) + rows("cuset", "greedy", cuset) + rows("dft", "greedy", dft_a, seed=1)
                         + rows("dft", "greedy", dft_b, seed=2))
    paired = paired_table(frame).set_index("method")
    c = paired.loc["cuset"]
    assert (c["tasks"], c["wins"], c["losses"], c["ties"]) == (5, 2, 1, 2)
    assert c["diff"] == pytest.approx((0 + 1 + 1 - 1 + 0) / 5) and c["mean_method"] == 0.6 and c["mean_reference"] == 0.4
    assert c["sign_p"] == pytest.approx(1.0) and c["spans_zero"]
    d = paired.loc["dft"]
    assert d["diff"] == pytest.approx((-0.5 + 1 + 0 - 1 + 0) / 5)
    assert (d["wins"], d["losses"], d["ties"]) == (1, 2, 2)
    assert d["diff_low"] <= d["diff"] <= d["diff_high"]
    assert "sft" not in paired.index
    text = markdown_table(summary_table(frame), paired_table(frame))
    assert "| m | greedy | correct | cuset | 5 | +20.0 (" in text and "(spans 0)" in text


def test_compile_rates_are_paired_too_where_nothing_is_correct(tmp_path):
    from cuset.experiment.results import paired_of

    def wrong(method, compiled):  # no candidate correct; which of them build differs
        return [{**r, "compiled": c, "status": "wrong_result" if c else "compile_error"}
                for r, c in zip(rows(method, "greedy", {t: [False] for t in compiled}), compiled.values())]

    frame = pd.DataFrame(wrong("sft", {"t1": True, "t2": False, "t3": False, "t4": False})
                         + wrong("cuset", {"t1": True, "t2": True, "t3": True, "t4": False}))
    built = paired_table(frame, metric="compiled").iloc[0]
    assert (built["metric"], built["method"], built["wins"], built["losses"], built["ties"]) == ("compiled", "cuset", 2, 0, 2)
    assert built["diff"] == pytest.approx(0.5) and built["sign_p"] == pytest.approx(0.5)  # 2 wins, 0 losses: 2 x 0.5^2
    solved = paired_table(frame).iloc[0]
    assert (solved["metric"], solved["diff"], solved["ties"]) == ("correct", 0.0, 4)
    # every task tied: not a zero-width interval but +-(Wilson's upper bound for 0 of 4 differing tasks)
    from cuset.evaluate.metrics import wilson_interval

    bound = wilson_interval(0, 4)[1]
    assert (solved["diff_low"], solved["diff_high"]) == pytest.approx((-bound, bound)) and solved["spans_zero"]
    with pytest.raises(ValueError, match="one of"):
        paired_table(frame, metric="runs")
    write_results(tmp_path, frame.assign(seed=42))
    _, _, paired = read_results(tmp_path)
    assert list(paired["metric"]) == ["correct", "compiled"]
    assert "| m | greedy | compiled | cuset | 4 | +50.0 (" in (tmp_path / "table.md").read_text()
    # a paired.csv from before compile rates were paired: correctness only
    old = paired.drop(columns="metric").iloc[:1]
    assert list(paired_of(old)["metric"]) == ["correct"] and paired_of(old, "compiled").empty


def test_results_from_a_hand_built_result_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset.evaluate.results import ResultStore

    store = ResultStore()
    config = ExperimentConfig.from_dict(TINY)
    units = {u.key: u for u in plan(config)}
    state = State(tmp_path / "out" / "state.json")
    for method, outcome in (("sft", [True, False]), ("cuset", [True, True])):
        run = store.create_run(label=method, model="job:1", method=method, suite="bundled", backend="cpu", n_samples=1)
        store.add_results(run, [{"task_id": f"L1_{i}", "sample": 0, "level": 1, "family": "elementwise", "split": "in_distribution",
                                 "status": "correct" if ok else "compile_error", "compiled": ok, "correct": ok,
                                 "message": "" if ok else "error: expected ';'\nmore", "error_line": None if ok else 12}
                                for i, ok in enumerate(outcome)])
        store.finish_run(run, "completed", {})
        generation = {"engine": "ctranslate2"} if method == "cuset" else {}  # sft's run recorded no engine
        state.units[f"eval/tiny/{method}/s42/greedy"] = UnitState(status="done", job=run, run_id=run, generation=generation)
    candidates = collect(list(units.values()), state)
    assert list(candidates.columns) == ["model", "method", "seed", "mode", "engine", "task", "level", "split", "family", "sample",
                                        "status", "compiled", "correct", "error_line", "error"]
    assert list(candidates["engine"]) == ["transformers", "transformers", "ctranslate2", "ctranslate2"]
    assert len(candidates) == 4 and list(candidates["method"]) == ["sft", "sft", "cuset", "cuset"]
    failed = candidates[~candidates["correct"]].iloc[0]
    assert (failed["error"], failed["error_line"], failed["status"]) == ("error: expected ';'", 12, "compile_error")
    out = tmp_path / "out"
    write_results(out, candidates, {"experiment": "tiny-test"})
    back, summary, paired = read_results(out)
    assert len(back) == 4 and set(summary["method"]) == {"sft", "cuset"}
    assert paired.iloc[0]["method"] == "cuset" and paired.iloc[0]["diff"] == pytest.approx(0.5)
    assert json.loads((out / "summary.json").read_text())["candidates"] == 4


def test_a_fresh_workspace_keeps_the_committed_rows_of_finished_evaluations(tmp_path, monkeypatch):
    """The results folder travels with the repo, the result store does not: a unit done on
    another machine keeps its committed rows; rows of units not done are not invented."""
    from cuset.experiment.runner import committed_candidates, progress_of, write_results_of

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))
    config = ExperimentConfig.from_dict(TINY)
    units = plan(config)
    out = tmp_path / "out"
    row = {"model": "tiny", "seed": 42, "mode": "greedy", "task": "L1_0", "level": 1, "split": "in_distribution", "family": "elementwise",
           "sample": 0, "status": "correct", "compiled": True, "correct": True, "error_line": None, "error": ""}
    write_results(out, pd.DataFrame([{**row, "method": "sft"}, {**row, "method": "cuset", "correct": False, "status": "wrong_output"}]))
    state = State(out / "state.json")
    state.units["eval/tiny/sft/s42/greedy"] = UnitState(status="done", job=7, run_id=99)  # run 99: not in this store
    kept = collect(units, state, committed_candidates(out))
    assert list(kept["method"]) == ["sft"] and bool(kept.iloc[0]["correct"])  # cuset's unit is not done: its row is dropped
    assert committed_candidates(tmp_path / "nowhere") is None
    write_results_of(config, units, state, out, progress_of(config, units, state))
    assert len(read_results(out)[0]) == 1


def test_a_replaced_workspace_does_not_lend_its_ids_to_committed_units(tmp_path, monkeypatch, capsys):
    """A fresh workspace numbers jobs and runs from 1 again: a committed unit's run 1 or an
    active unit's job 1 may now be someone else's. The run's label and the job's creation time
    tell them apart; the committed rows stand and the job counts as not in this workspace."""
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "new-ws"))
    from cuset import jobs
    from cuset.evaluate.results import ResultStore
    from cuset.experiment.runner import _own_job, committed_candidates, progress_of, unit_label, write_results_of

    config = ExperimentConfig.from_dict(TINY)
    units = plan(config)
    unit = next(u for u in units if u.key == "eval/tiny/sft/s42/greedy")
    out = tmp_path / "out"
    row = {"model": "tiny", "method": "sft", "seed": 42, "mode": "greedy", "task": "L1_0", "level": 1, "split": "in_distribution",
           "family": "elementwise", "sample": 0, "status": "correct", "compiled": True, "correct": True, "error_line": None, "error": ""}
    write_results(out, pd.DataFrame([row]))
    store = ResultStore()
    run = store.create_run(label="another experiment: tiny sft s42 greedy", model="tiny", method="sft", suite="bundled", backend="cpu", n_samples=1)
    store.add_results(run, [{"task_id": "L1_0", "sample": 0, "level": 1, "family": "elementwise", "split": "in_distribution",
                             "status": "compile_error", "compiled": False, "correct": False, "message": "error: x", "error_line": 3}])
    state = State(out / "state.json")
    state.units[unit.key] = UnitState(status="done", job=run, run_id=run)
    kept = collect(units, state, committed_candidates(out), config.name)
    assert len(kept) == 1 and bool(kept.iloc[0]["correct"])  # the committed row, not the stranger's run
    assert not collect(units, state, committed_candidates(out), "").iloc[0]["correct"]  # by id alone: the stranger's
    bare = State(tmp_path / "bare" / "state.json")  # no committed rows either: the unit is left out, and said so
    bare.units[unit.key] = UnitState(status="done", job=run, run_id=run)
    write_results_of(config, units, bare, tmp_path / "bare", progress_of(config, units, bare))
    assert f"{unit.key} is done, but neither" in capsys.readouterr().err
    assert json.loads((tmp_path / "bare" / "summary.json").read_text())["done_without_rows"] == [unit.key]
    with store.store.connect() as db:  # the same run, now carrying the unit's own label, counts
        db.execute("UPDATE eval_runs SET label = ? WHERE id = ?", (unit_label(config.name, unit), run))
    assert not collect(units, state, committed_candidates(out), config.name).iloc[0]["correct"]

    job_store = jobs.JobStore()
    job_id = job_store.create("train", "sft", "tiny", "tiny")
    created = job_store.get(job_id).created
    assert _own_job(job_store, UnitState(job=job_id, job_created=created)).id == job_id
    legacy = UnitState(job=job_id, started=created + 5)  # a state from before job_created: checked by time
    assert _own_job(job_store, legacy).id == job_id and legacy.job_created == created
    assert _own_job(job_store, UnitState(job=job_id, started=created - 3600)) is None  # the job is newer than the unit
    assert _own_job(job_store, UnitState(job=job_id)) is None
    assert _own_job(job_store, UnitState(job=job_id, job_created=created - 3600)) is None
    assert _own_job(job_store, UnitState(job=job_id + 1)) is None


def test_configs_of_units_done_elsewhere_stay_as_committed(tmp_path, monkeypatch):
    """In a fresh workspace a done unit's job folder is gone: its committed config stays; a
    fine-tune not yet run gets the resolved config it will submit."""
    from cuset.experiment.runner import write_configs
    from cuset.train.config import TrainConfig

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))
    config = ExperimentConfig.from_dict(TINY)
    units = plan(config)
    out = tmp_path / "out"
    committed = out / "configs" / "train_tiny_sft_s42.yaml"
    committed.parent.mkdir(parents=True)
    committed.write_text("what the job ran: kept\n")
    state = State(out / "state.json")
    state.units["train/tiny/sft/s42"] = UnitState(status="done", job=3, job_created=1.0)
    write_configs(config, units, state, out)
    assert committed.read_text() == "what the job ran: kept\n"
    pending = TrainConfig.load(out / "configs" / "train_tiny_cuset_s42.yaml")
    assert pending.method == "cuset" and pending.objective  # resolved: the objective's values, not ''


def test_candidate_rows_leave_out_runs_of_other_experiments():
    frame = pd.DataFrame([{"run_id": r, "task_id": "t", "sample": 0, "level": 1, "family": "", "split": "", "status": "correct",
                           "compiled": True, "correct": True, "message": "", "error_line": None, "model": "x", "method": "y"} for r in (1, 2)])
    out = candidate_rows(frame, {2: RunInfo("tiny", "sft", 3, "greedy")})
    assert len(out) == 1 and (out.iloc[0]["model"], out.iloc[0]["method"], out.iloc[0]["seed"]) == ("tiny", "sft", 3)
    assert math.isnan(summary_table(out).iloc[0].get("pass@5", math.nan))


def test_a_candidate_row_names_the_engine_its_run_recorded(tmp_path):
    frame = pd.DataFrame([{"run_id": r, "task_id": "t", "sample": 0, "level": 1, "family": "", "split": "", "status": "correct",
                           "compiled": True, "correct": True, "message": "", "error_line": None} for r in (1, 2)])
    runs = {1: RunInfo("tiny", "sft", 3, "greedy"), 2: RunInfo("tiny", "sft", 3, "sampled")}
    out = candidate_rows(frame, runs, {1: "ctranslate2"})
    assert list(out.columns) == list(CANDIDATE_COLUMNS)
    assert dict(zip(out["mode"], out["engine"])) == {"greedy": "ctranslate2", "sampled": "transformers"}  # 2 recorded none
    # a candidates.csv written before the column existed reads back with it, as transformers
    old = out.drop(columns=["engine"])
    old.to_csv(tmp_path / "candidates.csv", index=False)
    back = read_table(tmp_path / "candidates.csv")
    assert list(back.columns) == list(CANDIDATE_COLUMNS) and set(back["engine"]) == {"transformers"}


# --- end to end -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_tiny_experiment_runs_resumes_and_writes_its_results(tmp_path, monkeypatch):
    """tiny x {sft, cuset} x 1 seed, a greedy pass on one task, through real job processes;
    then a second start finds everything done and submits nothing."""
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset import jobs
    from cuset.experiment import run_experiment

    config = ExperimentConfig.from_dict(TINY)
    out = tmp_path / "results"
    seen: list[str] = []
    progress = run_experiment(config, out, poll_s=0.5, on_progress=lambda p, events: seen.extend(events))
    assert (progress.done, progress.failed, progress.total) == (4, 0, 4), seen
    assert sum("submitted" in e for e in seen) == 4
    candidates, summary, paired = read_results(out)
    assert sorted(set(candidates["method"])) == ["cuset", "sft"] and len(candidates) == 2
    assert list(zip(paired["metric"], paired["method"])) == [("correct", "cuset"), ("compiled", "cuset")] and paired.iloc[0]["tasks"] == 1
    assert (out / "configs" / "train_tiny_cuset_s42.yaml").is_file() and (out / "table.md").is_file()
    state = json.loads((out / "state.json").read_text())
    assert all(u["status"] == "done" for u in state["units"].values())
    n_jobs = len(jobs.list_jobs())
    again = run_experiment(config, out, poll_s=0.5)
    assert again.done == 4 and len(jobs.list_jobs()) == n_jobs  # nothing submitted twice


def test_the_main_figure_and_table_come_from_the_results_files_alone(tmp_path):
    from cuset.figures.draw import save_figure
    from cuset.figures.experiment import experiment_caption, experiment_figure, experiment_results

    sft = {"t1": [True], "t2": [False], "t3": [False], "t4": [True]}
    cuset = {"t1": [True], "t2": [True], "t3": [True], "t4": [True]}
    write_results(tmp_path / "exp-a", pd.DataFrame(rows("sft", "greedy", sft) + rows("cuset", "greedy", cuset)))
    (tmp_path / "not-an-experiment").mkdir()
    results = experiment_results(tmp_path)
    assert list(results) == ["exp-a"]
    caption = experiment_caption(results)
    assert "exp-a (4 tasks): pass@1 sft greedy 50.0%, cuset greedy 100.0%" in caption
    assert "cuset (greedy) +50.0 points" in caption and "p = 0.5" in caption  # 2 wins, 0 losses: p = 2 / 4
    files = save_figure(experiment_figure(results), tmp_path / "figs", "experiments", ["svg"])
    assert files["svg"].stat().st_size > 5000
    # an experiment with only sft evaluated says so in its paired panel (not "no sft run")
    write_results(tmp_path / "exp-b", pd.DataFrame(rows("sft", "greedy", sft)))
    texts = [t.get_text() for ax in experiment_figure(experiment_results(tmp_path)).axes for t in ax.texts]
    # exp-a's sign tests in pass@1 (b) and in compile rate (c: every greedy reply compiles here, 4 ties),
    # then exp-b's note in both of its paired panels
    assert texts == ["p=0.5", "p=1", "only sft so far:\nnothing to pair", "only sft so far:\nnothing to pair"]
    assert "Compile rate against sft: cuset (greedy) +0.0 points [-49.0, +49.0], p = 1." in caption  # all ties: the zero-count bound


def test_bfloat16_recipes_are_refused_where_bfloat16_is_slow(tmp_path, monkeypatch, capsys):
    """cpu-coder trains under bf16 autocast and generates in bfloat16: on a CPU without
    avx512_bf16/AMX that crawls, so nothing is submitted; units done, or a machine with fast
    bfloat16, or --allow-slow-bf16, let it go on. The dtypes are never swapped silently."""
    import analysis.experiment as cli
    from cuset import bf16, jobs
    from cuset.experiment import background, runner
    from cuset.experiment.runner import SlowHardwareError, check_hardware, slow_bf16_units
    from cuset.generate import source as generate_source

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    monkeypatch.setattr(generate_source, "pick_device", lambda device="auto": "cpu")  # jobs on this CPU, GPU or not
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")  # torch's own bf16 kernels (cuset.bf16 off): bfloat16 is slow here
    config = load_experiment("cpu-coder")
    units = plan(config)
    state = State(tmp_path / "state.json")
    slow = slow_bf16_units(config, units, state)
    assert "train/coder-0.5b/cuset/s42: trains under bf16 autocast" in slow
    assert "eval/coder-0.5b/base/s42/greedy: generates in bfloat16" in slow  # dtype auto: the Qwen coders' own bfloat16
    assert len(slow) == len(units)
    for unit in units:
        state.units[unit.key] = UnitState(status="done")
    assert slow_bf16_units(config, units, state) == []  # nothing left to run
    check_hardware(config, units, state)
    tiny = ExperimentConfig.from_dict(TINY)  # float32 throughout (the tiny preset trains with bf16 false)
    assert slow_bf16_units(tiny, plan(tiny), State(tmp_path / "t.json")) == []

    monkeypatch.setattr(jobs, "submit", lambda cfg: pytest.fail("submitted on a machine without fast bfloat16"))
    with pytest.raises(SlowHardwareError, match=rf"cpu-coder: {len(units)} unit\(s\) left compute in bfloat16.*--allow-slow-bf16"):
        runner.run_experiment(config, tmp_path / "out", wait=False)
    assert not (tmp_path / "out").exists()  # refused before anything was written
    assert cli.main(["cpu-coder", "--out", str(tmp_path / "out")]) == 2
    assert "avx512_bf16" in capsys.readouterr().err
    assert any(line.startswith("refused here unless --allow-slow-bf16") for line in runner.dry_run(config, tmp_path / "out"))
    monkeypatch.setattr(background, "following", lambda name: None)
    monkeypatch.setattr(background, "RESULTS_DIR", tmp_path / "results")  # not the committed state.json
    monkeypatch.setattr(background.subprocess, "Popen", lambda *a, **k: pytest.fail("a follower was started"))
    with pytest.raises(SlowHardwareError):
        background.start("cpu-coder")

    fresh = State(tmp_path / "s.json")  # a unit whose own job already runs is followed, not refused
    job_id = jobs.JobStore().create("train", "cuset", "cpu-coder", "coder-0.5b")
    job = jobs.JobStore().get(job_id)
    jobs.JobStore().update(job_id, status="running")
    fresh.units["train/coder-0.5b/cuset/s42"] = UnitState(status="active", job=job_id, job_created=job.created, started=job.created)
    assert not any(line.startswith("train/coder-0.5b/cuset/") for line in slow_bf16_units(config, units, fresh))
    monkeypatch.setenv("CUSET_RAY_ADDRESS", "http://127.0.0.1:8265")  # the cluster computes, not this machine
    assert slow_bf16_units(config, units, fresh) == []
    monkeypatch.delenv("CUSET_RAY_ADDRESS")
    monkeypatch.delenv("CUSET_BF16_MATMULS")  # cuset.bf16 on (the default): bf16 products as float32 GEMMs
    assert slow_bf16_units(config, units, state_left := State(tmp_path / "l.json")) == [] and not state_left.units
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: True)
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")
    assert slow_bf16_units(config, units, fresh) == []


def test_a_background_follower_is_seen_and_not_started_twice(tmp_path, monkeypatch):
    import subprocess
    import sys

    from cuset.experiment import background

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    with pytest.raises(ValueError, match="no-such-experiment"):
        background.start("no-such-experiment")
    assert background.following("cpu-135m-test-name") is None
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "analysis.experiment", "cpu-135m-test-name"])
    try:
        deadline = time.time() + 10
        while background.following("cpu-135m-test-name") != proc.pid and time.time() < deadline:
            time.sleep(0.1)
        assert background.following("cpu-135m-test-name") == proc.pid
    finally:
        proc.kill()
        proc.wait()
    assert background.following("cpu-135m-test-name") is None
    # a follower does not find itself: `--adopt` asks while its own argv names the experiment
    itself = subprocess.run([sys.executable, "-c", "from cuset.experiment.background import following; print(following('cpu-135m-test-name'))",
                             "analysis.experiment", "cpu-135m-test-name"], capture_output=True, text=True, check=True)
    assert itself.stdout.strip() == "None"
    monkeypatch.setattr(background, "following", lambda name: 4321)
    with pytest.raises(ValueError, match="already running \\(process 4321\\)"):
        background.start("cpu-135m")


def test_fine_tunes_queue_one_at_a_time_so_evaluations_come_first(tmp_path, monkeypatch):
    """With a fine-tune queued or running the next one is not submitted; once the first
    finishes, its evaluation is submitted before the second fine-tune."""
    from types import SimpleNamespace

    from cuset import jobs
    from cuset.evaluate import evaluation
    from cuset.experiment import runner

    book: dict[int, SimpleNamespace] = {}

    def submit(cfg):  # noqa: ANN001
        job = SimpleNamespace(id=len(book) + 1, status="queued", kind="train" if hasattr(cfg, "lora_r") else "eval",
                              result={}, created=1000.0 + len(book), started=None, finished=None, error="")
        book[job.id] = job
        return job

    class Store:
        def get(self, job_id):  # noqa: ANN001
            if job_id not in book:
                raise jobs.JobError(f"no job {job_id}")
            return book[job_id]

    monkeypatch.setattr(jobs, "submit", submit)
    monkeypatch.setattr(jobs, "JobStore", Store)
    monkeypatch.setattr(evaluation, "submit_evaluation", submit)
    config = ExperimentConfig.from_dict({**TINY, "evaluation": {**TINY["evaluation"]}})
    units = plan(config)
    state = State(tmp_path / "state.json")
    runner.advance(config, units, state)
    assert [j.kind for j in book.values()] == ["train"]  # sft's fine-tune only
    runner.advance(config, units, state)
    assert len(book) == 1
    book[1].status = "running"
    runner.advance(config, units, state)
    # still nothing: a fine-tune queued now would run (the queue goes by job id) before the
    # evaluations of the one running, which are submitted only when it finishes
    assert len(book) == 1
    book[1].status = "completed"
    runner.advance(config, units, state)
    assert [j.kind for j in book.values()] == ["train", "eval", "train"]  # sft's evaluation first, then cuset's fine-tune
    assert state.units["eval/tiny/sft/s42/greedy"].job == 2 and state.units["train/tiny/cuset/s42"].job == 3


def test_a_done_fine_tune_is_kept_with_the_results_and_restored_in_a_replaced_workspace(tmp_path, monkeypatch):
    """A done LoRA fine-tune's adapter goes to the results folder's models/ (once); in a fresh
    workspace its evaluations run on that adapter, restored as a job, instead of a new fine-tune."""
    from cuset import jobs
    from cuset.evaluate import evaluation
    from cuset.experiment import runner
    from tests.jobs.test_jobs import _finished_lora_job

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    config = ExperimentConfig.from_dict({**TINY, "methods": ["cuset"], "train": {**TINY["train"], "lora_r": 4, "lora_alpha": 8}})
    units = plan(config)
    state = State(tmp_path / "results" / "state.json")
    job = _finished_lora_job(jobs.JobStore())
    runner.unit_config(config, units[0], state).save(job.folder / "config.yaml")  # the unit's own fine-tune
    state.units["train/tiny/cuset/s42"] = UnitState(status="done", job=job.id, job_created=job.created, attempts=1)
    submitted: list = []
    monkeypatch.setattr(evaluation, "submit_evaluation", lambda cfg: submitted.append(cfg) or jobs.JobStore().get(jobs.JobStore().create("eval", "cuset", "", "tiny")))
    monkeypatch.setattr(jobs, "submit", lambda cfg: pytest.fail("no fine-tune may be submitted"))
    events = runner.advance(config, units, state)
    kept = tmp_path / "results" / "models" / "tiny-cuset-s42"
    assert any("adapter" in e and str(kept) in e for e in events), events
    assert (kept / "final" / "adapter_model.safetensors").is_file()
    assert not any("kept" in e for e in runner.advance(config, units, state))  # once
    assert [c.model for c in submitted] == [f"job:{job.id}"]

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))
    fresh = State(tmp_path / "results" / "state.json")
    fresh.units["train/tiny/cuset/s42"] = state.units["train/tiny/cuset/s42"]
    submitted.clear()
    events = runner.advance(config, units, fresh)
    assert any("kept adapter restored as job 1" in e for e in events), events
    assert fresh.units["train/tiny/cuset/s42"].job == 1 and fresh.units["train/tiny/cuset/s42"].status == "done"
    assert [c.model for c in submitted] == ["job:1"] and jobs.JobStore().get(1).status == "completed"
    assert json.loads((tmp_path / "results" / "state.json").read_text())["units"]["train/tiny/cuset/s42"]["job"] == 1

    # a third workspace, and the kept weights damaged: said, and trained again rather than stopping the follower
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "third-ws"))
    weights = kept / "final" / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    trained: list = []
    monkeypatch.setattr(jobs, "submit", lambda cfg: trained.append(cfg) or jobs.JobStore().get(jobs.JobStore().create("train", "cuset", "tiny", "tiny")))
    third = State(tmp_path / "results" / "state.json")
    third.units["train/tiny/cuset/s42"] = fresh.units["train/tiny/cuset/s42"]
    events = runner.advance(config, units, third)
    assert any("cannot be used" in e and "training again" in e for e in events), events
    assert [c.method for c in trained] == ["cuset"] and jobs.JobStore().get(1).kind == "train" and jobs.JobStore().get(1).method == "cuset"


def test_a_hand_run_fine_tune_is_adopted_only_when_its_config_is_the_units(tmp_path, monkeypatch):
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset import jobs
    from cuset.experiment import adopt_job
    from cuset.experiment.runner import unit_config

    config = ExperimentConfig.from_dict(TINY)
    out = tmp_path / "results"
    units = plan(config)
    sft = next(u for u in units if u.key == "train/tiny/sft/s42")
    wanted = unit_config(config, sft, State(out / "state.json"))
    other = jobs.submit(wanted.__class__.from_dict({**wanted.to_dict(), "lr": wanted.lr * 2, "save_steps": 1}), start=False)
    with pytest.raises(ValueError, match=r"lr: job 0\.002 vs unit 0\.001"):
        adopt_job(config, out, "train/tiny/sft/s42", other.id)
    with pytest.raises(ValueError, match="no fine-tune unit 'train/tiny/dft/s42'"):
        adopt_job(config, out, "train/tiny/dft/s42", other.id)
    same = jobs.submit(wanted.__class__.from_dict({**wanted.to_dict(), "save_steps": 1, "threads": 1}), start=False)  # how it runs, not what it makes
    assert "adopted" in adopt_job(config, out, "train/tiny/sft/s42", same.id)
    state = State.load(out / "state.json")
    assert (state.units["train/tiny/sft/s42"].job, state.units["train/tiny/sft/s42"].status) == (same.id, "active")
    with pytest.raises(ValueError, match=f"already has job {same.id}"):
        adopt_job(config, out, "train/tiny/sft/s42", other.id)
    with pytest.raises(ValueError, match="cuset"):  # the method differs
        adopt_job(config, out, "train/tiny/cuset/s42", same.id)
    from cuset.experiment import runner

    monkeypatch.setattr(runner, "following", lambda name: 4242 if name == config.name else None)
    with pytest.raises(ValueError, match="follower .process 4242. is running"):
        adopt_job(config, out, "train/tiny/cuset/s42", other.id)


def test_a_failed_unit_is_retried_only_by_hand_with_the_units_that_failed_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset.experiment import retry_unit, runner
    from cuset.experiment.runner import UnitState

    config = ExperimentConfig.from_dict(TINY)
    out = tmp_path / "results"
    state = State(out / "state.json")
    state.units["train/tiny/sft/s42"] = UnitState(status="failed", job=3, attempts=3, error="killed for memory")
    state.units["eval/tiny/sft/s42/greedy"] = UnitState(status="failed", error="its fine-tune train/tiny/sft/s42 failed")
    state.units["train/tiny/cuset/s42"] = UnitState(status="done", job=4, attempts=1)
    state.units["eval/tiny/cuset/s42/greedy"] = UnitState(status="failed", job=5, attempts=3, error="killed")
    state.save()
    lines = retry_unit(config, out, "train/tiny/sft/s42")
    assert [line.split(":")[0] for line in lines] == ["train/tiny/sft/s42", "eval/tiny/sft/s42/greedy"]
    assert "job 3, 3 run(s): killed for memory" in lines[0]
    again = State.load(out / "state.json")
    assert [(again.units[k].status, again.units[k].job, again.units[k].attempts) for k in ("train/tiny/sft/s42", "eval/tiny/sft/s42/greedy")] == [("pending", None, 0)] * 2
    assert (again.units["train/tiny/cuset/s42"].status, again.units["eval/tiny/cuset/s42/greedy"].status) == ("done", "failed")  # others untouched
    with pytest.raises(ValueError, match="train/tiny/cuset/s42 is done, not failed"):
        retry_unit(config, out, "train/tiny/cuset/s42")
    with pytest.raises(ValueError, match="no unit 'train/tiny/nope/s1'"):
        retry_unit(config, out, "train/tiny/nope/s1")
    monkeypatch.setattr(runner, "following", lambda name: 4242)
    with pytest.raises(ValueError, match="follower .process 4242. is running"):
        retry_unit(config, out, "eval/tiny/cuset/s42/greedy")


def test_a_done_evaluation_is_redone_only_with_a_reason_keeping_the_old_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset.experiment import redo_unit, runner
    from cuset.experiment.runner import UnitState

    config = ExperimentConfig.from_dict(TINY)
    out = tmp_path / "results"
    state = State(out / "state.json")
    state.units["train/tiny/sft/s42"] = UnitState(status="done", job=3, attempts=1)
    state.units["eval/tiny/sft/s42/greedy"] = UnitState(status="done", job=4, attempts=1, run_id=7, finished=100.0)
    state.units["eval/tiny/cuset/s42/greedy"] = UnitState(status="failed", job=5, attempts=3, error="killed")
    state.save()
    with pytest.raises(ValueError, match="say why"):
        redo_unit(config, out, "eval/tiny/sft/s42/greedy", " ")
    line = redo_unit(config, out, "eval/tiny/sft/s42/greedy", "evaluated before the RoPE fix")
    assert "done (job 4, run 7) -> pending" in line
    again = State.load(out / "state.json")
    unit = again.units["eval/tiny/sft/s42/greedy"]
    assert (unit.status, unit.job, unit.run_id, unit.attempts) == ("pending", None, None, 0)
    assert [(r["job"], r["run_id"], r["finished"], r["why"]) for r in unit.redone] == [(4, 7, 100.0, "evaluated before the RoPE fix")]
    assert again.units["train/tiny/sft/s42"].status == "done"  # its fine-tune stays
    with pytest.raises(ValueError, match="is pending, not done"):
        redo_unit(config, out, "eval/tiny/sft/s42/greedy", "again")
    with pytest.raises(ValueError, match="is failed, not done"):
        redo_unit(config, out, "eval/tiny/cuset/s42/greedy", "x")
    with pytest.raises(ValueError, match="is a fine-tune"):
        redo_unit(config, out, "train/tiny/sft/s42", "x")
    with pytest.raises(ValueError, match="no unit 'eval/tiny/nope/s1/greedy'"):
        redo_unit(config, out, "eval/tiny/nope/s1/greedy", "x")
    monkeypatch.setattr(runner, "following", lambda name: 4242)
    with pytest.raises(ValueError, match="follower .process 4242. is running"):
        redo_unit(config, out, "eval/tiny/sft/s42/greedy", "x")


def test_each_finished_unit_keeps_its_replies_beside_its_rows(tmp_path, monkeypatch):
    """candidates.csv keeps an error's first line; replies/<unit>.jsonl.gz keeps the whole reply,
    code and error of every candidate, byte-stable across rewrites, and a unit done in another
    workspace keeps the file it has. A broken file is refused naming the file and line."""
    import gzip

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    from cuset.evaluate.results import ResultStore
    from cuset.experiment.results import kept_replies, read_replies, replies_path
    from cuset.experiment.runner import progress_of, unit_label, write_results_of

    config = ExperimentConfig.from_dict(TINY)
    units = plan(config)
    unit = next(u for u in units if u.key == "eval/tiny/sft/s42/greedy")
    store = ResultStore()
    run = store.create_run(label=unit_label(config.name, unit), model="job:1", method="sft", suite="bundled", backend="cpu", n_samples=1)
    reply = "```python\ncuda_source = r\"\"\"\n__global__ void k(float* x) { x[threadIdx.x + 1] = 0; }\n\"\"\"\n```"
    store.add_results(run, [
        {"task_id": "L1_1", "sample": 0, "level": 1, "status": "wrong_result", "compiled": True, "correct": False,
         "message": "max abs error 1.0\nat [0, 3]", "first_diff": "[0, 3]: 0.0 vs 1.0", "reply": reply, "code": reply[10:-4]},
        {"task_id": "L1_0", "sample": 0, "level": 1, "status": "compile_error", "compiled": False, "correct": False,
         "message": "error: expected ';'", "error_line": 12, "reply": "no code here", "code": ""},
    ])
    store.finish_run(run, "completed", {})
    out = tmp_path / "out"
    state = State(out / "state.json")
    state.units[unit.key] = UnitState(status="done", job=run, run_id=run)
    write_results_of(config, units, state, out, progress_of(config, units, state))
    path = replies_path(out, unit.run_info)
    assert path == out / "replies" / "tiny_sft_s42_greedy.jsonl.gz"
    records = read_replies(out, unit.run_info)
    assert [(r["task"], r["status"], r["error_line"]) for r in records] == [("L1_0", "compile_error", 12), ("L1_1", "wrong_result", None)]
    assert records[1]["reply"] == reply and records[1]["message"] == "max abs error 1.0\nat [0, 3]"
    assert records[1]["first_diff"] == "[0, 3]: 0.0 vs 1.0" and records[0]["code"] == ""
    assert kept_replies(out) == [unit.run_info] and kept_replies(tmp_path / "nowhere") == []
    before = path.read_bytes()
    write_results_of(config, units, state, out, progress_of(config, units, state))
    assert path.read_bytes() == before  # no time stamp in the gzip: a rewrite changes nothing

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))  # the unit's run is not in this store
    write_results_of(config, units, state, out, progress_of(config, units, state))
    assert path.read_bytes() == before and len(read_results(out)[0]) == 2

    path.write_bytes(gzip.compress(b'{"task": "L1_0"}\nnot json\n'))
    with pytest.raises(ValueError, match=r"tiny_sft_s42_greedy.jsonl.gz, line 1: missing field\(s\) sample"):
        read_replies(out, unit.run_info)
    path.write_bytes(b"plain text")
    with pytest.raises(ValueError, match="not a gzip file"):
        read_replies(out, unit.run_info)
    with pytest.raises(ValueError, match="is missing"):
        read_replies(out, RunInfo("tiny", "cuset", 42, "greedy"))


def test_a_full_fine_tune_kept_as_records_only_is_trained_again_and_says_why(tmp_path, monkeypatch):
    from cuset import jobs
    from cuset.experiment.runner import _restore, kept_model

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    config = ExperimentConfig.from_dict(TINY)
    units = plan(config)
    state = State(tmp_path / "out" / "state.json")
    key = "train/tiny/sft/s42"
    assert _restore(config, units, state, key, jobs.JobStore()) == (None, f"nor kept in {kept_model(state, key)}")
    kept_model(state, key).mkdir(parents=True)
    (kept_model(state, key) / "result.json").write_text("{}")
    restored, why = _restore(config, units, state, key, jobs.JobStore())
    assert restored is None and why.endswith("keeps its records only (a full fine-tune's weights are not kept)")


def test_a_validation_experiment_keeps_records_only_and_chooses_by_held_out_nll(tmp_path, monkeypatch):
    """No evaluation pass, train holdout: the done fine-tunes' records (not their adapters) are
    kept, and the results are their held-out NLL, the lowest of the cuset ones named."""
    from cuset import jobs
    from cuset.experiment import runner
    from cuset.experiment.validation import markdown
    from tests.jobs.test_jobs import _finished_lora_job

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    config = ExperimentConfig.from_dict({**TINY, "methods": ["sft", "cuset", "cuset-cuda"], "variants": {"cuset-cuda": {"method": "cuset", "objective": {"mask_scope": "cuda"}}},
                                         "train": {**TINY["train"], "holdout": 2, "lora_r": 4, "lora_alpha": 8},
                                         "evaluation": {"greedy": False, "n_samples": 0}})
    assert config.validation
    units = plan(config)
    assert [u.key for u in units] == ["train/tiny/sft/s42", "train/tiny/cuset/s42", "train/tiny/cuset-cuda/s42"]  # no evaluation
    state = State(tmp_path / "results" / "state.json")
    store = jobs.JobStore()
    figures = {"sft": (1.0, "sft"), "cuset": (3.0, "cuset"), "cuset-cuda": (2.0, "cuset")}
    for unit in units:
        job = _finished_lora_job(store)
        nll, method = figures[unit.method]
        (job.folder / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "nll": 2.0 - 0.1 * s}) + "\n" for s in range(1, 11)))
        store.update(job.id, result={**job.result, "method": method, "train_s": 120.0, "heldout": {"nll": nll, "n_tokens": 50, "n_samples": 2},
                                     "objective": {"masked_fraction": 0.25, "masked_fraction_outside_cuda": 0.0 if unit.method != "cuset" else 0.3}})
        state.units[unit.key] = UnitState(status="done", job=job.id, job_created=job.created, attempts=1, started=1.0, finished=61.0)
    last = state.units[units[-1].key]
    last.status, last.finished = "active", None  # the last fine-tune's end is seen in the same pass that must keep it
    events = runner.advance(config, units, state)
    assert last.status == "done" and runner.progress_of(config, units, state).finished
    kept = tmp_path / "results" / "models" / "tiny-cuset-cuda-s42"
    assert any("records only were asked for" in e and "cuset-cuda" in e for e in events), events
    assert (kept / "result.json").is_file() and not (kept / "final").exists()  # records, not the adapter
    runner.write_results_of(config, units, state, tmp_path / "results", runner.progress_of(config, units, state))
    frame = pd.read_csv(tmp_path / "results" / "validation.csv")
    assert dict(zip(frame["method"], frame["heldout_nll"])) == {"sft": 1.0, "cuset": 3.0, "cuset-cuda": 2.0}
    assert frame["train_nll_first"].iloc[0] == pytest.approx(1.7) and frame["train_nll_last"].iloc[0] == pytest.approx(1.2)
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert summary["chosen"] == "cuset-cuda" and summary["validation"] is True  # sft is lower, but it is not a cuset variant
    table = (tmp_path / "results" / "table.md").read_text()
    assert "**Chosen: `cuset-cuda`**, the lowest held-out NLL among the cuset fine-tunes (2.0000; sft 1.0000)" in table
    assert "No cuset fine-tune" in markdown(frame.iloc[:0])
