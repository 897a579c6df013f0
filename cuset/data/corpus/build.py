"""Assemble the bundled corpus: number every template's specs, render samples, write the files.

    python -m cuset.data.corpus            # regenerate cuset/data/bundled/{corpus.jsonl,split.json}
    python -m cuset.data.corpus --check    # exit 1 if the shipped files differ from the generator

The output is a pure function of the templates (no clock, no randomness, sorted JSON keys), so a
rerun is byte-identical and `--check` can guard the shipped files in CI.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuset.data.corpus import (
    counting,
    elementwise,
    fused,
    histogram,
    matmul,
    matvec,
    reduction,
    reduction_all,
    scan,
    scan_vector,
    softmax_norm,
    softmax_variants,
    transpose,
)
from cuset.data.corpus.kernelbench import Spec, render_instruction, render_response
from cuset.data.schema import Sample

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "bundled"
CORPUS_PATH = BUNDLED_DIR / "corpus.jsonl"
SPLIT_PATH = BUNDLED_DIR / "split.json"

# Each family's template modules, in order. The order fixes sample order and ids: append new
# templates at the end of a family, and new families at the end, to keep existing ids stable.
FAMILIES: dict[str, tuple[Callable[[], list[Spec]], ...]] = {
    "elementwise": (elementwise.specs,),
    "reduction": (reduction.specs, reduction_all.specs),
    "softmax_norm": (softmax_norm.specs, softmax_variants.specs),
    "scan": (scan.specs, scan_vector.specs),
    "matmul": (matmul.specs, matvec.specs),
    "transpose": (transpose.specs,),
    "histogram": (histogram.specs, counting.specs),
    "fused": (fused.specs,),
}

# Families the corpus must never contain, so that an evaluation suite can measure generalisation
# to kernels the model was not fine-tuned on. The keywords are op names whose appearance in a
# task or response would leak one of them into training data.
HELD_OUT_FAMILIES: dict[str, tuple[str, ...]] = {
    "convolution": ("conv1d", "conv2d", "conv3d", "convolution", "conv_transpose"),
    "pooling": ("max_pool", "avg_pool", "maxpool", "avgpool", "adaptive_avg", "pooling"),
    "sorting": ("bitonic", "topk", "argsort", "torch.sort", "radix_sort", "merge_sort"),
    "gather_scatter": ("embedding", "index_select", "scatter", "gather", "index_add", "index_put", "take_along_dim"),
}


def _sample_id(spec: Spec, index: int) -> str:
    style = spec.styles[0].replace("-", "")
    return f"{spec.family}-{spec.op.replace('_', '')}-{style}-{index:03d}"


def build_samples() -> list[Sample]:
    """Every corpus sample, in family order then template order, ids numbered per family."""
    samples: list[Sample] = []
    for family, makers in FAMILIES.items():
        for index, spec in enumerate(spec for make in makers for spec in make()):
            if spec.family != family:
                raise ValueError(f"{spec.template}: family {spec.family!r} listed under {family!r}.")
            samples.append(
                Sample(
                    id=_sample_id(spec, index),
                    instruction=render_instruction(spec.task, spec.hint, len(samples)),
                    response=render_response(spec),
                    family=spec.family,
                    style=spec.styles,
                    task=spec.task,
                    meta={"template": spec.template, "params": spec.params, "functions": list(spec.functions)},
                )
            )
    ids = [s.id for s in samples]
    dupes = sorted(i for i, c in Counter(ids).items() if c > 1)
    if dupes:
        raise ValueError(f"duplicate sample ids: {dupes}")
    return samples


def split_summary(samples: list[Sample]) -> dict[str, Any]:
    """The contents of split.json: which families are in the corpus and which are held out."""
    by_style: Counter[str] = Counter(style for s in samples for style in s.style)
    return {
        "train_families": list(FAMILIES),
        "held_out_families": list(HELD_OUT_FAMILIES),
        "n_samples": len(samples),
        "by_family": dict(sorted(Counter(s.family for s in samples).items())),
        "by_style": dict(sorted(by_style.items())),
        "generator": "python -m cuset.data.corpus",
        "note": (
            "Generated deterministically from the templates in cuset/data/corpus/. The held-out "
            "families (convolution, pooling, sorting, gather_scatter) appear nowhere in the corpus "
            "so that evaluation tasks from them measure generalisation to unseen kernel kinds."
        ),
    }


def render_files(samples: list[Sample] | None = None) -> dict[Path, str]:
    """The exact text of corpus.jsonl and split.json for the current templates."""
    samples = build_samples() if samples is None else samples
    corpus = "".join(json.dumps(s.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for s in samples)
    split = json.dumps(split_summary(samples), indent=2, sort_keys=False) + "\n"
    return {CORPUS_PATH: corpus, SPLIT_PATH: split}


def write_files() -> dict[Path, str]:
    """Regenerate the shipped files; returns what was written."""
    files = render_files()
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return files


def stale_files() -> list[Path]:
    """Shipped files whose content differs from what the generator makes now."""
    return [
        path
        for path, text in render_files().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
