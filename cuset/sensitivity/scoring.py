"""Precision and recall of `tag` against hand-labelled kernels.

Label format (``tests/sensitivity/labelled/<name>.labels`` next to ``<name>.cu|.py|.md``):
one entry per line, ``category<TAB>line<TAB>exact snippet[<TAB>occurrence]``; ``line`` is the
1-based line of the sample, ``occurrence`` (1-based, default 1) picks among repeats of the
snippet on that line; ``#`` starts a comment line. A label whose snippet is not on its line
is an error (the labels are checked, not trusted).

Matching rule (overlap, per category): a label is *recalled* when a predicted span of its
category overlaps it; a predicted span is *precise* when it overlaps a label of its category.
Overlap rather than exact offsets because experts disagree on span extents (``i < n`` vs
``(i < n)``) but not on where the sensitive code is. Micro averages pool all categories.

Run ``python -m cuset.sensitivity.scoring [folder]`` to print the table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from cuset.sensitivity.types import CATEGORIES, Span

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "tests" / "sensitivity" / "labelled"
SAMPLE_SUFFIXES = (".cu", ".cuh", ".cpp", ".py", ".md")


@dataclass(frozen=True)
class Label:
    """One hand-labelled snippet, located in the sample: ``[start, end)`` str offsets."""

    category: str
    line: int
    snippet: str
    start: int
    end: int


@dataclass
class Counts:
    """Per-category tallies: labels recalled of labels, predictions precise of predictions."""

    recalled: int = 0
    labels: int = 0
    precise: int = 0
    predicted: int = 0

    @property
    def precision(self) -> float:
        return self.precise / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.recalled / self.labels if self.labels else 1.0

    def add(self, other: Counts) -> None:
        self.recalled += other.recalled
        self.labels += other.labels
        self.precise += other.precise
        self.predicted += other.predicted


def parse_labels(text: str, labels_text: str, source: str = "labels") -> list[Label]:
    """Labels from ``.labels`` text, located in the sample ``text``; raises on a bad entry."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out: list[Label] = []
    for number, raw in enumerate(labels_text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) not in (3, 4) or parts[0] not in CATEGORIES:
            raise ValueError(
                f"{source}:{number}: expected category<TAB>line<TAB>snippet"
                f"[<TAB>occurrence] with a category from {CATEGORIES}, got {raw!r}"
            )
        category, line_no, snippet = parts[0], int(parts[1]), parts[2]
        occurrence = int(parts[3]) if len(parts) == 4 else 1
        line = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        col = -1
        for _ in range(occurrence):
            col = line.find(snippet, col + 1)
            if col < 0:
                raise ValueError(
                    f"{source}:{number}: snippet {snippet!r} (occurrence {occurrence}) is not on sample line {line_no}: {line!r}"
                )
        start = starts[line_no - 1] + col
        out.append(Label(category, line_no, snippet, start, start + len(snippet)))
    return out


def labelled_samples(folder: Path = DEFAULT_FOLDER) -> list[tuple[Path, str, list[Label]]]:
    """Every ``(sample path, sample text, labels)`` in ``folder``, sorted by name."""
    out = []
    for labels_path in sorted(folder.glob("*.labels")):
        samples = [labels_path.with_suffix(s) for s in SAMPLE_SUFFIXES]
        sample = next((p for p in samples if p.exists()), None)
        if sample is None:
            raise FileNotFoundError(f"{labels_path}: no sample beside it ({', '.join(SAMPLE_SUFFIXES)})")
        text = sample.read_text(encoding="utf-8")
        out.append((sample, text, parse_labels(text, labels_path.read_text(encoding="utf-8"), str(labels_path))))
    return out


def score(spans: list[Span], labels: list[Label]) -> dict[str, Counts]:
    """Per-category counts under the overlap rule (module docstring)."""
    counts = {c: Counts() for c in CATEGORIES}
    for category in CATEGORIES:
        preds = [(s.start, s.end) for s in spans if s.category == category]
        golds = [(g.start, g.end) for g in labels if g.category == category]
        c = counts[category]
        c.predicted, c.labels = len(preds), len(golds)
        c.precise = sum(any(s < ge and gs < e for gs, ge in golds) for s, e in preds)
        c.recalled = sum(any(s < ge and gs < e for s, e in preds) for gs, ge in golds)
    return counts


def evaluate(folder: Path = DEFAULT_FOLDER) -> dict[str, Counts]:
    """Counts summed over every labelled sample in ``folder``, plus a ``"micro"`` entry."""
    from cuset.sensitivity import tag

    total = {c: Counts() for c in CATEGORIES}
    for _path, text, labels in labelled_samples(folder):
        for category, c in score(tag(text).spans, labels).items():
            total[category].add(c)
    micro = Counts()
    for c in total.values():
        micro.add(c)
    total["micro"] = micro
    return total


def format_table(counts: dict[str, Counts]) -> str:
    """A fixed-width precision/recall table, one row per category."""
    rows = [f"{'category':<16}{'precision':>10}{'recall':>8}{'labels':>8}{'predicted':>11}"]
    for name, c in counts.items():
        rows.append(f"{name:<16}{c.precision:>10.3f}{c.recall:>8.3f}{c.labels:>8}{c.predicted:>11}")
    return "\n".join(rows)


if __name__ == "__main__":
    print(format_table(evaluate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_FOLDER)))
