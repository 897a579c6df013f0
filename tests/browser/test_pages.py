"""The dashboard in a real browser: every page loads; the threshold moves the masked fraction;
a token's tooltip shows its scores; a JSONL upload becomes the data set; hostile code renders
as text. A screenshot of each page is saved under test-output/screenshots/."""

from __future__ import annotations

import json
import re

import pytest

from tests.browser.conftest import heatmap_tooltip, metric_value, screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_home_page(page, app_url):
    page.goto(app_url)
    page.get_by_text("CuSeT Workbench").first.wait_for()
    # the title shows before the server's first run of the page is done: on busy cores that run
    # can pause for over a second with no spinner up, which wait_idle alone takes for idle
    page.get_by_text("Held out for evaluation").first.wait_for(timeout=90_000)
    wait_idle(page)
    assert screenshot(page, "home").stat().st_size > 10_000


def test_heatmap_tooltip(page, app_url):
    text = heatmap_tooltip(page, app_url, 10)
    assert "p = " in text and "entropy" in text and "rank" in text and "top-k" in text
    screenshot(page, "heatmap")


def test_regions_page(page, app_url):
    page.goto(f"{app_url}/regions")
    page.get_by_text("Regions in the scored samples").wait_for(timeout=90_000)
    wait_idle(page)
    assert int(metric_value(page, "Regions in the scored samples")) >= 0
    screenshot(page, "regions")


def test_tuning_threshold_moves_masked_fraction(page, app_url):
    page.goto(f"{app_url}/tuning")
    # The metric's own label: a caption below ("..% of the masked tokens") also holds the words.
    page.locator('[data-testid="stMetric"]').filter(has_text="Masked tokens").first.wait_for(timeout=90_000)
    wait_idle(page)
    before = metric_value(page, "Masked tokens")
    slider = page.get_by_role("slider", name="Quantile q")
    slider.focus()
    for _ in range(20):
        page.keyboard.press("ArrowRight")
    wait_idle(page)
    page.wait_for_function(
        "(b) => { const m = [...document.querySelectorAll('[data-testid=stMetric]')].find(e => e.innerText.includes('Masked tokens'));"
        " return m && !m.innerText.includes(b); }", arg=before, timeout=30_000,
    )
    after = metric_value(page, "Masked tokens")
    assert float(after.rstrip("%")) > float(before.rstrip("%"))
    screenshot(page, "tuning")


def test_upload_jsonl_with_hostile_code(page, app_url, tmp_path):
    hostile = '__global__ void k(float* x) { /* </span><script>alert(1)</script><img src=x onerror=alert(2)> */ x[threadIdx.x] = 0; }'
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"upload-{i}", "instruction": "", "response": hostile}) for i in range(2)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/heatmap")
    page.get_by_text("Upload a file").click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    page.get_by_text("Loaded: 2 samples from mine.jsonl").wait_for(timeout=60_000)
    frame = page.frame_locator("iframe").first
    frame.get_by_text("<script>alert(1)</script>", exact=False).first.wait_for(timeout=90_000)
    wait_idle(page)
    assert not dialogs  # no script from the sample ran
    screenshot(page, "upload")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.jsonl", b'{"id": "a", "instruction": "", "response": "x"}\n{"id": "b", oops\n', "line 2: not valid JSON"),
        ("binary.jsonl", b"\x7fELF\x02\x01\x01\x00" * 64, "looks like a binary file"),
    ],
)
def test_bad_upload_shows_a_message_and_the_app_keeps_working(page, app_url, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    page.goto(f"{app_url}/heatmap")
    page.get_by_text("Upload a file").click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    page.get_by_text(message).wait_for(timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("Confidence heatmap").first.is_visible()
    assert page.frame_locator("iframe").first.locator(".t").count() > 0  # the previous data set is still shown


def test_finetunes_page_starts_a_job_and_shows_its_curve(page, app_url):
    page.goto(f"{app_url}/finetunes")
    page.get_by_text("Start a fine-tune").wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_role("combobox", name="Preset").click()
    page.get_by_role("option", name="tiny").click()
    page.get_by_text("Evaluate the final model when done").click()  # off: this test watches training only
    page.get_by_role("button", name="Start job").click()
    page.get_by_text("Started job").wait_for(timeout=60_000)
    # The live fragment refreshes every 2 s: the job reaches 'completed' without a reload.
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    page.wait_for_function("() => document.body.innerText.includes('Training loss')", timeout=60_000)
    deadline_ms = 120_000
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot .scatterlayer .trace')].length > 0", timeout=deadline_ms,
    )
    screenshot(page, "finetunes")


def test_results_page_shows_runs_side_by_side_and_one_candidate(page, app_url):
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation

    run_evaluation(EvalConfig(solutions="reference", levels=[1], limit=2, label="suite references"))
    run_evaluation(EvalConfig(solutions="wrong", levels=[1], limit=2, label="planted bugs"))
    page.goto(f"{app_url}/results")
    page.get_by_text("Compare two runs task by task").wait_for(timeout=60_000)
    wait_idle(page)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=60_000)
    body = page.inner_text("body")
    changed = re.search(r"fixed in B: (\d+), broken in B: (\d+), unchanged: (\d+)", body)
    assert changed and int(changed.group(1)) + int(changed.group(2)) >= 1  # references vs planted bugs differ
    assert "Share correct by level" in page.content()
    form = page.locator('[data-testid="stForm"]').first
    assert "Protocol" in form.inner_text() and "Generation engine" in form.inner_text()
    screenshot(page, "results")


def test_figures_page_shows_the_figures(page, app_url):
    from cuset.figures import FiguresConfig, make_all

    made = [f for f in make_all(config=FiguresConfig(model="tiny", limit=3)) if f.made]  # into the app's workspace
    page.goto(app_url)
    page.get_by_role("link", name="Figures").click()  # registered in app.py's navigation
    page.get_by_text("Confidence of CUDA-sensitive vs other tokens", exact=True).wait_for(timeout=60_000)
    assert page.url.endswith("/figures")
    wait_idle(page)
    images = page.locator('[data-testid="stImage"] img')
    # every made figure, each drawn in turn: on a busy machine the page text can rest for a second
    # between two of them, so wait for the count itself (a missing figure still fails, by timeout)
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=stImage] img').length >= {len(made)}", timeout=90_000)
    wait_idle(page)
    assert images.count() == len(made) >= 3
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stImage] img')].every(i => i.complete && i.naturalWidth > 500)")
    assert page.get_by_role("button", name="PDF").count() == len(made)
    assert "Training curves" in page.inner_text("body")  # listed as not made, with the reason
    screenshot(page, "figures")


def test_results_page_shows_a_committed_reply_of_an_experiment(page, app_url):
    """The kept replies of the first experiment (cpu-135m) as committed: the first pass's first
    candidate, its status and its whole reply, as text."""
    from cuset.experiment import RESULTS_DIR, kept_replies, list_experiments, read_replies

    name = list_experiments()[0]
    kept = kept_replies(RESULTS_DIR / name)
    if not kept:
        pytest.skip(f"analysis/results/{name}/ keeps no replies")
    first = read_replies(RESULTS_DIR / name, kept[0])[0]
    page.goto(f"{app_url}/results")
    expander = page.get_by_text(f"Replies kept with the results ({len(kept)} of its evaluation passes)")
    expander.wait_for(timeout=60_000)
    wait_idle(page)
    expander.click()
    details = page.locator('[data-testid="stExpander"]').filter(has_text="Replies kept with the results")
    block = details.locator('[data-testid="stCode"]').last  # the reply (after the error message, if any)
    block.wait_for(timeout=30_000)
    line = next((text.strip() for text in first["reply"].splitlines() if text.strip()), "(an empty reply)")
    assert line[:80] in block.inner_text()
    assert first["status"] in details.inner_text()
    screenshot(page, "results-replies")
