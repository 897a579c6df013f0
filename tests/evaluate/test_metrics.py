"""pass@k and the result tables against hand computations."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cuset.evaluate.metrics import pass_at_k, pass_at_k_table, summarise, wilson_interval
from cuset.evaluate.results import ResultStore, export_csv
from cuset.workspace import Store


@pytest.mark.parametrize(
    ("n", "c", "k", "want"),
    [
        (10, 3, 1, 0.3),  # pass@1 is the fraction correct
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (5, 1, 3, 1 - 4 / 10),  # 1 - C(4,3)/C(5,3)
        (4, 0, 2, 0.0),
        (3, 3, 2, 1.0),
        (6, 4, 3, 1.0),  # fewer than k wrong samples: every draw of 3 holds a correct one
        (20, 5, 10, 1 - math.comb(15, 10) / math.comb(20, 10)),
    ],
)
def test_pass_at_k_matches_the_binomial_formula(n, c, k, want):
    assert pass_at_k(n, c, k) == pytest.approx(want, rel=1e-12)


def test_pass_at_k_edge_cases():
    assert math.isnan(pass_at_k(2, 1, 5))
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(3, 4, 1)


def test_tables_average_pass_at_k_over_tasks_and_count_statuses():
    frame = pd.DataFrame(
        {
            "method": ["sft"] * 4 + ["cuset"] * 4,
            "task_id": ["a", "a", "b", "b"] * 2,
            "correct": [True, False, False, False, True, True, False, True],
            "compiled": [True, True, False, True, True, True, True, True],
            "status": ["correct", "wrong_result", "compile_error", "wrong_result", "correct", "correct", "wrong_result", "correct"],
        }
    )
    table = pass_at_k_table(frame, ks=(1, 2), by=["method"]).set_index("method")
    # sft: task a 1/2 correct, b 0/2 -> pass@1 = (0.5 + 0) / 2; pass@2 = (1 + 0) / 2
    assert table.loc["sft", "pass@1"] == pytest.approx(0.25)
    assert table.loc["sft", "pass@2"] == pytest.approx(0.5)
    assert table.loc["cuset", "pass@1"] == pytest.approx(0.75)
    s = summarise(frame, by=["method"]).set_index("method")
    assert s.loc["sft", "compile_rate"] == pytest.approx(0.75)
    assert s.loc["cuset", "correct_rate"] == pytest.approx(0.75)
    assert s.loc["sft", "n_compile_error"] == 1 and s.loc["sft", "tasks"] == 2
    lo, hi = wilson_interval(3, 4)
    assert 0.0 < lo < 0.75 < hi <= 1.0


def test_wilson_interval_is_exact_at_the_ends():
    # 0 of 27 used to give a lower bound of 6.9e-18 (centre - half rounded), printed into summary.csv
    assert wilson_interval(0, 27) == (0.0, pytest.approx(0.1246, abs=1e-4))
    assert wilson_interval(27, 27)[1] == 1.0 and wilson_interval(27, 27)[0] == pytest.approx(1 - 0.1246, abs=1e-4)
    assert all(math.isnan(b) for b in wilson_interval(0, 0))  # no candidates, no interval


def test_result_store_round_trip_and_csv(tmp_path):
    rs = ResultStore(Store(tmp_path / "cuset.db"))
    run = rs.create_run(label="t", model="tiny", method="sft", suite="bundled", backend="cpu", n_samples=2, config={"seed": 1})
    rs.add_results(run, [
        {"task_id": "L1-a", "sample": 0, "level": 1, "family": "elementwise", "status": "correct", "compiled": True, "correct": True,
         "max_abs_error": 0.0, "code": "x", "reply": "```python\nx\n```"},
        {"task_id": "L1-a", "sample": 1, "level": 1, "family": "elementwise", "status": "compile_error", "compiled": False,
         "correct": False, "message": "solution.py:12: error: expected ';'", "error_line": 12, "max_abs_error": float("nan")},
    ])
    rs.finish_run(run, "completed", {"correct_rate": 0.5})
    frame = rs.frame([run])
    assert list(frame["status"]) == ["correct", "compile_error"]
    assert frame["correct"].tolist() == [True, False] and frame["method"].tolist() == ["sft", "sft"]
    assert frame.loc[1, "error_line"] == 12 and pd.isna(frame.loc[1, "max_abs_error"])
    runs = rs.runs()
    assert runs.loc[0, "candidates"] == 2 and runs.loc[0, "correct_rate"] == pytest.approx(0.5)
    assert rs.get_run(run)["summary"] == {"correct_rate": 0.5} and rs.get_run(run)["config"] == {"seed": 1}
    path = export_csv(frame, tmp_path / "r.csv")
    back = pd.read_csv(path)
    assert "code" not in back.columns and back["status"].tolist() == ["correct", "compile_error"]
    with pytest.raises(ValueError, match="unknown eval run fields"):
        rs.create_run(colour="red")


def test_compare_runs_names_fixed_and_broken_tasks():
    from cuset.evaluate.metrics import compare_runs

    frame = pd.DataFrame({
        "run_id": [1, 1, 1, 2, 2, 2], "sample": [0] * 6, "task_id": ["a", "b", "c"] * 2, "level": [1, 1, 2] * 2,
        "family": ["x"] * 6, "status": ["wrong_result", "correct", "correct", "correct", "compile_error", "correct"],
        "correct": [False, True, True, True, False, True],
    })
    table = compare_runs(frame, 1, 2).set_index("task_id")
    assert table.loc["a", "change"] == "fixed" and table.loc["b", "change"] == "broken" and table.loc["c", "change"] == "same"
    assert table.loc["b", "status_b"] == "compile_error"
    assert list(compare_runs(frame, 1, 2)["change"]) == ["fixed", "broken", "same"]


def test_speedups_and_fast_p_by_hand():
    from cuset.evaluate.metrics import speedups

    frame = pd.DataFrame({
        "task_id": ["a", "b", "c", "d"], "sample": [0] * 4, "correct": [True, True, False, True],
        "runtime_ms": [1.0, 4.0, 0.5, 2.0], "ref_runtime_ms": [2.0, 2.0, 2.0, 2.0],
    })
    s = speedups(frame)
    assert s["speedup_geomean"] == pytest.approx((2.0 * 0.5 * 1.0) ** (1 / 3))  # correct ones only
    assert s["fast_0"] == pytest.approx(3 / 4) and s["fast_1"] == pytest.approx(1 / 4) and s["fast_2"] == 0.0
    assert speedups(frame.assign(runtime_ms=float("nan"))) == {}
