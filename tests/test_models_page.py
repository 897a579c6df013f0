"""The Models page under AppTest: the embedded models listed, and the committed findings
shown side by side (the page reads analysis/results/findings/, never scores)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cuset.findings import DEFAULT_RESULTS, read_results

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def tiny_model(monkeypatch):
    monkeypatch.setenv("CUSET_MODEL", "tiny")


def test_models_page_lists_models_and_findings():
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    app.switch_page("pages/models.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    assert app.title[0].value == "Models"
    listed = app.dataframe[0].value
    assert list(listed["name"]) == ["coder-0.5b", "coder-1.5b", "smollm2-135m"]
    assert bool(listed.set_index("name").loc["coder-0.5b", "prepared"])  # make setup prepares the default
    assert (DEFAULT_RESULTS / "findings.json").is_file()  # committed: the page reads it, never scores
    summary = app.dataframe[1].value
    assert list(summary["model"]) == ["SmolLM2-135M-Instruct", "Qwen2.5-Coder-0.5B-Instruct", "Qwen2.5-Coder-1.5B-Instruct"]
    committed = read_results(DEFAULT_RESULTS)["models"]
    assert list(summary["p-value"]) == [m["clustering"]["p_value"] for m in committed]
    assert list(summary["tokens"]) == [m["tokens"] for m in committed]
