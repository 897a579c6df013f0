"""Data selection by region score (cuset.selection): order against hand-computed region scores
and weights, the size rule, the JSONL it writes, and the tiny model end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cuset.confidence import ScoreConfig, TokenScores, TokenTable, token_categories
from cuset.data import Sample, load
from cuset.objective import ObjectiveConfig, compute
from cuset.selection import rank, select_samples, selection_rows, selection_size, write_selection
from cuset.sensitivity import tag

TEXT = "int i = threadIdx.x;\nfloat v = 1.0f;\n"
PIECES = ["int", " i", " =", " threadIdx", ".x", ";\n", "float", " v", " =", " 1.0f", ";\n"]


def scores(low: dict[int, float]) -> TokenScores:
    cuts = np.cumsum([0] + [len(x) for x in PIECES])
    p = np.full(len(PIECES), 0.9, np.float32)
    for k, v in low.items():
        p[k] = v
    n = len(p)
    return TokenScores("s", np.arange(n, dtype=np.int32), cuts[:-1].astype(np.int32), cuts[1:].astype(np.int32), p, np.log(p),
                       np.zeros(n, np.float32), np.ones(n, np.int32), np.zeros((n, 1), np.int32), np.ones((n, 1), np.float32))


def test_order_against_hand_computed_scores() -> None:
    tagged = tag(TEXT)
    bits, _, _ = token_categories(scores({}), tagged)
    assert bits[3] and bits[4] and not bits[6]  # threadIdx and .x are sensitive, float is not
    # tau 0.5: A one region of 1 token (p 0.1), B one of 1 (p 0.4), C none (float is low but not
    # sensitive), D one region of 2 tokens (p 0.2, 0.3). T = 11 tokens each.
    per_sample = [scores({3: 0.1}), scores({3: 0.4}), scores({6: 0.1}), scores({3: 0.2, 4: 0.3})]
    samples = [Sample(id=x, instruction="", response=TEXT) for x in "ABCD"]
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5, w_max=1.5)
    result = compute(TokenTable.build(per_sample, [tagged] * 4), config, "cuset")
    hand_r = np.array([1 * 0.9, 1 * 0.6, 0.0, 2 * 0.75]) / 11
    np.testing.assert_allclose(result.r, hand_r, rtol=1e-6)
    # w = clip(1 + r / mean r, 0.5, 1.5) = clip([2.2, 1.8, 1.0, 3.0]) = [1.5, 1.5, 1.0, 1.5], over its mean 1.375.
    np.testing.assert_allclose(result.weights, np.array([1.5, 1.5, 1.0, 1.5]) / 1.375, rtol=1e-6)
    by_score = selection_rows(samples, result.r, result.weights, 1.0, "region_score")
    assert [r["id"] for r in by_score] == ["D", "A", "B", "C"]
    assert [r["rank"] for r in by_score] == [1, 2, 3, 4]
    assert by_score[0]["region_score"] == pytest.approx(1.5 / 11, rel=1e-6)
    by_weight = selection_rows(samples, result.r, result.weights, 1.0, "weight")
    assert [r["id"] for r in by_weight] == ["A", "B", "D", "C"]  # three tie at the clip: data-set order
    assert [r["id"] for r in selection_rows(samples, result.r, result.weights, 0.5)] == ["D", "A"]
    assert [r["id"] for r in selection_rows(samples, result.r, result.weights, 3)] == ["D", "A", "B"]


def test_selection_size_and_bad_values() -> None:
    assert [selection_size(t, 10) for t in (0.5, 0.25, 1.0, 0.01, 3, 40)] == [5, 3, 10, 1, 3, 10]
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="top="):
            selection_size(bad, 10)
    with pytest.raises(ValueError, match="region_score, weight"):
        rank(np.zeros(2), np.zeros(2), "loss")


def test_tiny_end_to_end_writes_loadable_jsonl(tmp_path) -> None:
    samples = load("bundled")[:4]
    rows = select_samples(samples, ScoreConfig(model="tiny"), ObjectiveConfig(), top=0.5)
    assert len(rows) == 2
    assert rows[0]["region_score"] >= rows[1]["region_score"]
    path = write_selection(rows, tmp_path / "sel.jsonl")
    back = load(str(path))
    assert [s.id for s in back] == [r["id"] for r in rows]
    assert back[0].response == next(s for s in samples if s.id == rows[0]["id"]).response
    meta = json.loads(path.read_text().splitlines()[0])["meta"]["cuset_select"]
    assert meta["rank"] == 1 and meta["by"] == "region_score" and meta["model"] == "tiny"


def test_experiment_trains_on_a_selection(tmp_path) -> None:
    from cuset.experiment import ExperimentConfig
    from cuset.experiment.runner import State, plan, unit_config

    data = tmp_path / "four.jsonl"
    data.write_text("".join(json.dumps(s.to_json()) + "\n" for s in load("bundled")[:4]))
    config = ExperimentConfig.from_dict({"name": "sel", "models": ["tiny"], "methods": ["sft"], "preset": "tiny",
                                         "train": {"data": str(data)}, "select": {"top": 0.5}}, "test")
    assert config.select == {"top": 0.5, "by": "region_score"}
    train_unit = next(u for u in plan(config) if u.kind == "train")
    cfg = unit_config(config, train_unit, State(tmp_path / "out" / "state.json"))
    chosen = load(cfg.data)
    expected = select_samples(load(str(data)), ScoreConfig(model="tiny", max_length=cfg.max_length), cfg.objective_config(), 0.5)
    assert cfg.data.startswith(str(tmp_path / "out" / "selections")) and [s.id for s in chosen] == [r["id"] for r in expected]
    with pytest.raises(ValueError, match="select has unknown keys"):
        ExperimentConfig.from_dict({"name": "x", "models": ["tiny"], "methods": ["sft"], "preset": "tiny", "select": {"fraction": 0.5}}, "test")
    with pytest.raises(ValueError, match="select.by='loss'"):
        ExperimentConfig.from_dict({"name": "x", "models": ["tiny"], "methods": ["sft"], "preset": "tiny", "select": {"top": 0.5, "by": "loss"}}, "test")
