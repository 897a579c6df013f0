"""Confidence diff (cuset.diff) on hand-built scores with known deltas, and the diverging heatmap."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from cuset import heatmap
from cuset.confidence import TokenScores, token_categories
from cuset.data import Sample
from cuset.diff import TokenizerMismatch, diff_table, difference_interval, group_rows, run_diff, sample_diff, summarise_diff
from cuset.objective import ObjectiveConfig
from cuset.sensitivity import CATEGORY_BIT, tag

TEXT = "int i = threadIdx.x;\nfloat v = 1.0f;\n"
PIECES = ["int", " i", " =", " threadIdx", ".x", ";\n", "float", " v", " =", " 1.0f", ";\n"]


def scores(p: list[float], logp: list[float], rank: list[int], ids: list[int] | None = None, sample_id: str = "s") -> TokenScores:
    cuts = np.cumsum([0] + [len(x) for x in PIECES])
    n = len(p)
    return TokenScores(sample_id, np.array(ids if ids is not None else range(n), np.int32), cuts[:-1].astype(np.int32), cuts[1:].astype(np.int32),
                       np.array(p, np.float32), np.array(logp, np.float32), np.zeros(n, np.float32), np.array(rank, np.int32),
                       np.zeros((n, 2), np.int32), np.full((n, 2), 0.5, np.float32))


P_A = [0.9, 0.9, 0.9, 0.1, 0.9, 0.9, 0.2, 0.9, 0.9, 0.9, 0.9]
LOGP_A = [float(np.log(x)) for x in P_A]
DELTA = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.5, 0.0, 0.0, -1.0, 0.0]  # threadIdx gains 2, float 0.5, 1.0f loses 1
RANK_A = [1, 1, 1, 9, 1, 1, 4, 1, 1, 1, 1]
RANK_B = [1, 1, 1, 2, 1, 1, 3, 1, 1, 5, 1]


def pair() -> tuple[TokenScores, TokenScores]:
    a = scores(P_A, LOGP_A, RANK_A)
    logp_b = [x + d for x, d in zip(LOGP_A, DELTA)]
    b = scores([float(np.exp(x)) for x in logp_b], logp_b, RANK_B)
    return a, b


def test_known_deltas_per_token_and_group() -> None:
    a, b = pair()
    tagged = tag(TEXT)
    diff = diff_table([a], [b], [tagged], "base", "tuned")
    np.testing.assert_allclose(diff.delta_logp, DELTA, atol=1e-6)
    assert diff.delta_rank.tolist() == [0, 0, 0, -7, 0, 0, -1, 0, 0, 4, 0]
    bits, _, _ = token_categories(a, tagged)
    sensitive = bits != 0
    assert sensitive[3]  # threadIdx
    rows = {r["category"]: r for r in group_rows(diff)}
    expected_sensitive = np.mean(np.array(DELTA)[sensitive])
    expected_other = np.mean(np.array(DELTA)[~sensitive])
    assert rows["any sensitive"]["tokens"] == int(sensitive.sum())
    assert rows["any sensitive"]["mean_delta_logp"] == pytest.approx(expected_sensitive, abs=1e-6)
    assert rows["not sensitive"]["mean_delta_logp"] == pytest.approx(expected_other, abs=1e-6)
    thread = (bits & CATEGORY_BIT["thread_index"]) != 0
    assert thread[3]
    assert rows["thread_index"]["mean_delta_logp"] == pytest.approx(np.mean(np.array(DELTA)[thread]), abs=1e-6)
    assert rows["thread_index"]["mean_delta_rank"] == pytest.approx(np.mean(np.array(diff.delta_rank)[thread]))

def test_summary_preserved_regions_vs_masked_tokens() -> None:
    a, b = pair()
    diff = diff_table([a], [b], [tag(TEXT)], "base", "tuned")
    # Absolute threshold 0.5: threadIdx (p 0.1, sensitive) is the only region; float (p 0.2, not sensitive) is masked.
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5)
    summary = summarise_diff(diff, [TEXT], ["s"], config, top=2, n_boot=200)
    pm = summary["preserved_vs_masked"]
    assert (pm["preserved_tokens"], pm["masked_tokens"]) == (1, 1)
    assert pm["preserved_mean_delta_logp"] == pytest.approx(2.0, abs=1e-6)
    assert pm["masked_mean_delta_logp"] == pytest.approx(0.5, abs=1e-6)
    assert pm["difference"] == pytest.approx(1.5, abs=1e-6)
    assert summary["regions"]["count"] == 1
    assert summary["regions"]["top_gained"][0]["text"] == " threadIdx"
    assert summary["regions"]["top_gained"][0]["mean_delta_logp"] == pytest.approx(2.0, abs=1e-6)
    assert [r["text"] for r in summary["top_gained_tokens"]] == [" threadIdx", "float"]
    assert summary["top_lost_tokens"][0]["text"] == " 1.0f"
    assert summary["top_lost_tokens"][0]["line"] == 2
    assert summary["overall"]["mean_delta_logp"] == pytest.approx(sum(DELTA) / len(DELTA), abs=1e-6)
    assert summary["overall"]["gained_share"] == pytest.approx(2 / 11)
    json.dumps(summary)  # JSON-ready


def test_difference_interval_by_hand() -> None:
    # Two samples: sample 0 first-group deltas [1, 3], second [0]; sample 1 first [2], second [1, 1].
    delta = np.array([1.0, 3.0, 0.0, 2.0, 1.0, 1.0])
    sample = np.array([0, 0, 0, 1, 1, 1])
    first = np.array([True, True, False, True, False, False])
    second = ~first
    point, low, high = difference_interval(delta, sample, first, second, 2, n_boot=500)
    assert point == pytest.approx(6 / 3 - 2 / 3)
    # Only three resamples exist: {0,0}: 2 - 0 = 2, {1,1}: 2 - 1 = 1, {0,1}: the point estimate.
    assert 1.0 - 1e-9 <= low <= point <= high <= 2.0 + 1e-9


def test_different_tokens_are_refused_naming_both_models() -> None:
    a, _ = pair()
    b = scores(P_A, LOGP_A, RANK_A, ids=[0, 1, 2, 99, 4, 5, 6, 7, 8, 9, 10])
    with pytest.raises(TokenizerMismatch, match=r"'smollm2-135m' and 'coder-0.5b'.*token 3"):
        diff_table([a], [b], [tag(TEXT)], "smollm2-135m", "coder-0.5b")
    short = scores(P_A[:5], LOGP_A[:5], RANK_A[:5])
    with pytest.raises(TokenizerMismatch, match="11 vs 5 tokens"):
        sample_diff(a, short, "A", "B")


def test_diverging_heatmap_centred_on_zero() -> None:
    a, b = pair()
    delta, notes = sample_diff(a, b, "base", "tuned")
    bits, _, _ = token_categories(a, tag(TEXT))
    page = heatmap.render(TEXT, a, bits, delta=delta, notes=notes)
    assert heatmap.diverging_level(np.array([0.0, 0.1, -3.0, 9.0, 2.0])).tolist() == [5, 5, 0, 10, 8]
    classes = re.findall(r'class="t (c\d+)[^"]*" data-i="(\d+)"', page)
    level = {int(i): c for c, i in classes}
    assert level[3] == "c8" and level[0] == "c5" and level[9] == "c3"  # +2, 0, -1 nats (ceiling 3)
    assert f".c8{{background:{heatmap.DIVERGING[8]}" in page and f".c5{{background:{heatmap.DIVERGING[5]}" in page
    data = json.loads(re.search(r'id="token-data">(.*?)</script>', page, re.S).group(1))
    assert data["notes"][3].startswith("base: p = 0.1000, rank 9\ntuned: p = 0.7389, rank 2\nΔ log p = +2.000")
    assert "Δ log p" in page and "≤ -3" in page
    plain = heatmap.render(TEXT, a, bits)
    assert "notes" not in json.loads(re.search(r'id="token-data">(.*?)</script>', plain, re.S).group(1))


def test_run_diff_tiny_against_itself_is_zero() -> None:
    samples = [Sample(id="k", instruction="Write a kernel.", response=TEXT)]
    diff, summary = run_diff(samples, "tiny", "tiny", ObjectiveConfig(), top=3)
    assert np.all(diff.delta_logp == 0) and np.all(diff.delta_rank == 0)
    assert summary["overall"]["tokens"] == len(diff.delta_logp) > 0
    assert summary["overall"]["mean_delta_logp"] == 0.0


def test_diff_figure_bars_are_the_summary_values() -> None:
    from cuset.figures.analysis import GAINED, LOST, diff_figure

    a, b = pair()
    summary = summarise_diff(diff_table([a], [b], [tag(TEXT)], "base", "tuned"), [TEXT], ["s"], ObjectiveConfig(threshold_mode="absolute", tau=0.5), n_boot=50)
    fig = diff_figure(summary)
    ax, ax_pm = fig.axes
    shown = [r for r in summary["by_category"] if r["tokens"]]
    assert [p.get_width() for p in ax.patches] == pytest.approx([r["mean_delta_logp"] for r in shown])
    assert [p.get_height() for p in ax_pm.patches] == pytest.approx([2.0, 0.5])
    assert "+1.50" in ax_pm.get_title(loc="left")
    from matplotlib.colors import to_hex

    assert {to_hex(p.get_facecolor()) for p in ax.patches} <= {GAINED, LOST}


def test_a_fine_tune_job_without_its_tokenizer_scores_through_a_merged_copy() -> None:
    import shutil

    from cuset import models
    from cuset.diff import score_config
    from cuset.jobs import job_folder
    from cuset.train.config import TrainConfig

    folder = job_folder(990)
    (folder / "final").mkdir(parents=True, exist_ok=True)
    TrainConfig.from_preset("tiny").save(folder / "config.yaml")
    source = models.resolve("tiny").source
    for name in ("config.json", "generation_config.json", "model.safetensors"):  # full weights, no tokenizer (as a checkpoint)
        shutil.copy(f"{source}/{name}", folder / "final" / name)
    config = score_config("job:990")
    assert "merged" in config.model and config.dtype == "float32"
    samples = [Sample(id="k", instruction="Write a kernel.", response=TEXT)]
    diff, summary = run_diff(samples, "tiny", "job:990")
    assert summary["model_b"] == "job:990" and np.allclose(diff.delta_logp, 0, atol=1e-5)  # the same weights
