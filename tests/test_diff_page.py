"""The confidence diff page under Streamlit's AppTest, with the tiny model as A."""

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


def test_diff_page_refuses_other_tokenizers_and_shows_a_diverging_diff():
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    app.switch_page("pages/diff.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    assert app.title[0].value == "Confidence diff"
    assert app.selectbox(key="diff_b").value == "coder-0.5b"  # Qwen's tokenizer: tiny has SmolLM2's
    assert any("'tiny' and 'coder-0.5b' tokenize it differently" in e.value for e in app.error)
    app.selectbox(key="diff_b").set_value("smollm2-135m").run()
    assert not app.exception and not app.error
    srcdoc = app.get("iframe")[0].proto.srcdoc
    data = json.loads(re.search(r'id="token-data">(.*?)</script>', srcdoc, re.S).group(1))
    assert data["notes"][0].startswith("tiny: p = ") and "\nsmollm2-135m: p = " in data["notes"][0]
    assert "Δ log p (smollm2-135m − tiny)" in srcdoc and "#01665e" in srcdoc  # the BrBG scale
    assert any("Mean Δ log p" in c.value for c in app.caption)
    app.session_state["diff_dataset"] = True
    app.run()
    assert not app.exception
    assert any(re.match(r"[1-9]\d* of \d+ samples are scored under both models", c.value) for c in app.caption)
    assert {m.label for m in app.metric} >= {"Preserved regions: mean Δ log p", "Masked tokens: mean Δ log p"}


def test_results_page_section_failures_in_regions():
    from cuset.evaluate.results import ResultStore
    from tests.test_failures import CODE

    store = ResultStore()
    run = store.create_run(label="failures section", model="tiny", method="sft", suite="bundled", backend="cpu")
    base = {"level": 1, "family": "", "split": "", "compiled": False, "correct": False, "message": "", "code": CODE, "reply": ""}
    store.add_results(run, [{**base, "task_id": "a", "sample": 0, "status": "compile_error", "error_line": 7},
                            {**base, "task_id": "b", "sample": 0, "status": "timeout", "error_line": None}])
    store.finish_run(run, "completed", {})
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    app.switch_page("pages/results.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    app.session_state["ev_failures"] = True
    app.run()
    app.selectbox(key="ev_fail_run").set_value(run).run()
    assert not app.exception, [e.message for e in app.exception]
    assert any("2 failed; 1 located in the CUDA source (1 by error line, 0 by output stores), 0 outside it, 1 unlocated" in c.value for c in app.caption)
    table = next(d.value for d in app.dataframe if "inside a region" in d.value.columns)
    assert table.iloc[0]["group"] == "all located" and table.iloc[0]["located"] == 1
