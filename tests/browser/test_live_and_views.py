"""The dashboard as a researcher lives in it, in a real browser: pages follow background work
without a reload (a fine-tune finishing, a scoring run, a new evaluation run), run comparisons
count only tasks both runs attempted, and the code views read like an editor (long lines stay
readable with their line numbers, region labels never cover code, regions never start or end
inside an identifier, top-k shown as decoded text). Screenshots go to test-output/screenshots/."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import heatmap_tooltip, metric_value, screenshot, screenshot_element, wait_idle

pytestmark = pytest.mark.browser

WORD = re.compile(r"\w")


def code_frame(page):
    """The heatmap iframe's Frame, once its rows are drawn."""
    page.frame_locator("iframe").first.locator(".code .row").first.wait_for(timeout=90_000)
    return next(f for f in page.frames if f != page.main_frame and f.query_selector(".code"))


def test_fine_tune_finishing_while_the_page_is_open_updates_it(page, app_url):
    from cuset import jobs
    from cuset.train import TrainConfig

    page.goto(f"{app_url}/finetunes")
    page.get_by_text("Start a fine-tune").wait_for(timeout=60_000)
    wait_idle(page)
    job = jobs.submit(TrainConfig.from_preset("tiny", method="sft", max_steps=2, evaluate=False))
    # no reload: the live fragment picks the new job up, shows it running, then completed
    try:
        page.get_by_text(f"Job {job.id} is completed.").wait_for(timeout=150_000)
    finally:
        screenshot(page, "finetunes-completed")
    assert jobs.get(job.id).status == "completed"
    wait_idle(page)
    assert page.get_by_role("button", name="Cancel").count() == 0  # no Cancel on a finished job
    log = page.locator('[data-testid="stCode"]').last.inner_text()
    assert "(nothing logged yet)" not in log and log.strip()
    screenshot(page, "finetunes-completed")


def test_home_follows_scoring_and_jobs_without_a_reload(page, app_url):
    from cuset.confidence import ScoreConfig, record_run, score_samples, scored_from_cache
    from cuset.data import load

    page.goto(app_url)
    page.get_by_text("Scored under this model").wait_for(timeout=60_000)
    wait_idle(page)
    before = metric_value(page, "Scored under this model")
    done, total = (int(x) for x in before.split(" / "))
    samples = load("bundled")
    _, indices = scored_from_cache(samples, ScoreConfig(model="tiny"))
    missing = next(s for i, s in enumerate(samples) if i not in set(indices))
    _, stats = score_samples([missing], ScoreConfig(model="tiny"))  # as a background job would
    record_run([missing], stats, "bundled")
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('[data-testid=stMetric]')].some(e => e.innerText.includes(want))",
        arg=f"{done + 1} / {total}", timeout=30_000,
    )
    body = page.inner_text("body")
    assert "Fine-tunes" in body and "Evaluations" in body and "Figures and experiments" in body
    screenshot(page, "home-live")


def test_comparison_of_two_runs_with_different_task_sets(page, app_url):
    from cuset.evaluate.evaluation import EvalConfig, run_evaluation

    page.goto(f"{app_url}/results")
    page.get_by_role("heading", name="Results").wait_for(timeout=60_000)
    wait_idle(page)
    run_evaluation(EvalConfig(solutions="wrong", levels=[1], limit=1, label="one planted bug"))
    run_evaluation(EvalConfig(solutions="reference", levels=[1], limit=3, label="three references"))
    # the new runs show without a reload, and B's missing tasks are left out, not "broken"
    page.get_by_text("both runs attempted").wait_for(timeout=60_000)
    page.wait_for_function("() => document.body.innerText.includes('Left out: 2 tasks only one run attempted')", timeout=60_000)
    wait_idle(page)
    body = page.inner_text("body")
    counted = re.search(r"Over the 1 tasks both runs attempted: fixed in B: (\d), broken in B: (\d), unchanged: (\d)\. "
                        r"Left out: 2 tasks only one run attempted \(2 only in A, 0 only in B\)", body)
    assert counted and sum(int(x) for x in counted.groups()) == 1, body[body.find("Compare two runs"):][:600]
    run_a = page.get_by_role("combobox", name="Run A")
    shown = run_a.evaluate("(e) => e.value || e.closest('[data-testid=stSelectbox]').innerText")
    assert "three references" in shown and re.match(r"#\d+ ", shown), shown  # a name, not a bare id
    assert re.search(r"#\d+ three references \(reference · reference solutions\), \d{4}-\d\d-\d\d \d\d:\d\d", body)
    screenshot(page, "results-compare")


def test_a_long_line_stays_readable_with_its_line_number(page, app_url):
    long_line = "    y[i] = " + " + ".join(f"a{k} * x[i + {k}]" for k in range(40)) + ";"
    code = "__global__ void wide(float* y, const float* x) {\n    int i = threadIdx.x;\n" + long_line + "\n}\n"
    page.goto(f"{app_url}/heatmap")
    page.get_by_text("Paste code").click()
    page.get_by_label("CUDA, markdown or a load_inline solution").fill(code)
    page.get_by_role("button", name="Use pasted code").click()
    page.get_by_text("Loaded: 1 samples from pasted code").wait_for(timeout=60_000)
    page.frame_locator("iframe").first.get_by_text("wide", exact=False).first.wait_for(timeout=90_000)
    wait_idle(page)
    frame = code_frame(page)
    view = frame.evaluate("""() => {
        const rows = [...document.querySelectorAll('.row')];
        const row = rows[2], lc = row.querySelector('.lc'), ln = row.querySelector('.ln');
        const tokens = [...lc.querySelectorAll('.t')];
        const last = tokens[tokens.length - 1].getBoundingClientRect();
        return {width: document.documentElement.clientWidth, lcRight: lc.getBoundingClientRect().right,
                lastRight: last.right, lcHeight: lc.getBoundingClientRect().height, number: ln.innerText,
                lnTop: ln.getBoundingClientRect().top, lcTop: lc.getBoundingClientRect().top, text: lc.innerText};
    }""")
    assert view["text"] == long_line and view["number"] == "3"
    assert view["lastRight"] <= view["width"] and view["lcRight"] <= view["width"]  # wrapped inside the view, nothing cut off
    assert view["lcHeight"] > 40 and abs(view["lnTop"] - view["lcTop"]) < 2  # several visual lines, numbered at the top
    screenshot(page, "heatmap-long-line")
    screenshot_element(page.locator("iframe").first, "heatmap-long-line-code")
    frame.locator("#wrap").uncheck()  # the other mode: one visual line, scrolled sideways
    scrolled = frame.evaluate("""() => {
        const code = document.querySelector('.code');
        const row = document.querySelectorAll('.row')[2];
        code.scrollLeft = code.scrollWidth;
        const ln = row.querySelector('.ln').getBoundingClientRect();
        return {scrollable: code.scrollWidth > code.clientWidth, scrolled: code.scrollLeft > 0, lnLeft: ln.left,
                lnRight: ln.right, height: row.querySelector('.lc').getBoundingClientRect().height};
    }""")
    assert scrolled["scrollable"] and scrolled["scrolled"] and scrolled["height"] < 30
    assert scrolled["lnLeft"] >= 0 and scrolled["lnRight"] > 0  # the line number stays in view


def test_region_labels_never_cover_code_and_regions_hold_whole_identifiers(page, app_url):
    page.goto(f"{app_url}/regions")
    page.get_by_text("Regions in the scored samples").wait_for(timeout=90_000)
    wait_idle(page)
    frame = code_frame(page)
    boxes = frame.evaluate("""() => {
        const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
        return {labels: [...document.querySelectorAll('.rl')].map(rect),
                lines: [...document.querySelectorAll('.lc')].map(rect),
                tokens: [...document.querySelectorAll('.lc .t')].map(rect)};
    }""")
    assert boxes["labels"], "the sample shown has no regions: this test needs one"

    def overlap(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    for label in boxes["labels"]:
        hits = [box for box in boxes["lines"] + boxes["tokens"] if overlap(label, box)]
        if hits:
            screenshot(page, "regions-lane")
        assert not hits, (label, hits[:3])
    edges = frame.evaluate("""() => {
        const lcOf = (e) => e.closest('.lc');
        const before = (e) => { const r = document.createRange(); r.setStart(lcOf(e), 0); r.setEndBefore(e); return r.toString(); };
        const after = (e) => { const r = document.createRange(); r.setStartAfter(e); r.setEnd(lcOf(e), lcOf(e).childNodes.length); return r.toString(); };
        const ids = [...new Set([...document.querySelectorAll('.code .region')].map((e) => e.dataset.r))];
        return ids.map((id) => {
            const segs = [...document.querySelectorAll('.code .region[data-r="' + id + '"]')];
            const first = segs[0], last = segs[segs.length - 1];
            return {text: segs.map((s) => s.textContent).join('\\n'), before: before(first).slice(-1), first: first.textContent.slice(0, 1),
                    last: last.textContent.slice(-1), after: after(last).slice(0, 1)};
        });
    }""")
    assert edges
    for edge in edges:
        assert edge["text"].strip()
        assert not (WORD.match(edge["before"] or " ") and WORD.match(edge["first"] or " ")), edge  # starts on an identifier boundary
        assert not (WORD.match(edge["last"] or " ") and WORD.match(edge["after"] or " ")), edge  # ends on one
    screenshot(page, "regions-lane")
    screenshot_element(page.locator("iframe").first, "regions-lane-code")


def test_top_k_is_decoded_text_with_visible_whitespace(page, app_url):
    text = heatmap_tooltip(page, app_url, 12)
    alternatives = text.split("top-k:")[1]
    assert "Ġ" not in alternatives and "Ċ" not in alternatives  # byte-level BPE decoded
    assert "\\u" not in alternatives and '"' not in alternatives
    screenshot_element(page.locator("iframe").first, "heatmap-tooltip")


def test_a_page_url_opened_first_on_a_fresh_server_gets_the_navigation(browser, tmp_path):
    """Streamlit runs a pages/NAME.py on its own (legacy folder routing) when a server's first
    session opens that page's URL, unless cuset.serve switched that routing off: then app.py
    runs and draws the page links around the page."""
    from tests.browser.conftest import start_app

    proc, url = start_app(tmp_path, "fresh.log")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{url}/finetunes")
        page.get_by_role("heading", name="Fine-tunes").first.wait_for(timeout=60_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        for name in ("Home", "Models", "Results", "Figures"):
            assert sidebar.get_by_role("link", name=name).count() == 1, sidebar.inner_text()
        assert "Page not found" not in page.inner_text("body")
        context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
