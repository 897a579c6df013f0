"""The dashboard under Streamlit's AppTest (no browser), on the tiny model: every page renders,
its controls change what is computed, and bad input shows a message while the app keeps working."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def tiny_model(monkeypatch):
    monkeypatch.setenv("CUSET_MODEL", "tiny")


def open_page(page: str) -> AppTest:
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    app.switch_page(page)
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def metric(app: AppTest, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def test_home_page_shows_the_workspace():
    from cuset.objective import ObjectiveConfig, save_named

    save_named("apptest-config", ObjectiveConfig(quantile=0.3))
    app = open_page("pages/home.py")
    assert app.title[0].value == "CuSeT Workbench"
    assert metric(app, "Model") == "tiny"
    assert int(metric(app, "Samples loaded")) >= 200
    assert metric(app, "Saved objective configs") != "0"
    assert any("apptest-config" in md.value for md in app.markdown)


def test_heatmap_page_scores_the_sample_and_switches_signal():
    app = open_page("pages/heatmap.py")
    assert app.title[0].value == "Confidence heatmap"
    assert 'class="t' in app.get("iframe")[0].proto.srcdoc
    assert not any("scored under tiny" in c.value for c in app.caption)  # data-set plots wait until opened
    assert not app.get("plotly_chart")
    app.session_state["dataset_plots"] = True  # open the expander
    app.run()
    assert any("scored under tiny" in c.value for c in app.caption) and len(app.get("plotly_chart")) == 3
    app.radio(key="signal").set_value("entropy").run()
    assert not app.exception
    app.button[1].click().run()  # Next sample
    assert app.selectbox[0].value == 1
    app.text_input(key="sample_query").input("no-sample-has-this-text").run()
    assert any("No sample matches" in i.value for i in app.info)


def test_regions_page_reacts_to_the_threshold():
    app = open_page("pages/regions.py")
    default = int(metric(app, "Regions in the scored samples"))
    app.slider(key="quantile").set_value(0.02).run()
    strict = int(metric(app, "Regions in the scored samples"))
    assert 0 <= strict < default
    app.selectbox(key="region_method").set_value("statement").run()
    assert not app.exception


def struck_through(app: AppTest) -> int:
    """Tokens the preview heatmap strikes through (its per-token data's `masked` list)."""
    found = re.search(r'"masked":\s*(\[[0-9, ]*\])', app.get("iframe")[0].proto.srcdoc)
    assert found, "the preview carries no per-token masked list"
    return sum(json.loads(found.group(1)))


def test_tuning_page_masked_fraction_moves_and_configs_round_trip():
    app = open_page("pages/tuning.py")
    before = metric(app, "Masked tokens")
    app.slider(key="quantile").set_value(0.6).run()
    after = metric(app, "Masked tokens")
    assert float(after.rstrip("%")) > float(before.rstrip("%"))
    assert float(metric(app, "Masked outside CUDA").rstrip("%")) > 0  # the load_inline wrapper is masked too
    preview = next(c.value for c in app.caption if "tokens of this sample masked" in c.value)
    assert " 0 of them outside" not in preview
    struck = struck_through(app)
    assert struck == int(preview.split(" of ")[0].replace(",", ""))
    app.radio(key="mask_scope").set_value("cuda").run()
    assert metric(app, "Masked outside CUDA") == "0.0%"
    assert float(metric(app, "Masked tokens").rstrip("%")) < float(after.rstrip("%"))
    preview = next(c.value for c in app.caption if "tokens of this sample masked" in c.value)
    assert " 0 of them outside the CUDA source" in preview, preview
    assert struck_through(app) == int(preview.split(" of ")[0].replace(",", "")) < struck
    app.slider(key="floor").set_value(0.1).run()
    app.number_input(key="sft_warmup_steps").set_value(20).run()
    assert any("still train at weight 0.1" in c.value and "first 20 optimizer steps" in c.value for c in app.caption)
    app.number_input(key="sft_warmup_fraction").set_value(0.1).run()
    assert any("set one of them" in e.value for e in app.error)
    app.number_input(key="sft_warmup_fraction").set_value(0.0).run()
    app.selectbox(key="method").set_value("sft").run()
    assert metric(app, "Masked tokens") == "0.0%"
    app.text_input(key="config_name").input("q60").run()
    app.button(key="save_config").click().run()
    assert any("Saved 'q60'" in s.value for s in app.success)
    app.text_input(key="config_name").input("bad name!").run()
    app.button(key="save_config").click().run()
    assert any("Config name" in e.value for e in app.error)
    fresh = open_page("pages/tuning.py")
    fresh.selectbox(key="config_pick").set_value("q60").run()
    fresh.button(key="load_config").click().run()
    assert fresh.slider(key="quantile").value == pytest.approx(0.6)
    assert (fresh.radio(key="mask_scope").value, fresh.slider(key="floor").value, fresh.number_input(key="sft_warmup_steps").value) == ("cuda", 0.1, 20)


def test_tuning_page_selects_samples_by_region_score():
    from cuset.confidence import ScoreConfig, record_run, score_samples
    from cuset.data import load

    samples = load("bundled")[:4]
    record_run(samples, score_samples(samples, ScoreConfig(model="tiny"))[1])  # something scored under tiny
    app = open_page("pages/tuning.py")
    def selection(app: AppTest):
        found = [d.value for d in app.dataframe if "rank" in d.value.columns]
        assert found, ([e.value for e in app.error], [i.value for i in app.info], [c.value for c in app.caption])
        return found[0]

    app.number_input(key="select_top").set_value(2).run()
    table = selection(app)
    assert len(table) == 2 and list(table["rank"]) == [1, 2]
    assert table["region_score"].is_monotonic_decreasing
    app.radio(key="select_by").set_value("weight").run()
    assert selection(app)["weight"].is_monotonic_decreasing
    app.number_input(key="select_top").set_value(2.5).run()
    assert any("whole number" in e.value for e in app.error)


def test_empty_paste_and_unknown_model_keep_the_app_working():
    app = open_page("pages/heatmap.py")
    app.sidebar.radio(key="data_kind").set_value("Paste code").run()
    app.sidebar.text_area(key="paste").input("   ").run()
    app.sidebar.button(key="use_paste").click().run()
    assert any("pasted text is empty" in e.value for e in app.sidebar.error)
    app.sidebar.text_area(key="paste").input("__global__ void k(int* x) { x[threadIdx.x] = 1; }").run()
    app.sidebar.button(key="use_paste").click().run()
    assert not app.exception and app.selectbox[0].options == ["1/1  pasted"]
    assert app.sidebar.selectbox(key="model_input").value == "tiny"
    app.sidebar.selectbox(key="model_input").set_value("another model (folder or hub id)").run()
    app.sidebar.text_input(key="model_other").input("no-such-org/no-such-model").run()
    assert any("no-such-org/no-such-model" in e.value for e in app.sidebar.error)
    assert not app.exception and app.title[0].value == "Confidence heatmap"



def test_finetunes_page_starts_a_job_and_lists_it():
    from cuset import jobs

    app = open_page("pages/finetunes.py")
    assert app.title[0].value == "Fine-tunes"
    app.selectbox(key="ft_preset").set_value("tiny")
    app.selectbox(key="ft_method").set_value("sft")
    app.number_input(key="ft_steps").set_value(2)
    app.number_input(key="ft_eval_limit").set_value(1)
    app.button[0].click().run()
    assert not app.exception
    assert any("Started job" in s.value for s in app.success)
    job = jobs.list_jobs()[0]
    assert (job.method, job.preset) == ("sft", "tiny")
    finished = jobs.wait(job.id, timeout=120)
    assert finished.status == "completed", jobs.read_log(job.id)
    again = open_page("pages/finetunes.py")
    assert not again.exception
    assert "completed" in again.dataframe[0].value["status"].tolist()
    # what the job trained on, from its data.json: the tiny preset cuts at 512 tokens, and says so
    assert any("over max_length 512 tokens, CUT" in c.value for c in again.caption), [c.value for c in again.caption]
    # "Evaluate when done" was on: an evaluation job of the final model follows by itself
    evals = [j for j in jobs.list_jobs() if j.kind == "eval"]
    assert evals and evals[0].model == f"job:{job.id}"
    done = jobs.wait(evals[0].id, timeout=300)
    assert done.status == "completed", jobs.read_log(done.id)
    results = open_page("pages/results.py")
    assert not results.exception
    runs = next(d.value for d in results.dataframe if "correct_rate" in d.value.columns)  # the runs table
    assert runs["model"].iloc[0] == f"job:{job.id}" and runs["method"].iloc[0] == "sft" and runs["candidates"].iloc[0] == 1


def test_figures_page_lists_figures_and_regenerates_them(tmp_path, monkeypatch):
    from cuset import jobs
    from cuset.figures import FiguresConfig, make_all

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path))  # a workspace without figures, jobs or runs
    app = open_page("pages/figures.py")
    assert app.title[0].value == "Paper figures"
    assert any("No figures yet" in i.value for i in app.info)
    made = make_all(config=FiguresConfig(limit=3, formats=["pdf", "png"]))
    count = sum(f.made for f in made)
    app = open_page("pages/figures.py")
    # confidence, region examples, threshold sweep, and the findings and experiments drawn from the committed results
    assert not app.info and len(app.get("image")) == count == 5
    labels = [b.proto.label for b in app.get("download_button")]
    assert labels == ["PDF", "PNG"] * count
    assert any("Training curves" in m.value and "fine-tune" in m.value for m in app.markdown)  # skipped, with the reason
    assert any("3 samples" in c.value for c in app.caption)
    app.button(key="fig_regenerate").click().run()
    assert not app.exception
    assert any("Started job" in s.value for s in app.success)
    job = jobs.list_jobs()[0]
    assert (job.kind, job.model) == ("figures", "tiny")
    app.run()  # the live fragment shows the job's progress
    texts = [p.proto.text for p in app.get("progress")]
    assert jobs.get(job.id).is_final or any(f"Job {job.id}" in t for t in texts), texts
    if not jobs.get(job.id).is_final:
        jobs.cancel(job.id)  # it would score the whole corpus: minutes under the tiny model


def test_results_page_shows_a_wrong_candidate_with_its_error_and_confidence_colours():
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation

    run_evaluation(EvalConfig(solutions="wrong", levels=[1], limit=1, label="planted bug"))
    app = open_page("pages/results.py")
    assert [e.value for e in app.error][:1] and "wrong_result" in app.error[0].value
    app.toggle(key="ev_heat").set_value(True).run()
    assert not app.exception, [e.message for e in app.exception]
    html = next(el for el in app.get("iframe")).proto.srcdoc if app.get("iframe") else ""
    assert 'class="t' in html  # the candidate's tokens, coloured
    app.radio(key="ev_group").set_value("method").run()
    assert not app.exception


def test_the_evaluate_form_starts_a_kernel_only_evaluation_on_ctranslate2(monkeypatch):
    """The form's protocol and engine reach the submitted EvalConfig (int8 with ctranslate2)."""
    from cuset.evaluate import evaluation
    from cuset.jobs.store import Job

    submitted = []

    def submit(config):
        submitted.append(config)
        return Job(id=99, kind="eval", method="base", preset="cpu/generate", model=config.model, status="queued", phase="", step=0,
                   total_steps=0, eta_s=None, pid=None, attempts=0, error="", created=0.0, started=None, finished=None, last_heartbeat=None)

    monkeypatch.setattr(evaluation, "submit_evaluation", submit)
    app = open_page("pages/results.py")
    app.selectbox(key="ev_source").set_value("the base model (tiny)")
    app.selectbox(key="ev_protocol").set_value("kernel-only")
    app.selectbox(key="ev_engine").set_value("ctranslate2")
    app.number_input(key="ev_limit").set_value(2)
    next(b for b in app.button if b.label == "Start evaluation").click().run()
    assert not app.exception, [e.message for e in app.exception]
    assert any("Started evaluation job 99" in m.value for m in app.success)
    (config,) = submitted
    assert (config.protocol, config.engine, config.dtype, config.limit, config.model) == ("kernel-only", "ctranslate2", "int8", 2, "tiny")


# --- what the pages show, below the widgets (cuset.overview, cuset.report) -------------------


def _job(**fields):
    from cuset.jobs.store import Job

    base = dict(id=1, kind="train", method="cuset", preset="tiny", model="tiny", status="running", phase="training", step=2, total_steps=4,
                eta_s=75.0, pid=None, attempts=1, error="", created=1_700_000_000.0, started=1_700_000_010.0, finished=None, last_heartbeat=None)
    return Job(**{**base, **fields})


def test_jobs_are_listed_by_kind_with_their_own_columns_and_local_times():
    import time

    from cuset.overview import job_rows, local_time

    listed = [
        _job(),
        _job(id=2, kind="eval", method="reference", preset="cpu/reference", model="default", status="completed", finished=1_700_000_070.0),
        _job(id=3, kind="figures", method="figures", preset="pdf,svg,png", model="coder-0.5b", status="queued", started=None),
    ]
    train, evals, figs = (job_rows(listed, k) for k in ("train", "eval", "figures"))
    assert [r["id"] for r in train] == [1] and [r["id"] for r in evals] == [2] and [r["id"] for r in figs] == [3]
    assert train[0]["preset"] == "tiny" and train[0]["progress"] == 0.5 and train[0]["step"] == "2/4" and train[0]["ETA"] == "1 min 15 s"
    assert "preset" not in evals[0] and evals[0]["candidates from"] == "reference solutions" and evals[0]["backend"] == "cpu"
    assert evals[0]["took"] == "1 min 00 s" and evals[0]["ETA"] == ""  # a finished job has no ETA
    assert figs[0]["formats"] == "pdf, svg, png" and "method" not in figs[0]
    assert train[0]["started"] == time.strftime("%Y-%m-%d %H:%M", time.localtime(1_700_000_010.0)) == local_time(1_700_000_010.0)
    assert local_time(None) == "" and "." not in train[0]["started"]
    with pytest.raises(ValueError, match="valid: train, eval, figures"):
        job_rows(listed, "training")


def test_home_lists_prepared_model_folders_not_the_download_caches(tmp_path, monkeypatch):
    from cuset.overview import overview

    for folder in ("Qwen2.5-Coder-0.5B-Instruct", "tiny-random-smollm2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.json").write_text("{}")
    (tmp_path / "gguf").mkdir()
    (tmp_path / "wheels").mkdir()
    monkeypatch.setenv("CUSET_MODELS_DIR", str(tmp_path))
    assert overview()["prepared_models"] == ["Qwen2.5-Coder-0.5B-Instruct", "tiny-random-smollm2"]
    monkeypatch.setenv("CUSET_MODELS_DIR", str(tmp_path / "missing"))
    assert overview()["prepared_models"] == []


def test_runs_are_named_by_label_model_method_and_date():
    from cuset.overview import local_time, run_model, run_name

    created = 1_700_000_000.0
    reference = {"id": 4, "label": "reference bundled", "model": "default", "method": "reference", "suite": "bundled", "created": created}
    assert run_model(reference) == "reference solutions"
    assert run_name(reference) == f"#4 reference · reference solutions, {local_time(created)}"
    tuned = {"id": 5, "label": "my best", "model": "job:2", "method": "cuset", "suite": "bundled", "created": created}
    assert run_name(tuned) == f"#5 my best (cuset · job:2), {local_time(created)}"


def test_the_preset_follows_the_model_in_force():
    from cuset.overview import canonical_model, preset_for_model

    presets = {"tiny": {"model": "tiny"}, "cpu": {"model": "default"}, "gpu": {"model": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}}
    assert [preset_for_model(m, presets) for m in ("tiny", "tiny-random", "coder-0.5b", "default", "coder-1.5b")] == ["tiny", "tiny", "cpu", "cpu", "gpu"]
    assert preset_for_model("some/other-model", presets) == "cpu"
    assert canonical_model("default") == "coder-0.5b" and canonical_model("/my/folder") == "/my/folder"


def test_comparison_uses_only_tasks_both_runs_attempted():
    import pandas as pd

    from cuset.report import compare_attempted

    rows = [(1, t, c) for t, c in (("a", True), ("b", False), ("c", True), ("d", True), ("e", True))]
    rows += [(2, t, c) for t, c in (("a", False), ("b", True), ("f", False))]
    frame = pd.DataFrame([{"run_id": r, "task_id": t, "sample": 0, "level": 1, "family": "x", "status": "correct" if c else "wrong_result", "correct": c}
                          for r, t, c in rows])
    diff, counts = compare_attempted(frame, 1, 2)
    assert sorted(diff["task_id"]) == ["a", "b"]
    assert counts == {"both": 2, "only_a": 3, "only_b": 1, "fixed": 1, "broken": 1, "same": 0}


def test_the_plot_style_is_one_template_with_outlined_histograms():
    import numpy as np

    from cuset.report import OKABE_ITO, category_label, step_histogram

    x, y = step_histogram(np.array([0.1, 0.1, 0.6, 1.0]), np.array([0.0, 0.5, 1.0]))
    assert x.tolist() == [0.0, 0.5, 0.5, 1.0] and y.tolist() == [0.5, 0.5, 0.5, 0.5]
    assert category_label("launch_config") == "launch configuration" and category_label("not sensitive") == "not sensitive"
    app = open_page("pages/heatmap.py")
    app.session_state["dataset_plots"] = True
    app.run()
    figures = [json.loads(c.proto.spec) for c in app.get("plotly_chart")]
    dist = next(f for f in figures if "sensitive vs other" in f["layout"]["title"]["text"])
    assert {t["type"] for t in dist["data"]} == {"scatter"} and all(t["mode"] == "lines" for t in dist["data"])  # outlines, not overlaid bars
    for fig in figures:
        assert fig["layout"]["template"]["layout"]["colorway"] == list(OKABE_ITO)
        assert fig["layout"]["template"]["layout"]["xaxis"]["exponentformat"] == "power"  # no "10μ"
    boxes = next(f for f in figures if f["layout"]["title"]["text"] == "Confidence per category")
    assert "launch configuration" in [t["name"] for t in boxes["data"]] or "thread indexing" in [t["name"] for t in boxes["data"]]


def test_finetunes_page_starts_on_the_preset_of_the_apps_model_and_has_the_sidebar():
    app = open_page("pages/finetunes.py")
    assert app.selectbox(key="ft_preset").value == "tiny"  # CUSET_MODEL=tiny
    assert app.sidebar.selectbox(key="model_input").value == "tiny"
    for page in ("pages/results.py", "pages/figures.py"):
        assert open_page(page).sidebar.selectbox(key="model_input").value == "tiny"


def test_results_page_compares_runs_over_shared_tasks_and_names_them():
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation

    run_evaluation(EvalConfig(solutions="reference", levels=[1], limit=3, label="three references"))
    run_evaluation(EvalConfig(solutions="wrong", levels=[1], limit=1, label="one planted bug"))
    app = open_page("pages/results.py")
    assert "empty = all" in app.multiselect(key="ev_levels").label
    run_a, run_b = app.selectbox(key="ev_a"), app.selectbox(key="ev_b")
    assert "one planted bug" in run_a.format_func(run_a.value) and "three references" in run_b.format_func(run_b.value)
    caption = next(c.value for c in app.caption if "both runs attempted" in c.value)
    assert "Over the 1 tasks both runs attempted" in caption and "Left out: 2 tasks only one run attempted (0 only in A, 2 only in B)" in caption  # A: the newest run, one task
    fixed, broken, same = (int(x) for x in re.search(r"fixed in B: (\d+), broken in B: (\d+), unchanged: (\d+)", caption).groups())
    assert fixed + broken + same == 1  # the one shared task, counted once
    runs = next(d.value for d in app.dataframe if "correct_rate" in d.value.columns)  # the runs table
    assert "reference solutions" in runs["model"].tolist() and "default" not in runs["model"].tolist()
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", t) for t in runs["finished"])  # local dates, not Unix floats
    assert all(re.search(r", \d{4}-\d\d-\d\d \d\d:\d\d$", t) for t in runs["run"])


def test_figures_button_is_disabled_while_a_figures_job_is_queued(tmp_path, monkeypatch):
    from cuset import jobs
    from cuset.figures import FiguresConfig

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path))
    job = jobs.submit(FiguresConfig(limit=1), start=False)  # queued, not started
    app = open_page("pages/figures.py")
    assert app.button(key="fig_regenerate").disabled
    assert any(f"job {job.id}" in i.value for i in app.info)  # not "No figures yet"
    app.button(key="fig_cancel").click().run()
    assert jobs.get(job.id).status == "cancelled"
    assert not app.button(key="fig_regenerate").disabled


def test_results_page_shows_an_experiment_its_units_table_and_paired_comparison(tmp_path, monkeypatch):
    """A committed results folder is drawn without rerunning anything: the experiment's
    progress, its summary with intervals and the comparison with sft, paired by task."""
    import pandas as pd

    import cuset.experiment
    import cuset.experiment.background
    from cuset.experiment import write_results

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    results = tmp_path / "results"
    for module in (cuset.experiment, cuset.experiment.background):
        monkeypatch.setattr(module, "RESULTS_DIR", results)
    row = {"model": "smollm2-135m", "seed": 42, "mode": "greedy", "level": 1, "split": "in_distribution", "family": "elementwise",
           "sample": 0, "compiled": True, "error_line": None, "error": ""}
    outcomes = {"sft": [True, False, False], "cuset": [True, True, False]}
    write_results(results / "cpu-135m", pd.DataFrame([{**row, "method": m, "task": f"L1_{i}", "correct": ok, "status": "correct" if ok else "wrong_output"}
                                                      for m, oks in outcomes.items() for i, ok in enumerate(oks)]))
    app = open_page("pages/results.py")
    assert any(h.value == "Experiments" for h in app.subheader)
    options = app.selectbox(key="ex_pick").options
    assert options[0] == "cpu-135m" and "cpu-coder" in options
    assert "0 of 12 units done" in app.get("progress")[0].proto.text, [i.value for i in app.info]
    assert not app.error, [e.value for e in app.error]
    frames = [d.value for d in app.dataframe]
    assert [f["status"].tolist() for f in frames if "unit" in f.columns] == [["pending"] * 12]
    summary = next(f for f in frames if "pass@1" in f.columns)
    overall = summary[(summary["by"] == "all") & (summary["method"] == "cuset")].iloc[0]
    assert overall["pass@1"] == pytest.approx(2 / 3) and overall["pass@1_low"] < overall["pass@1"] < overall["pass@1_high"]
    paired = next(f for f in frames if "reference" in f.columns)
    assert paired.iloc[0]["method"] == "cuset" and paired.iloc[0]["diff"] == pytest.approx(1 / 3)
    assert len(app.get("image")) == 1, "the experiment's figure (a cached PNG, redrawn when its tables change)"
    assert any("None kept" in i.value for i in app.info)  # no replies/ in this folder

    from cuset.experiment.results import RunInfo, write_replies

    reply = "<b>not bold</b>\n__global__ void k(float* y) { y[threadIdx.x] = 0; }"
    frame = pd.DataFrame([{"run_id": r, "task_id": t, "sample": 0, "status": "compile_error", "error_line": 7 if r == 1 else None,
                           "message": f"error: {t} in run {r}", "first_diff": "", "reply": f"{reply} // {t} run {r}", "code": ""}
                          for r in (1, 2) for t in ("L1_0", "L1_1")])
    write_replies(results / "cpu-135m", frame, {1: RunInfo("smollm2-135m", "cuset", 42, "greedy"), 2: RunInfo("smollm2-135m", "sft", 42, "greedy")})
    app.run()
    assert app.selectbox(key="ex_reply_unit").options == ["smollm2-135m sft s42 greedy", "smollm2-135m cuset s42 greedy"]  # sft first
    app.selectbox(key="ex_reply_unit").set_value(RunInfo("smollm2-135m", "cuset", 42, "greedy")).run()
    app.selectbox(key="ex_reply_task").set_value("L1_1").run()
    codes = [c.value for c in app.code]
    assert "error: L1_1 in run 1" in codes and f"{reply} // L1_1 run 1" in codes  # shown as text, tags and all
    assert any(t.value == "compile_error, line 7" for t in app.text)
    app.selectbox(key="ex_pick").set_value("cpu-coder").run()
    assert any("No results for cpu-coder yet" in i.value for i in app.info)


def test_results_page_warns_before_starting_a_bfloat16_experiment_where_bfloat16_is_slow(tmp_path, monkeypatch):
    import cuset.experiment.background
    from cuset import bf16
    from cuset.generate import source as generate_source

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setattr(cuset.experiment.background, "RESULTS_DIR", tmp_path / "results")  # nothing done yet
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    monkeypatch.setattr(generate_source, "pick_device", lambda device="auto": "cpu")  # jobs on this CPU, GPU or not
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")  # torch's own bf16 kernels (cuset.bf16 off): bfloat16 is slow here
    monkeypatch.setattr(cuset.experiment.background, "following", lambda name: None)  # not a follower running on this machine
    app = open_page("pages/results.py")
    app.selectbox(key="ex_pick").set_value("cpu-coder").run()
    assert any("11 unit(s) left compute in bfloat16" in w.value and "avx512_bf16" in w.value for w in app.warning), [w.value for w in app.warning]
    assert app.checkbox(key="ex_allow_slow").value is False
    started = []
    monkeypatch.setattr(cuset.experiment.background.subprocess, "Popen", lambda argv, **kw: started.append(argv) or type("P", (), {"pid": 99})())
    app.button(key="ex_start").click().run()
    assert not started and any("--allow-slow-bf16" in e.value for e in app.error)  # refused, with the way out named
    app.checkbox(key="ex_allow_slow").check().run()
    app.button(key="ex_start").click().run()
    assert started and started[-1][-2:] == ["cpu-coder", "--allow-slow-bf16"], started
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: True)
    fast = open_page("pages/results.py")  # cpu-135m, also bfloat16: no warning where bfloat16 is fast
    assert not any("bfloat16" in w.value for w in fast.warning)



def test_results_page_shows_a_validation_experiment_by_its_held_out_nll(tmp_path, monkeypatch):
    import pandas as pd

    import cuset.experiment
    from cuset.experiment import background
    from cuset.experiment.validation import COLUMNS, write_validation

    monkeypatch.setattr(cuset.experiment, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(background, "RESULTS_DIR", tmp_path)
    app = open_page("pages/results.py")
    app.selectbox(key="ex_pick").set_value("cpu-coder-validation").run()
    assert not app.exception, [e.message for e in app.exception]
    assert any("appear here as its fine-tunes finish" in i.value for i in app.info)
    rows = [dict(zip(COLUMNS, ["coder-0.5b", m, o, 42, nll, 900, 32, 0.7, 0.2, 32, 0.25, 0.0, 20.0]))
            for m, o, nll in [("sft", "sft", 0.40), ("cuset", "cuset", 0.55), ("cuset-cuda", "cuset", 0.45)]]
    write_validation(tmp_path / "cpu-coder-validation", pd.DataFrame(rows))
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    table = next(d.value for d in app.dataframe if "heldout_nll" in d.value.columns)
    assert list(table["method"]) == ["sft", "cuset", "cuset-cuda"]
    assert any("**Chosen:** `cuset-cuda`" in m.value for m in app.markdown)
    assert not app.get("image")  # no figure drawn yet
    from cuset.figures.experiment import write_training_figure

    kept = tmp_path / "cpu-coder-validation" / "models" / "coder-0.5b-sft-s42"
    kept.mkdir(parents=True)
    (kept / "config.yaml").write_text("method: sft\nmodel: coder-0.5b\nseed: 42\n")
    (kept / "metrics.jsonl").write_text('{"step": 1, "nll": 1.0}\n{"step": 2, "nll": 0.8}\n')
    write_training_figure(tmp_path / "cpu-coder-validation")
    app.run()
    assert not app.exception and len(app.get("image")) == 1
