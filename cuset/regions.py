"""Low-confidence CUDA-sensitive tokens clustered into regions.

A candidate is a response token that is CUDA-sensitive and low-confidence (the threshold is
cuset.objective's). Candidates close together belong to one region. Three methods:

    gap        single-linkage clustering over token position, vectorised over the whole data
               set: a new region starts where more than `max_gap` non-candidate tokens separate
               two candidates (identical to scikit-learn's single-linkage agglomerative
               clustering with distance threshold max_gap + 1; a test checks this)
    statement  candidates in the same innermost statement form one region (candidates outside
               any statement fall back to `gap`), vectorised
    dbscan     scikit-learn DBSCAN over positions per sample (eps = max_gap + 1, min_samples):
               isolated candidates become noise; a Python loop per sample, for exploration

Each region has its sample, token range (inclusive), character range, size (candidates in it),
mean confidence of those candidates and a kind (REGION_KINDS): the dominant sensitivity
category of its tokens, refined by the enclosing construct (a low-confidence region in a loop
header with a barrier, shuffle or atomic in it is a "reduction loop"; index tests in an `if` or
`return` are a "bounds guard").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuset.sensitivity import CATEGORIES, STATEMENT_KINDS

REGION_METHODS = ("gap", "statement", "dbscan")
KIND_OF_CATEGORY = {
    "bounds_guard": "bounds guard",
    "index_math": "index math",
    "thread_index": "thread indexing",
    "memory_space": "shared memory",
    "loop_structure": "loop structure",
    "sync": "synchronisation",
    "atomic": "atomic update",
    "warp_intrinsic": "warp shuffle",
    "launch_config": "launch configuration",
    "memory_api": "memory API",
    "intrinsic_math": "intrinsic math",
    "qualifier": "kernel qualifier",
}
REGION_KINDS: tuple[str, ...] = tuple(KIND_OF_CATEGORY[c] for c in CATEGORIES) + ("reduction loop",)
# When two categories are equally common in a region, the more execution-critical one names it.
PRIORITY = (
    "bounds_guard", "sync", "atomic", "warp_intrinsic", "loop_structure", "memory_space",
    "launch_config", "index_math", "thread_index", "intrinsic_math", "memory_api", "qualifier",
)


@dataclass
class RegionConfig:
    """How low-confidence sensitive tokens are grouped into regions."""

    method: str = field(default="gap", metadata={"help": f"One of {REGION_METHODS}."})
    max_gap: int = field(default=2, metadata={"help": "Most non-candidate tokens between two members of one region."})
    min_size: int = field(default=1, metadata={"help": "Regions with fewer candidate tokens are dropped."})
    min_samples: int = field(default=1, metadata={"help": "dbscan only: neighbours a core token needs (1 = no noise)."})

    def __post_init__(self) -> None:
        if self.method not in REGION_METHODS:
            raise ValueError(f"Unknown region method {self.method!r}; valid: {', '.join(REGION_METHODS)}.")
        if self.max_gap < 0 or self.min_size < 1 or self.min_samples < 1:
            raise ValueError("max_gap must be >= 0, min_size and min_samples >= 1.")


@dataclass
class Regions:
    """R regions as parallel arrays [R]; tok_start/tok_end are inclusive token positions
    within the sample's response, char_start/char_end a half-open range in its text."""

    sample: np.ndarray
    tok_start: np.ndarray
    tok_end: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray
    size: np.ndarray
    mean_p: np.ndarray
    kind: np.ndarray  # int8 index into REGION_KINDS

    def __len__(self) -> int:
        return int(self.sample.shape[0])

    def kind_names(self) -> list[str]:
        return [REGION_KINDS[k] for k in self.kind]


def _labels_gap(sample: np.ndarray, pos: np.ndarray, max_gap: int) -> np.ndarray:
    """Region label per candidate (candidates sorted by sample, then position)."""
    new = np.ones(sample.shape[0], dtype=bool)
    new[1:] = (sample[1:] != sample[:-1]) | (pos[1:] - pos[:-1] > max_gap + 1)
    return np.cumsum(new) - 1


def _labels_statement(sample: np.ndarray, pos: np.ndarray, stmt: np.ndarray, max_gap: int) -> np.ndarray:
    new = np.ones(sample.shape[0], dtype=bool)
    same_sample = sample[1:] == sample[:-1]
    same_stmt = (stmt[1:] == stmt[:-1]) & (stmt[1:] >= 0)
    both_outside = (stmt[1:] < 0) & (stmt[:-1] < 0) & (pos[1:] - pos[:-1] <= max_gap + 1)
    new[1:] = ~(same_sample & (same_stmt | both_outside))
    return np.cumsum(new) - 1


def _labels_dbscan(sample: np.ndarray, pos: np.ndarray, config: RegionConfig) -> np.ndarray:
    from sklearn.cluster import DBSCAN

    labels = np.full(sample.shape[0], -1, dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, sample[1:] != sample[:-1], True])
    next_label = 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        found = DBSCAN(eps=config.max_gap + 1, min_samples=config.min_samples).fit_predict(pos[lo:hi, None].astype(float))
        keep = found >= 0
        labels[lo:hi][keep] = found[keep] + next_label
        next_label += int(found.max()) + 1 if keep.any() else 0
    return labels


def find_regions(
    candidate: np.ndarray,
    sample: np.ndarray,
    pos: np.ndarray,
    p: np.ndarray,
    bits: np.ndarray,
    stmt: np.ndarray,
    stmt_kind: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: RegionConfig,
) -> Regions:
    """Cluster the candidate tokens of a whole data set into regions.

    All inputs are flat per-token arrays [N] ordered by (sample, position): candidate (bool),
    sample index, position in the response, gold probability, category bits, innermost statement
    index and kind (-1 outside) and character offsets.
    """
    idx = np.flatnonzero(candidate)
    c_sample, c_pos = sample[idx], pos[idx]
    if config.method == "gap":
        labels = _labels_gap(c_sample, c_pos, config.max_gap)
    elif config.method == "statement":
        labels = _labels_statement(c_sample, c_pos, stmt[idx], config.max_gap)
    else:
        labels = _labels_dbscan(c_sample, c_pos, config)
        keep = labels >= 0
        idx, labels = idx[keep], labels[keep]
        # Number clusters in position order, one label per contiguous run.
        labels = np.cumsum(np.r_[True, labels[1:] != labels[:-1]]) - 1 if labels.size else labels
    n_regions = int(labels.max()) + 1 if labels.size else 0
    size = np.bincount(labels, minlength=n_regions)
    first = np.zeros(n_regions, dtype=np.int64)
    last = np.zeros(n_regions, dtype=np.int64)
    if n_regions:
        # Candidates are sorted within each region, so its first/last member bound it.
        boundaries = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
        first[labels[boundaries]] = idx[boundaries]
        ends_at = np.r_[boundaries[1:], labels.size] - 1
        last[labels[ends_at]] = idx[ends_at]
    mean_p = np.bincount(labels, weights=p[idx], minlength=n_regions) / np.maximum(size, 1)
    kind = _kinds(labels, idx, bits, stmt_kind, n_regions)
    regions = Regions(
        sample=sample[first].astype(np.int32),
        tok_start=pos[first].astype(np.int32),
        tok_end=pos[last].astype(np.int32),
        char_start=starts[first].astype(np.int32),
        char_end=ends[last].astype(np.int32),
        size=size.astype(np.int32),
        mean_p=mean_p.astype(np.float32),
        kind=kind,
    )
    if config.min_size > 1:
        keep = regions.size >= config.min_size
        regions = Regions(**{name: getattr(regions, name)[keep] for name in regions.__dataclass_fields__})
    return regions


def _run_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of `values` [K, M] over the contiguous runs of columns beginning at `starts`,
    as [K, R]: differences of prefix sums along the contiguous last axis (a 2-D or per-row
    reduceat over ~10^5 short runs costs several times more)."""
    prefix = np.zeros((values.shape[0], values.shape[1] + 1), dtype=np.int32)
    np.cumsum(values, axis=1, out=prefix[:, 1:])
    ends = np.r_[starts[1:], values.shape[1]]
    return np.take(prefix, ends, axis=1) - np.take(prefix, starts, axis=1)


def _kinds(labels: np.ndarray, idx: np.ndarray, bits: np.ndarray, stmt_kind: np.ndarray, n_regions: int) -> np.ndarray:
    if not n_regions:
        return np.zeros(0, dtype=np.int8)
    # Members of a region are contiguous in `labels`, so per-region counts are differences of
    # prefix sums over the members' unpacked category bits (no pass per category).
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    unpacked = np.unpackbits(bits[idx].astype("<u2").view(np.uint8).reshape(-1, 2), axis=1, bitorder="little")
    counts = _run_sums(np.ascontiguousarray(unpacked[:, : len(CATEGORIES)].T), starts).T
    order = np.array([CATEGORIES.index(c) for c in PRIORITY])
    dominant = order[np.argmax(counts[:, order], axis=1)]
    kind = dominant.astype(np.int8)  # REGION_KINDS starts with one kind per category, same order
    has = counts > 0
    cat = {c: i for i, c in enumerate(CATEGORIES)}
    member_kind = stmt_kind[idx]
    loop = (member_kind == STATEMENT_KINDS.index("for")) | (member_kind == STATEMENT_KINDS.index("while"))
    guard = (member_kind == STATEMENT_KINDS.index("if")) | (member_kind == STATEMENT_KINDS.index("return"))
    in_loop, in_guard = _run_sums(np.stack([loop, guard]), starts) > 0
    coordinates = has[:, cat["sync"]] | has[:, cat["warp_intrinsic"]] | has[:, cat["atomic"]]
    kind[(has[:, cat["loop_structure"]] | in_loop) & coordinates] = REGION_KINDS.index("reduction loop")
    index_like = (dominant == cat["index_math"]) | (dominant == cat["thread_index"])
    kind[index_like & in_guard & has[:, cat["bounds_guard"]]] = REGION_KINDS.index("bounds guard")
    return kind


def extent_mask(regions: Regions, offsets: np.ndarray) -> np.ndarray:
    """bool [N]: the token lies within the token range of some region of its sample.

    `offsets` [S+1] are the flat start of each sample's tokens. A difference array over the
    flat positions marks all extents in O(N + R)."""
    n = int(offsets[-1])
    base = offsets[regions.sample]
    # Extents of one data set never overlap, so each start and each end+1 index is unique and
    # an int8 difference array filled by plain assignment suffices.
    diff = np.zeros(n + 1, dtype=np.int8)
    diff[base + regions.tok_start] += 1
    diff[base + regions.tok_end + 1] -= 1
    return np.cumsum(diff[:n], dtype=np.int8) > 0


def region_rows(regions: Regions, responses: list[str], ids: list[str], only_sample: int | None = None) -> list[dict]:
    """One dict per region for tables and JSON: sample id, kind, first/last line, token and
    character ranges, size, mean confidence and the region's text. `responses`/`ids` are
    indexed by `regions.sample`; `only_sample` keeps one sample's regions."""
    names = regions.kind_names()
    rows = []
    for i in range(len(regions)):
        s = int(regions.sample[i])
        if only_sample is not None and s != only_sample:
            continue
        text = responses[s]
        a, b = int(regions.char_start[i]), int(regions.char_end[i])
        first = text.count("\n", 0, a) + 1
        rows.append(
            {
                "region": i,
                "sample": ids[s],
                "kind": names[i],
                "lines": f"{first}-{first + text.count(chr(10), a, b)}" if text.count("\n", a, b) else str(first),
                "line": first,
                "tokens": [int(regions.tok_start[i]), int(regions.tok_end[i])],
                "chars": [a, b],
                "size": int(regions.size[i]),
                "mean_p": float(regions.mean_p[i]),
                "text": text[a:b],
            }
        )
    return rows
