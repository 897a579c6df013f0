"""Held-out NLL: how well a fine-tuned model predicts corpus samples it was not trained on.

A fine-tune with `holdout: N` keeps N samples (evenly spread over the data set, so every
family gives some) out of training. When it finishes, their plain mean NLL over every trained
position (the response tokens after position 0 and the end-of-turn token, as in training, with
no mask and no weight) goes to result.json under "heldout". It is the same figure for every
method, so it can choose between objective variants without looking at the test tasks
(issue 31: the validation split).

    heldout = heldout_positions(rendered)          # per sample: the positions scored
    figures = heldout_nll(model, rendered, bf16=True, ids=[s.id for s in samples])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cuset.confidence import RenderedSample
from cuset.train.data import scored_positions


def heldout_split(n_total: int, n_holdout: int) -> tuple[np.ndarray, np.ndarray]:
    """(held-out indices, the rest): `n_holdout` evenly spread over `n_total`. Raises
    ValueError when that leaves nothing to train on."""
    from cuset.train.data import spread_subset

    if n_holdout <= 0:
        return np.zeros(0, dtype=np.int64), np.arange(n_total)
    if n_holdout >= n_total:
        raise ValueError(f"holdout={n_holdout} keeps every one of the {n_total} samples out of training; hold out fewer.")
    held = spread_subset(n_total, n_holdout)
    return held, np.setdiff1d(np.arange(n_total), held)


def heldout_positions(rendered: RenderedSample) -> np.ndarray:
    """The positions whose token is predicted and counted: the response tokens after
    position 0, and the end-of-turn token right after the response (cuset.train.data)."""
    cols = scored_positions(rendered)
    if cols.shape[0] and int(cols[-1]) + 1 < len(rendered.input_ids):
        cols = np.append(cols, int(cols[-1]) + 1)
    return cols


def heldout_nll(model: Any, rendered: Sequence[RenderedSample], bf16: bool = False, ids: Sequence[str] = (),
                progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """{"n_samples", "n_tokens", "nll", "per_sample": {id: nll}} of `model` on `rendered`, one
    sample per forward pass, under bf16 autocast when `bf16`. NLL in nats per token."""
    import torch

    was_training = model.training
    model.eval()
    total, count, per_sample = 0.0, 0, {}
    try:
        for index, item in enumerate(rendered):
            cols = heldout_positions(item)
            if cols.shape[0] == 0:
                continue
            input_ids = torch.tensor([item.input_ids], dtype=torch.long)
            with torch.no_grad(), torch.autocast("cpu" if not torch.cuda.is_available() else "cuda", dtype=torch.bfloat16, enabled=bf16):
                logits = model(input_ids=input_ids.to(model.device)).logits[0].float()
            logp = torch.log_softmax(logits, dim=-1)
            at = torch.from_numpy(cols).long()
            nll = -logp[at - 1, input_ids[0, at].to(logp.device)]
            sample_sum = float(nll.sum())
            total += sample_sum
            count += int(at.shape[0])
            per_sample[ids[index] if index < len(ids) else str(index)] = round(sample_sum / int(at.shape[0]), 5)
            if progress is not None:
                progress(index + 1, len(rendered))
    finally:
        model.train(was_training)
    return {"n_samples": len(per_sample), "n_tokens": count, "nll": total / count if count else math.nan, "per_sample": per_sample}
