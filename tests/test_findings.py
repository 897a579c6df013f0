"""The paper's two findings on hand-built token tables: shares by threshold, the permutation
baseline's draws, and a clustered vs a scattered data set."""

from __future__ import annotations

import numpy as np
import pytest

from cuset.confidence import TokenTable
from cuset.findings import clustering_test, confidence_shares, random_candidates
from cuset.objective import ObjectiveConfig
from cuset.sensitivity import CATEGORY_BIT


def table_of(p_rows: list[list[float]], bits_rows: list[list[int]]) -> TokenTable:
    lengths = [len(r) for r in p_rows]
    n = sum(lengths)
    return TokenTable(
        offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64),
        p=np.array([x for r in p_rows for x in r], dtype=np.float32),
        bits=np.array([b for r in bits_rows for b in r], dtype=np.uint16),
        stmt=np.full(n, -1, dtype=np.int32),
        stmt_kind=np.full(n, -1, dtype=np.int8),
        starts=np.arange(n, dtype=np.int32),
        ends=np.arange(n, dtype=np.int32) + 1,
    )


def test_confidence_shares_by_threshold():
    sync, guard = CATEGORY_BIT["sync"], CATEGORY_BIT["bounds_guard"]
    table = table_of([[0.95, 0.6, 0.2, 0.99, 0.4]], [[sync, sync, guard, 0, 0]])
    rows = {r["category"]: r for r in confidence_shares(table)}
    assert rows["sync"]["tokens"] == 2 and rows["sync"]["share_ge_0.5"] == 1.0 and rows["sync"]["share_ge_0.9"] == 0.5
    assert rows["bounds_guard"]["share_ge_0.5"] == 0.0
    assert rows["any sensitive"]["share_ge_0.5"] == pytest.approx(2 / 3) and rows["any sensitive"]["share_ge_0.9"] == pytest.approx(1 / 3)
    assert rows["not sensitive"]["share_ge_0.5"] == 0.5 and rows["not sensitive"]["share_ge_0.9"] == 0.5


def test_random_candidates_keep_counts_and_stay_sensitive():
    rng = np.random.default_rng(1)
    bits = [[1 if i % 3 else 0 for i in range(30)], [1 if i % 2 else 0 for i in range(20)]]
    table = table_of([[0.5] * 30, [0.5] * 20], bits)
    wanted = np.array([7, 10])  # the second sample has exactly 10 sensitive tokens: all of them
    seen = np.zeros(50)
    for _ in range(200):
        chosen = random_candidates(table, wanted, rng)
        assert np.array_equal(np.bincount(table.sample[chosen], minlength=2), wanted)
        assert table.sensitive[chosen].all()
        seen += chosen
    first = seen[:30][table.sensitive[:30]] / 200
    assert first.min() > 0.2 and first.max() < 0.5  # each of 20 sensitive tokens drawn ~7/20 of the time


def clustered_and_scattered(n_samples: int = 40) -> tuple[TokenTable, TokenTable]:
    """40 tokens per sample; sensitive at 0, 5, 10, 15 and 30-33 (8 tokens). Clustered: the
    low-confidence ones are 30-33 (one region of 4). Scattered: 0, 5, 10, 15 (four singles)."""
    sensitive = {0, 5, 10, 15, 30, 31, 32, 33}
    bits = [[CATEGORY_BIT["index_math"] if i in sensitive else 0 for i in range(40)]] * n_samples
    clustered = [[0.1 if i in (30, 31, 32, 33) else 0.9 for i in range(40)]] * n_samples
    scattered = [[0.1 if i in (0, 5, 10, 15) else 0.9 for i in range(40)]] * n_samples
    return table_of(clustered, bits), table_of(scattered, bits)


def test_clustering_beyond_chance_is_detected_and_scattering_is_not():
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5)
    clustered, scattered = clustered_and_scattered()
    hit = clustering_test(clustered, config, permutations=99, seed=0)
    assert hit.low_sensitive_tokens == 160 and hit.regions == 40 and hit.observed_share == 1.0
    # Hand computation of the baseline's mean: 4 of 8 positions drawn; a drawn token is a
    # single unless another drawn one is among the 30-33 block next to it. Its mean lies
    # well below 1, and no permutation reaches 1.0 over 40 samples.
    assert hit.baseline_mean < 0.8 and hit.p_value == pytest.approx(1 / 100)
    assert hit.regions_by_kind == {"index math": 40}
    miss = clustering_test(scattered, config, permutations=99, seed=0)
    assert miss.observed_share == 0.0 and miss.p_value == 1.0
    assert miss.baseline_mean == pytest.approx(hit.baseline_mean, abs=0.05)  # same null for both


def hand_result() -> dict:
    def confidence(sens05, other05, sens09, other09):
        return [{"category": "sync", "tokens": 10, "mean_p": 0.5, "median_p": 0.5, "share_ge_0.5": 0.7, "share_ge_0.9": 0.4},
                {"category": "any sensitive", "tokens": 100, "mean_p": 0.6, "median_p": 0.6, "share_ge_0.5": sens05, "share_ge_0.9": sens09},
                {"category": "not sensitive", "tokens": 300, "mean_p": 0.6, "median_p": 0.6, "share_ge_0.5": other05, "share_ge_0.9": other09}]

    def clustering(observed, p_value):
        return {"low_sensitive_tokens": 40, "regions": 12, "observed_share": observed, "baseline_mean": 0.5, "baseline_sd": 0.05,
                "baseline_q95": 0.58, "p_value": p_value, "permutations": 4, "regions_by_kind": {"bounds guard": 7, "sync": 5},
                "baseline_shares": [0.45, 0.5, 0.5, 0.55]}

    return {"data": "bundled", "permutations": 4, "models": [
        {"model": "small", "title": "Small-Instruct", "samples": 10, "of_samples": 10, "every": 1, "tokens": 400, "dtype": "float32",
         "fingerprint": "x", "confidence": confidence(0.45, 0.6, 0.2, 0.3), "clustering": clustering(0.52, 0.4)},
        {"model": "coder", "title": "Coder-Instruct", "samples": 5, "of_samples": 10, "every": 2, "tokens": 400, "dtype": "bfloat16",
         "fingerprint": "y", "confidence": confidence(0.8, 0.7, 0.5, 0.4), "clustering": clustering(0.75, 0.2)},
    ]}


def test_model_frames_and_the_figure_from_a_findings_file(tmp_path):
    from cuset.figures.findings import findings_caption, findings_figure, findings_rows
    from cuset.findings import model_frames, read_results, write_results

    written = write_results(hand_result(), tmp_path)
    assert sorted(p.name for p in written) == ["by_category.csv", "clustering.csv", "findings.json"]
    result = read_results(tmp_path)
    frames = model_frames(result)
    summary = frames["summary"].set_index("model")
    assert not summary.loc["Small-Instruct", "(a) holds"] and summary.loc["Coder-Instruct", "(a) holds"]
    assert summary.loc["Coder-Instruct", "samples"] == "5 / 10" and summary.loc["Coder-Instruct", "p-value"] == 0.2
    assert frames["kinds"].loc["bounds guard", "Small"] == 7 and frames["categories"].loc["synchronisation", "Coder"] == 0.7
    rows = findings_rows(result)
    assert [r["observed"] for r in rows] == [0.52, 0.75] and rows[1]["baseline"].tolist() == [0.45, 0.5, 0.5, 0.55]
    fig = findings_figure(result)
    assert len(fig.axes) == 2 and "Coder-Instruct: sensitive 80.0% vs other 70.0%" in findings_caption(result)


def test_no_low_confidence_sensitive_token_gives_no_p_value():
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.05)  # every p is 0.1 or 0.9: nothing is low
    clustered, _ = clustered_and_scattered(4)
    result = clustering_test(clustered, config, permutations=20)
    assert result.low_sensitive_tokens == 0 and result.permutations == 0
    assert np.isnan(result.p_value) and np.isnan(result.observed_share) and np.isnan(result.baseline_mean)


def test_candidates_dropped_by_min_size_count_as_unclustered():
    from cuset.regions import RegionConfig

    clustered, scattered = clustered_and_scattered(10)
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5, regions=RegionConfig(min_size=2))
    assert clustering_test(clustered, config, permutations=5).observed_share == 1.0
    assert clustering_test(scattered, config, permutations=5).observed_share == 0.0  # four singles dropped: not "all clustered"
