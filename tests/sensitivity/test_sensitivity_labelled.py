"""Precision/recall against hand-labelled kernels, with floors so regressions fail.

``labelled/`` is the development set (the rules were written while looking at it);
``heldout/`` was labelled before the tagger ever ran on it, so its figures are the honest
estimate. Matching rule: `cuset.sensitivity.scoring`. Run with ``-s`` to see the tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cuset.sensitivity import CATEGORIES
from cuset.sensitivity.scoring import evaluate, format_table, labelled_samples, parse_labels, score

HERE = Path(__file__).parent
# (folder, per-category floor for categories with >= 3 labels, micro floor)
FLOORS = {"labelled": (0.9, 0.97), "heldout": (0.75, 0.93)}


@pytest.mark.parametrize("folder", sorted(FLOORS))
def test_precision_recall_floors(folder: str) -> None:
    counts = evaluate(HERE / folder)
    print(f"\n{folder}:\n{format_table(counts)}")
    per_category, micro = FLOORS[folder]
    for name in CATEGORIES:
        c = counts[name]
        if c.labels >= 3:
            assert c.recall >= per_category, f"{folder} {name} recall {c.recall:.3f} < {per_category}"
            assert c.precision >= per_category, f"{folder} {name} precision {c.precision:.3f} < {per_category}"
    assert counts["micro"].precision >= micro and counts["micro"].recall >= micro


def test_development_set_covers_the_required_shapes_and_every_category() -> None:
    samples = labelled_samples(HERE / "labelled")
    names = {p.stem for p, _, _ in samples}
    assert len(samples) >= 12
    assert {"kernelbench_solution", "markdown_answer", "cooperative_groups", "host_program"} <= names
    labelled = {label.category for _, _, labels in samples for label in labels}
    assert labelled == set(CATEGORIES)


def test_scoring_rule_on_a_literal_case() -> None:
    from cuset.sensitivity import Span

    text = "if (i < n) a[i] = 0;\n"
    labels = parse_labels(text, "bounds_guard\t1\ti < n\nindex_math\t1\ti\t3\n")
    assert [(g.start, g.end) for g in labels] == [(4, 9), (13, 14)]
    spans = [Span(3, 10, "bounds_guard", "(i < n)"), Span(0, 2, "bounds_guard", "if"), Span(13, 14, "sync", "i")]
    counts = score(spans, labels)
    assert (counts["bounds_guard"].precise, counts["bounds_guard"].predicted) == (1, 2)
    assert (counts["bounds_guard"].recalled, counts["bounds_guard"].labels) == (1, 1)
    assert (counts["index_math"].recalled, counts["sync"].precise) == (0, 0)


def test_bad_labels_are_rejected() -> None:
    with pytest.raises(ValueError, match="is not on sample line 1"):
        parse_labels("int x;\n", "index_math\t1\ty\n")
    with pytest.raises(ValueError, match="expected category"):
        parse_labels("int x;\n", "indexmath\t1\tx\n")
