"""Region clustering: the vectorised methods against scikit-learn and hand cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering

from cuset.regions import REGION_KINDS, RegionConfig, extent_mask, find_regions
from cuset.sensitivity import CATEGORY_BIT, STATEMENT_KINDS


def run(candidate, sample, pos, bits=None, stmt=None, stmt_kind=None, p=None, **config):
    n = len(candidate)
    return find_regions(
        np.asarray(candidate, dtype=bool),
        np.asarray(sample, dtype=np.int32),
        np.asarray(pos, dtype=np.int32),
        np.asarray(p if p is not None else np.full(n, 0.2), dtype=np.float32),
        np.asarray(bits if bits is not None else np.full(n, CATEGORY_BIT["index_math"]), dtype=np.uint16),
        np.asarray(stmt if stmt is not None else np.full(n, -1), dtype=np.int32),
        np.asarray(stmt_kind if stmt_kind is not None else np.full(n, -1), dtype=np.int8),
        np.arange(n, dtype=np.int32),
        np.arange(n, dtype=np.int32) + 1,
        RegionConfig(**config),
    )


def test_gap_method_equals_sklearn_single_linkage():
    rng = np.random.default_rng(1)
    pos = np.arange(200)
    candidate = rng.random(200) < 0.3
    for max_gap in (0, 1, 3):
        regions = run(candidate, np.zeros(200), pos, max_gap=max_gap)
        members = pos[candidate]
        labels = AgglomerativeClustering(
            n_clusters=None, linkage="single", distance_threshold=max_gap + 1.5
        ).fit_predict(members[:, None].astype(float))
        assert len(regions) == len(set(labels))
        expected = sorted((int(members[labels == k].min()), int(members[labels == k].max())) for k in set(labels))
        assert sorted(zip(regions.tok_start.tolist(), regions.tok_end.tolist())) == expected


def test_regions_never_cross_samples():
    regions = run([1, 1, 1, 1], [0, 0, 1, 1], [3, 4, 0, 1], max_gap=5)
    assert regions.sample.tolist() == [0, 1]
    assert regions.size.tolist() == [2, 2]


def test_statement_method_groups_by_statement():
    # Positions 0,1 in statement 7 and 2 in statement 8: adjacent, but two statements.
    regions = run([1, 1, 1], [0, 0, 0], [0, 1, 2], stmt=[7, 7, 8], method="statement")
    assert regions.size.tolist() == [2, 1]
    gap = run([1, 1, 1], [0, 0, 0], [0, 1, 2], stmt=[7, 7, 8], method="gap")
    assert gap.size.tolist() == [3]


def test_dbscan_drops_isolated_tokens_as_noise():
    regions = run([1, 1, 0, 0, 0, 0, 1], [0] * 7, range(7), method="dbscan", max_gap=0, min_samples=2)
    assert regions.size.tolist() == [2]
    assert (regions.tok_start[0], regions.tok_end[0]) == (0, 1)


def test_min_size_and_mean_p():
    regions = run([1, 1, 0, 0, 0, 1], [0] * 6, range(6), p=[0.1, 0.3, 1, 1, 1, 0.2], max_gap=0, min_size=2)
    assert regions.size.tolist() == [2]
    assert regions.mean_p[0] == pytest.approx(0.2)


def test_kinds_dominant_category_and_constructs():
    guard, sync, loop, index = (CATEGORY_BIT[c] for c in ("bounds_guard", "sync", "loop_structure", "index_math"))
    if_kind, for_kind = STATEMENT_KINDS.index("if"), STATEMENT_KINDS.index("for")
    regions = run(
        [1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1],
        [0] * 11,
        range(11),
        bits=[guard | index, index, 0, 0, 0, loop, sync, 0, 0, 0, index],
        stmt_kind=[if_kind, if_kind, -1, -1, -1, for_kind, for_kind, -1, -1, -1, -1],
        max_gap=0,
    )
    assert regions.kind_names() == ["bounds guard", "reduction loop", "index math"]
    assert set(regions.kind_names()) <= set(REGION_KINDS)


def test_extent_mask_covers_token_ranges_per_sample():
    regions = run([0, 1, 0, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 0, 1, 2], max_gap=1)
    offsets = np.array([0, 4, 7])
    assert extent_mask(regions, offsets).tolist() == [False, True, True, True, True, True, True]


def test_empty_input():
    regions = run([0, 0], [0, 0], [0, 1])
    assert len(regions) == 0
    assert extent_mask(regions, np.array([0, 2])).tolist() == [False, False]


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="valid: gap, statement, dbscan"):
        RegionConfig(method="kmeans")
