"""The validation split: held-out samples are never trained on, and their NLL is the plain
mean over the trained positions, checked against the model's own loss."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cuset import models
from cuset.confidence import ScoreConfig, render
from cuset.data import load
from cuset.train import FineTune, TrainConfig
from cuset.train.heldout import heldout_nll, heldout_positions, heldout_split


def test_the_split_is_disjoint_spread_and_refuses_to_hold_out_everything():
    held, rest = heldout_split(10, 3)
    assert held.tolist() == [0, 4, 9]  # evenly spread (cuset.train.data.spread_subset)
    assert sorted(held.tolist() + rest.tolist()) == list(range(10)) and not set(held) & set(rest)
    assert heldout_split(10, 0)[0].size == 0 and heldout_split(10, 0)[1].tolist() == list(range(10))
    with pytest.raises(ValueError, match="holdout=10 keeps every one of the 10 samples"):
        heldout_split(10, 10)


def test_heldout_nll_is_the_mean_nll_of_the_trained_positions():
    model, tokenizer, resolved = models.load("tiny")
    fingerprint = resolved.fingerprint
    samples = load("bundled")[:2]
    config = ScoreConfig(model="tiny", max_length=4096)
    rendered = [render(s, tokenizer, config, fingerprint) for s in samples]
    figures = heldout_nll(model, rendered, ids=[s.id for s in samples])
    # by hand: the causal LM's own loss with labels only at the trained positions (response
    # tokens after position 0, plus the end-of-turn token), summed over both samples
    total, count = 0.0, 0
    for item in rendered:
        cols = heldout_positions(item)
        ids = torch.tensor([item.input_ids])
        labels = torch.full_like(ids, -100)
        labels[0, cols] = ids[0, cols]
        with torch.no_grad():
            loss = model(input_ids=ids, labels=labels).loss
        total += float(loss) * len(cols)
        count += len(cols)
        assert int(cols[-1]) == int(np.flatnonzero(item.response_mask)[-1]) + 1  # the end-of-turn token counts
    assert figures["n_tokens"] == count and figures["n_samples"] == 2
    assert figures["nll"] == pytest.approx(total / count, rel=1e-5)
    assert set(figures["per_sample"]) == {s.id for s in samples}


def test_a_fine_tune_with_holdout_never_trains_on_them_and_records_their_nll(tmp_path):
    config = TrainConfig.from_preset("tiny", method="sft", max_steps=1, save_steps=100, holdout=4, max_samples=6)
    recipe = FineTune(config, tmp_path, log=lambda _: None)
    result = recipe.run()
    held = {s.id for s in recipe.heldout_samples}
    trained = {s.id for s in recipe.samples}
    assert len(held) == 4 and len(trained) == 6 and not held & trained
    heldout = json.loads((tmp_path / "result.json").read_text())["heldout"]
    assert heldout == result["heldout"] and set(heldout["per_sample"]) == held
    assert heldout["n_cut"] == 4  # the tiny preset cuts every bundled sample at 512 tokens
    assert 0 < heldout["nll"] < 20 and heldout["n_tokens"] > 0
    assert "heldout_s" in result
    no_holdout = FineTune(TrainConfig.from_preset("tiny", method="sft", max_steps=1, save_steps=100, max_samples=6), tmp_path / "b", log=lambda _: None)
    assert "heldout" not in no_holdout.run()


def test_holdout_must_not_be_negative():
    with pytest.raises(ValueError, match="holdout=-1"):
        TrainConfig.from_preset("tiny", holdout=-1)
