"""The dashboard under Streamlit's AppTest (no browser), on the tiny model: every page renders,
its controls change what is computed, and bad input shows a message while the app keeps working."""

from __future__ import annotations

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


def test_tuning_page_masked_fraction_moves_and_configs_round_trip():
    app = open_page("pages/tuning.py")
    before = metric(app, "Masked tokens")
    app.slider(key="quantile").set_value(0.6).run()
    after = metric(app, "Masked tokens")
    assert float(after.rstrip("%")) > float(before.rstrip("%"))
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
    # "Evaluate when done" was on: an evaluation job of the final model follows by itself
    evals = [j for j in jobs.list_jobs() if j.kind == "eval"]
    assert evals and evals[0].model == f"job:{job.id}"
    done = jobs.wait(evals[0].id, timeout=300)
    assert done.status == "completed", jobs.read_log(done.id)
    results = open_page("pages/results.py")
    assert not results.exception
    runs = next(d.value for d in results.dataframe if "candidates" in d.value.columns)
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
    assert not app.info and len(app.get("image")) == count == 3
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
