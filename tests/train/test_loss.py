"""Each method's training loss on a fixed batch of the tiny model, against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from cuset.confidence import ScoreConfig, render
from cuset.data import load
from cuset.objective import ObjectiveConfig
from cuset.train.data import Example, collate, scored_positions
from cuset.train.loss import LossSpec, objective_loss
from cuset.train.trainer import CusetTrainer

MAX_LENGTH = 360  # prompts are 240-470 tokens: some samples keep a short response, one none


@pytest.fixture(scope="module")
def fixed(tiny):
    """(model, batch, examples): three samples of different lengths, hand-set protected sets
    and weights, padded on the right."""
    model, tokenizer, resolved = tiny
    samples = load("bundled")[::70][:3]
    config = ScoreConfig(model="tiny", max_length=MAX_LENGTH)
    rng = np.random.default_rng(0)
    scope_rng = np.random.default_rng(1)  # its own stream, so the arrays above stay as they were
    examples = []
    for sample, weight in zip(samples, (0.5, 2.0, 1.25)):
        rendered = render(sample, tokenizer, config, resolved.fingerprint)
        length = len(rendered.input_ids) - 7 * len(examples)  # different lengths -> padding
        cols = scored_positions(rendered)
        cols = cols[cols < length]
        target = np.zeros(length, dtype=bool)
        target[cols] = True
        protected = target & (rng.random(length) < 0.5)
        keep = (target & (rng.random(length) < 0.7)).astype(np.float32)
        sensitive = target & (rng.random(length) < 0.3)
        ref_logp = np.where(target, np.log(rng.uniform(1e-5, 1e-3, length)), 0.0).astype(np.float32)
        always = np.zeros(length, dtype=bool)
        if len(examples) != 1:  # an end-of-turn-like token on the last target of two samples
            always[cols[-1]] = True
        in_cuda = target & (scope_rng.random(length) < 0.6)
        ids = np.asarray(rendered.input_ids[:length], dtype=np.int64)
        examples.append(Example(sample.id, ids, target, protected, keep, sensitive, weight, ref_logp, always, in_cuda))
    assert all(e.target.sum() > 5 for e in examples), "every sample needs response tokens within MAX_LENGTH"
    batch = collate(examples, tokenizer.pad_token_id)
    return model, batch, examples


def hand_token_nll(model, example: Example) -> tuple[np.ndarray, np.ndarray]:
    """(positions, -log p(gold)) of one example's targets, from its own unpadded forward pass
    and an explicit float64 softmax per position."""
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(example.input_ids)[None]).logits[0].double()
    positions = np.flatnonzero(example.target)
    probs = torch.softmax(logits[positions - 1], dim=-1).numpy()
    nll = [-math.log(probs[row, example.input_ids[t]]) for row, t in enumerate(positions)]
    return positions, np.array(nll)


@pytest.fixture(scope="module")
def nll_by_example(fixed):
    model, _, examples = fixed
    return [hand_token_nll(model, e) for e in examples]


def hand_loss(nll_by_example, examples: list[Example], method: str, config: ObjectiveConfig,
              threshold: float = 0.3, fraction: float = 0.6) -> float:
    """sum_i w_i sum_t max(m_it, eps) l_it / sum_i T_i, written out per sample and token (m
    only drops in-CUDA tokens under mask_scope cuda); ProFit's mean over the kept tokens;
    Rho-1's top-k by excess loss over the whole batch."""
    if method == "slm":
        nll = np.concatenate([n for _, n in nll_by_example])
        excess = np.concatenate([e.ref_logp[pos] for e, (pos, _) in zip(examples, nll_by_example)]) + nll
        excess[np.concatenate([e.always[pos] for e, (pos, _) in zip(examples, nll_by_example)])] = np.inf
        budget = math.ceil(fraction * len(nll))
        return float(nll[np.argsort(-excess, kind="stable")[:budget]].sum()) / (fraction * len(nll))
    total, count, kept = 0.0, 0, 0
    for example, (positions, nll) in zip(examples, nll_by_example):
        p = np.exp(-nll)
        count += len(positions)
        if method == "dft":
            total += float((p * nll).sum())
            continue
        if method == "profit":
            keep = (p > threshold) | example.always[positions]
            total += float(nll[keep].sum())
            kept += int(keep.sum())
            continue
        mask = np.ones(len(positions))
        if method in ("token-mask", "cuset"):
            if config.mask_mode == "static":
                mask = example.keep[positions].astype(float)
            else:
                threshold = np.sort(p)[int(math.floor(config.quantile * (len(p) - 1)))]
                low = p < threshold
                drop = low & ~(example.protected[positions] | example.always[positions])
                if config.mask_scope == "cuda":
                    drop &= example.in_cuda[positions]
                mask = (~drop).astype(float)
            mask = np.maximum(mask, config.floor)
        weight = example.weight if method in ("region-weight", "cuset") else 1.0
        total += weight * float((mask * nll).sum())
    return total / (kept if method == "profit" else count)


@pytest.mark.parametrize("method", ["cuset", "token-mask", "region-weight", "dft", "profit", "slm"])
def test_method_loss_matches_hand_computation(fixed, nll_by_example, method):
    model, batch, examples = fixed
    config = ObjectiveConfig(quantile=0.3)
    with torch.no_grad():
        loss, totals = objective_loss(model, batch, LossSpec(method, config))
    assert float(loss) == pytest.approx(hand_loss(nll_by_example, examples, method, config), rel=1e-5)
    if method == "slm":
        assert float(totals[3]) == math.ceil(0.6 * float(totals[2]))  # n_kept: the top 60%


def test_profit_threshold_and_slm_fraction_change_the_selection(fixed, nll_by_example):
    model, batch, examples = fixed
    config = ObjectiveConfig()
    tau = float(np.median(np.exp(-np.concatenate([nll for _, nll in nll_by_example]))))
    with torch.no_grad():
        profit, totals = objective_loss(model, batch, LossSpec("profit", config, profit_threshold=tau))
        slm, _ = objective_loss(model, batch, LossSpec("slm", config, slm_fraction=0.25))
    # The random tiny model gives p ~ 1/vocabulary: at the default 0.3 only the end-of-turn
    # tokens would pass, so tau is the batch's median p (about half the tokens kept).
    assert 0.1 * float(totals[2]) < float(totals[3]) < 0.9 * float(totals[2])
    assert float(profit) == pytest.approx(hand_loss(nll_by_example, examples, "profit", config, threshold=tau), rel=1e-5)
    assert float(slm) == pytest.approx(hand_loss(nll_by_example, examples, "slm", config, fraction=0.25), rel=1e-5)


def test_cuset_static_mask_uses_the_base_model_mask(fixed, nll_by_example):
    model, batch, examples = fixed
    for config in (ObjectiveConfig(mask_mode="static"), ObjectiveConfig(mask_mode="static", floor=0.25)):
        with torch.no_grad():
            loss, _ = objective_loss(model, batch, LossSpec("cuset", config))
        assert float(loss) == pytest.approx(hand_loss(nll_by_example, examples, "cuset", config), rel=1e-5)


@pytest.mark.parametrize("variant", [{"mask_scope": "cuda"}, {"floor": 0.2}, {"mask_scope": "cuda", "floor": 0.5}])
@pytest.mark.parametrize("method", ["cuset", "token-mask"])
def test_mask_scope_and_floor_match_hand_computation(fixed, nll_by_example, method, variant):
    model, batch, examples = fixed
    config = ObjectiveConfig(quantile=0.3, **variant)
    with torch.no_grad():
        loss, totals = objective_loss(model, batch, LossSpec(method, config))
        plain, plain_totals = objective_loss(model, batch, LossSpec(method, ObjectiveConfig(quantile=0.3)))
    assert float(loss) == pytest.approx(hand_loss(nll_by_example, examples, method, config), rel=1e-5)
    assert float(loss) != pytest.approx(float(plain), rel=1e-4)  # the variant changes the loss
    if "mask_scope" in variant:  # fewer tokens can be masked
        assert float(plain_totals[3]) < float(totals[3]) < float(totals[2])
    else:  # the floor keeps the 0/1 mask (the kept count) as it was
        assert float(totals[3]) == float(plain_totals[3])


def test_warmup_trains_plain_sft_then_the_objective(fixed, nll_by_example):
    """Through the loss the Trainer calls: optimizer steps 0..N-1 give sft's loss, step N on the objective's."""
    model, batch, examples = fixed
    spec = LossSpec("cuset", ObjectiveConfig(quantile=0.3, sft_warmup_steps=2))
    with torch.no_grad():
        sft, _ = objective_loss(model, batch, LossSpec("sft", ObjectiveConfig()))
        by_step = [objective_loss(model, batch, spec, step=step) for step in range(4)]
        without_step, _ = objective_loss(model, batch, spec)
    for loss, totals in by_step[:2]:
        assert float(loss) == float(sft) and float(totals[3]) == float(totals[2])  # nothing masked
        assert float(totals[4]) == 3.0  # w = 1 for each of the 3 samples
    cuset = hand_loss(nll_by_example, examples, "cuset", ObjectiveConfig(quantile=0.3))
    for loss, totals in by_step[2:]:
        assert float(loss) == pytest.approx(cuset, rel=1e-5) and float(totals[3]) < float(totals[2])
    assert float(without_step) == pytest.approx(cuset, rel=1e-5)


def test_the_trainer_passes_its_global_step_to_the_warmup(fixed, nll_by_example, tmp_path):
    from transformers import TrainingArguments

    model, batch, examples = fixed
    spec = LossSpec("cuset", ObjectiveConfig(quantile=0.3, sft_warmup_fraction=0.25))
    args = TrainingArguments(output_dir=str(tmp_path), report_to=[], use_cpu=True, per_device_train_batch_size=3)
    trainer = CusetTrainer(model=model, args=args, spec=spec)
    trainer.state.max_steps = 10  # warm-up ceil(0.25 * 10) = 3 steps
    sft = hand_loss(nll_by_example, examples, "sft", spec.objective)
    cuset = hand_loss(nll_by_example, examples, "cuset", spec.objective)
    with torch.no_grad():
        for step, expected in ((0, sft), (2, sft), (3, cuset), (9, cuset)):
            trainer.state.global_step = step
            assert float(trainer.compute_loss(model, batch)) == pytest.approx(expected, rel=1e-5), step


def test_the_mask_and_weights_change_the_loss(fixed, nll_by_example):
    """Guards the hand computations above against a batch where masking or weighting is a no-op."""
    _, _, examples = fixed
    config = ObjectiveConfig(quantile=0.3)
    values = {m: hand_loss(nll_by_example, examples, m, config) for m in ("sft", "token-mask", "region-weight", "cuset")}
    assert len({round(v, 6) for v in values.values()}) == 4


def test_sft_equals_the_plain_causal_lm_loss(fixed):
    model, batch, _ = fixed
    with torch.no_grad():
        ours, _ = objective_loss(model, batch, LossSpec("sft", ObjectiveConfig()))
        plain = model(input_ids=batch["input_ids"], labels=batch["labels"]).loss
    assert float(ours) == pytest.approx(float(plain), rel=1e-6)


def test_the_output_layer_gets_contiguous_rows_of_the_kept_positions_only(fixed):
    """At batch > 1 the int logits_to_keep slice is strided, which for frozen weights (a LoRA's
    lm_head) runs the output layer as a bmm on a per-row copy of its weight; the loss hands it
    the kept positions as contiguous rows instead."""
    model, batch, _ = fixed
    seen = []
    handle = model.lm_head.register_forward_hook(lambda module, args, out: seen.append((tuple(args[0].shape), args[0].is_contiguous())))
    try:
        with torch.no_grad():
            objective_loss(model, batch, LossSpec("sft", ObjectiveConfig()))
    finally:
        handle.remove()
    (rows, positions, _), contiguous = seen[0]
    first = int(batch["target"].any(dim=0).nonzero()[0, 0]) - 1
    assert (rows, positions, contiguous) == (3, batch["input_ids"].shape[1] - first, True) and first > 0


def test_loss_divides_by_the_accumulated_token_count(fixed):
    model, batch, _ = fixed
    n = int(batch["target"][:, 1:].sum())
    with torch.no_grad():
        own, _ = objective_loss(model, batch, LossSpec("cuset", ObjectiveConfig()))
        shared, totals = objective_loss(model, batch, LossSpec("cuset", ObjectiveConfig()), torch.tensor(4 * n))
    assert float(shared) == pytest.approx(float(own) / 4, rel=1e-6)
    assert float(totals[2]) == n  # n_targets counts this micro-batch only
