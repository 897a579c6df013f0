"""Failures against regions (cuset.failures): locating failures, a failing line inside and one
outside a hand-made region, the chance rate by hand, and a stored run end to end on tiny."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cuset.confidence import TokenScores
from cuset.failures import cuda_lines, hit_chance, judge, locate, output_store_lines, run_failures, statistics
from cuset.objective import ObjectiveConfig
from cuset.sensitivity import tag

CODE = '''import torch
from torch.utils.cpp_extension import load_inline

source = """
__global__ void scale(const float* __restrict__ x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}
"""
'''
# Lines (1-based): 5 signature, 6 index, 7 guard, 8 store, 9-10 braces.


def hand_scores(code: str, low_line: int) -> TokenScores:
    """Whitespace-split tokens; p = 0.05 on line `low_line`, 0.95 elsewhere."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+|\s+", code)]
    starts = np.array([a for a, _ in spans], np.int32)
    ends = np.array([b for _, b in spans], np.int32)
    line = np.array([code.count("\n", 0, a) + 1 for a in starts])
    p = np.where(line == low_line, 0.05, 0.95).astype(np.float32)
    n = len(spans)
    return TokenScores("c", np.arange(n, dtype=np.int32), starts, ends, p, np.log(p), np.zeros(n, np.float32), np.ones(n, np.int32),
                       np.zeros((n, 1), np.int32), np.ones((n, 1), np.float32))


def test_output_store_lines_and_locate() -> None:
    assert output_store_lines(CODE) == [8]  # y is written; x is const
    more = "__global__ void k(float* out, const float* in, int* count) {\n  __shared__ float t[32];\n  t[0] = in[0];\n  atomicAdd(&count[0], 1);\n  *out = t[0];\n}\n"
    assert output_store_lines(more) == [4, 5]  # not the shared tile, not the const input
    vector = "__global__ void v(const float* a, float* __restrict__ y, int n) {\n  float4 r = reinterpret_cast<const float4*>(a)[0];\n  reinterpret_cast<float4*>(y)[0] = r;\n}\n"
    assert output_store_lines(vector) == [3]
    bounded = "__global__ void __launch_bounds__(256) k(const float* __restrict__ x, float* __restrict__ y, int64_t n) {\n    y[0] = x[1];\n}\n"
    assert output_store_lines(bounded) == [2] == output_store_lines(bounded.replace("void __launch_bounds__(256)", "__launch_bounds__(256) void"))
    assert locate({"status": "compile_error", "code": CODE, "error_line": 7}).lines == (7,)
    assert locate({"status": "wrong_result", "code": CODE, "error_line": None}) .how == "output stores"
    assert not locate({"status": "timeout", "code": CODE, "error_line": float("nan")}).located
    assert "outside the code" in locate({"status": "runtime_error", "code": CODE, "error_line": 99}).reason
    assert locate({"status": "compile_error", "code": "", "error_line": 3}).reason == "no code"


def test_chance_by_hand() -> None:
    assert hit_chance(10, 2, 1) == pytest.approx(0.2)
    assert hit_chance(10, 2, 2) == pytest.approx(1 - (8 * 7) / (10 * 9))
    assert hit_chance(4, 0, 1) == 0.0


def test_failure_inside_and_outside_a_region() -> None:
    tagged = tag(CODE, "python")
    assert cuda_lines(CODE, tagged) == {5, 6, 7, 8, 9, 10}  # the CUDA string's non-blank lines
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5)
    inside = {"task_id": "t1", "sample": 0, "status": "compile_error", "code": CODE, "error_line": 7}
    outside = {"task_id": "t2", "sample": 0, "status": "runtime_error", "code": CODE, "error_line": 6}
    unlocated = {"task_id": "t3", "sample": 0, "status": "timeout", "code": CODE, "error_line": None}
    records = [inside, outside, unlocated]
    rows = judge(records, [hand_scores(CODE, 7)] * 3, [tagged] * 3, config)
    assert [r["inside"] for r in rows] == [True, False, False]
    assert rows[0]["kinds"] and rows[1]["kinds"] == []
    assert rows[0]["covered_lines"] == 1 and rows[0]["cuda_lines"] == 6
    assert rows[0]["chance"] == pytest.approx(1 / 6)
    stats = statistics(rows)
    assert (stats["failed"], stats["located_in_cuda"], stats["unlocated"]) == (3, 2, 1)
    assert stats["overall"]["inside"] == 1 and stats["overall"]["share"] == 0.5
    assert stats["overall"]["chance"] == pytest.approx(1 / 6)
    low, high = stats["overall"]["interval"]
    assert low < 0.5 < high
    assert stats["by_status"]["compile_error"]["share"] == 1.0 and stats["by_status"]["runtime_error"]["share"] == 0.0
    kind = rows[0]["kinds"][0]
    assert stats["by_kind"][kind]["inside"] == 1


def test_run_failures_on_a_stored_run_with_tiny() -> None:
    from cuset.evaluate.results import ResultStore

    store = ResultStore()
    run = store.create_run(label="tiny failures", model="tiny", method="sft", suite="none", backend="cpu")
    base = {"level": 1, "family": "", "split": "", "compiled": False, "correct": False, "message": "", "code": CODE, "reply": ""}
    store.add_results(run, [
        {**base, "task_id": "a", "sample": 0, "status": "compile_error", "error_line": 7},
        {**base, "task_id": "b", "sample": 0, "status": "wrong_result", "compiled": True, "error_line": None},
        {**base, "task_id": "c", "sample": 0, "status": "correct", "compiled": True, "correct": True},
        {**base, "task_id": "d", "sample": 0, "status": "timeout", "code": ""},
    ])
    report = run_failures(run)
    assert report["candidates"] == 4 and report["failed"] == 3
    assert report["located_in_cuda"] == 2 and report["unlocated"] == 1
    assert report["by_how"] == {"error line": 1, "output stores": 1}
    assert {r["task_id"]: r["lines"] for r in report["failures"]} == {"a": [7], "b": [8], "d": []}
    assert 0.0 <= report["overall"]["chance"] <= 1.0
    assert "2 task(s) not in the run's suite 'bundled' (a, b)" in report["note"]  # hand-made tasks: scored without a prompt
    empty = store.create_run(label="reference", model="default", method="reference", config={"solutions": "reference"})
    with pytest.raises(ValueError, match="pass --model"):
        run_failures(empty)  # "default" did not write the suite's solutions
    assert run_failures(empty, fallback="tiny")["model"] == "tiny"


def test_failures_figure_bars_are_the_shares_and_chances() -> None:
    from cuset.figures.analysis import failures_figure

    tagged = tag(CODE, "python")
    records = [{"task_id": "t1", "sample": 0, "status": "compile_error", "code": CODE, "error_line": 7},
               {"task_id": "t2", "sample": 0, "status": "runtime_error", "code": CODE, "error_line": 6}]
    stats = statistics(judge(records, [hand_scores(CODE, 7)] * 2, [tagged] * 2, ObjectiveConfig(threshold_mode="absolute", tau=0.5)))
    ax = failures_figure(stats).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([0.5, 1.0, 0.0, 1 / 6, 1 / 6, 1 / 6])  # observed: all, compile, runtime; then chance
