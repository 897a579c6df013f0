"""The Models page under AppTest: the embedded models listed, and the committed findings
shown side by side (the page reads analysis/results/findings/, never scores)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cuset.findings import DEFAULT_RESULTS

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
    if (DEFAULT_RESULTS / "findings.json").is_file():
        summary = app.dataframe[1].value
        assert {"Qwen2.5-Coder-0.5B-Instruct", "SmolLM2-135M-Instruct"} <= set(summary["model"])
        assert summary["p-value"].between(0, 1).all()
    else:
        assert "No findings measured yet" in app.info[0].value
