"""Training examples aligned token for token with the base-model scores, and their batches.

Each sample is rendered exactly as scoring renders it (`cuset.confidence.render`, same
ScoreConfig), so the TokenTable's tokens of sample i are its response positions > 0, in order.
Per position the example carries what the loss needs:

    input_ids  [L] int64    prompt + response token ids (cut at max_length)
    target     [L] bool     trained-on positions: response tokens after position 0, and the
                            token that ends the turn (e.g. <|im_end|>) so the model learns to stop
    protected  [L] bool     the objective's protected set (region extents, or sensitive tokens)
    keep       [L] float32  the static mask from the base-model scores (1 = trained on)
    sensitive  [L] bool     CUDA-sensitive token (for the sensitive-vs-other NLL figures)
    ref_logp   [L] float32  the base model's log p(gold) from the cached scores (0 where none;
                            `slm`'s reference loss, read from the same table as the mask)
    always     [L] bool     trained on by every method's token selection: the end-of-turn token
    in_cuda    [L] bool     the token lies inside the sample's CUDA source (TokenTable.in_cuda):
                            under mask_scope `cuda` only these can be masked
    weight     float        the sample weight w_i

`placeholder_scores` stand in for the base-model scores of methods that need none (p = 1, so
ref_logp = 0). `collate` pads a list of examples on the right (no attention mask: under the causal mask a
real token never attends to the pads after it, so its logits are exact) and adds `labels` /
`shift_labels` (-100 outside targets), from which the Trainer counts `num_items_in_batch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuset.confidence import RenderedSample, TokenScores, TokenTable
from cuset.objective import ObjectiveResult

IGNORE = -100


@dataclass
class Example:
    """One training sample; arrays have shape [L] (see the module docstring)."""

    sample_id: str
    input_ids: np.ndarray
    target: np.ndarray
    protected: np.ndarray
    keep: np.ndarray
    sensitive: np.ndarray
    weight: float
    ref_logp: np.ndarray | None = None
    always: np.ndarray | None = None
    in_cuda: np.ndarray | None = None

    def __post_init__(self) -> None:
        length = self.input_ids.shape[0]
        if self.ref_logp is None:
            self.ref_logp = np.zeros(length, dtype=np.float32)
        if self.always is None:
            self.always = np.zeros(length, dtype=bool)
        if self.in_cuda is None:  # as TokenTable: without a tagger's word every token is CUDA
            self.in_cuda = np.ones(length, dtype=bool)

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def scored_positions(rendered: RenderedSample) -> np.ndarray:
    """The positions scoring scored (and training trains on): response tokens after position 0."""
    where = np.flatnonzero(rendered.response_mask)
    return where[where > 0]


def placeholder_scores(sample_id: str, rendered: RenderedSample) -> TokenScores:
    """TokenScores with p = 1 for methods that need no base-model scores (`sft`, `dft`): the
    TokenTable built from them still carries each token's sensitivity categories."""
    cols = scored_positions(rendered)
    n = cols.shape[0]
    ones = np.ones(n, dtype=np.float32)
    return TokenScores(
        sample_id=sample_id,
        token_ids=np.asarray(rendered.input_ids, dtype=np.int32)[cols],
        starts=rendered.starts[cols],
        ends=rendered.ends[cols],
        p=ones,
        logp=np.zeros(n, dtype=np.float32),
        entropy=np.zeros(n, dtype=np.float32),
        rank=np.ones(n, dtype=np.int32),
        topk_ids=np.zeros((n, 1), dtype=np.int32),
        topk_p=ones[:, None],
        truncated=rendered.truncated,
    )


def align_examples(ids: Sequence[str], rendered: Sequence[RenderedSample], table: TokenTable, result: ObjectiveResult) -> list[Example]:
    """Spread the flat per-token arrays of the table (ordered by sample, then position) onto
    each sample's token positions. Samples with no trained-on tokens (a prompt longer than
    max_length) are left out. Raises ValueError when a sample's token count differs from the
    table's, which means the scores came from another tokenizer, template or max_length."""
    if table.n_samples != len(rendered):
        raise ValueError(f"The token table has {table.n_samples} samples but {len(rendered)} were rendered; score the same samples you train on.")
    examples = []
    for index, item in enumerate(rendered):
        cols = scored_positions(item)
        begin, end = int(table.offsets[index]), int(table.offsets[index + 1])
        if end - begin != cols.shape[0]:
            raise ValueError(
                f"Sample {ids[index]!r}: {end - begin} scored tokens but {cols.shape[0]} response tokens after rendering; "
                "score and train with the same model, chat template and max_length."
            )
        if cols.shape[0] == 0:
            continue
        length = len(item.input_ids)
        target = np.zeros(length, dtype=bool)
        target[cols] = True
        protected = np.zeros(length, dtype=bool)
        protected[cols] = result.protected[begin:end]
        keep = np.zeros(length, dtype=np.float32)
        keep[cols] = result.mask[begin:end]
        ref_logp = np.zeros(length, dtype=np.float32)
        ref_logp[cols] = np.log(np.maximum(table.p[begin:end], 1e-30))
        always = np.zeros(length, dtype=bool)
        stop = int(cols[-1]) + 1
        if stop < length:  # the template's end-of-turn token: trained always, so the model learns to stop
            target[stop] = True
            keep[stop] = 1.0
            always[stop] = True
        sensitive = np.zeros(length, dtype=bool)
        sensitive[cols] = table.sensitive[begin:end]
        in_cuda = np.zeros(length, dtype=bool)
        in_cuda[cols] = table.in_cuda[begin:end]
        examples.append(
            Example(ids[index], np.asarray(item.input_ids, dtype=np.int64), target, protected, keep, sensitive,
                    float(result.weights[index]), ref_logp, always, in_cuda)
        )
    return examples


def collate(examples: Sequence[Example], pad_id: int) -> dict[str, Any]:
    """Right-padded batch tensors [B, L] (weight, n_tokens: [B]; shift_labels: [B, L-1])."""
    import torch

    width = max(len(e) for e in examples)
    batch = len(examples)
    input_ids = torch.full((batch, width), pad_id, dtype=torch.long)
    target = torch.zeros((batch, width), dtype=torch.bool)
    protected = torch.zeros((batch, width), dtype=torch.bool)
    keep = torch.zeros((batch, width), dtype=torch.float32)
    sensitive = torch.zeros((batch, width), dtype=torch.bool)
    ref_logp = torch.zeros((batch, width), dtype=torch.float32)
    always = torch.zeros((batch, width), dtype=torch.bool)
    in_cuda = torch.zeros((batch, width), dtype=torch.bool)
    for row, example in enumerate(examples):
        n = len(example)
        input_ids[row, :n] = torch.from_numpy(example.input_ids)
        target[row, :n] = torch.from_numpy(example.target)
        protected[row, :n] = torch.from_numpy(example.protected)
        keep[row, :n] = torch.from_numpy(example.keep)
        sensitive[row, :n] = torch.from_numpy(example.sensitive)
        ref_logp[row, :n] = torch.from_numpy(example.ref_logp)
        always[row, :n] = torch.from_numpy(example.always)
        in_cuda[row, :n] = torch.from_numpy(example.in_cuda)
    labels = torch.where(target, input_ids, torch.full_like(input_ids, IGNORE))
    return {
        "input_ids": input_ids,
        "labels": labels,
        "shift_labels": labels[:, 1:].contiguous(),
        "target": target,
        "protected": protected,
        "keep": keep,
        "sensitive": sensitive,
        "ref_logp": ref_logp,
        "always": always,
        "in_cuda": in_cuda,
        "weight": torch.tensor([e.weight for e in examples], dtype=torch.float32),
        "n_tokens": torch.tensor([len(e) for e in examples], dtype=torch.long),
    }


class ExampleDataset:
    """A map-style dataset over examples (what the Trainer's DataLoader samples from)."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> Example:
        return self.examples[index]


def spread_subset(n_total: int, n_keep: int) -> np.ndarray:
    """Indices of `n_keep` samples evenly spread over `n_total` (all when n_keep is 0 or
    larger): the bundled corpus is ordered by family, so a prefix would hold one family only."""
    if n_keep <= 0 or n_keep >= n_total:
        return np.arange(n_total)
    return np.unique(np.linspace(0, n_total - 1, n_keep).round().astype(np.int64))
