"""The fine-tuning recipe on the tiny model: token alignment with the scores, gradient
accumulation, and the files a run leaves behind."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import TrainerCallback

from cuset.confidence import ScoreConfig, render, score_samples
from cuset.data import load
from cuset.train import FineTune, TrainConfig, read_metrics
from cuset.train.data import spread_subset


class GradCapture(TrainerCallback):
    """Copies every parameter's gradient just before the first optimizer step."""

    def __init__(self) -> None:
        self.grads: dict[str, torch.Tensor] = {}
        self.checkpointing: bool | None = None

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        if not self.grads:
            self.grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
            self.checkpointing = any(getattr(m, "gradient_checkpointing", False) for m in model.modules())


def first_step_grads(tmp_path, batch_size: int, grad_accum: int, **fields) -> dict[str, torch.Tensor]:
    config = TrainConfig.from_preset("tiny", method="cuset", batch_size=batch_size, grad_accum=grad_accum, max_steps=1, save_steps=100, **fields)
    recipe = FineTune(config, tmp_path / f"{batch_size}x{grad_accum}{'-gc' if fields else ''}", log=lambda _: None)
    trainer = recipe.prepare()
    trainer.args.max_grad_norm = 0.0  # clipping would hide a difference in scale
    capture = GradCapture()
    trainer.add_callback(capture)
    trainer.train()
    capture.grads["checkpointing"] = torch.tensor(bool(capture.checkpointing))
    return capture.grads


def test_grad_accumulation_4x1_equals_1x4(tmp_path):
    """One step over the same 4 samples: one batch of 4, or 4 accumulated batches of 1
    (padding differs too), with the adaptive mask and per-sample weights of `cuset`."""
    whole = first_step_grads(tmp_path, 4, 1)
    accumulated = first_step_grads(tmp_path, 1, 4)
    assert whole.keys() == accumulated.keys() and whole
    for name, grad in whole.items():
        torch.testing.assert_close(accumulated[name], grad, rtol=1e-4, atol=1e-7, msg=name)
    halved = {n: g / 2 for n, g in whole.items()}  # the comparison notices a wrong scale
    assert not all(torch.allclose(halved[n], accumulated[n], rtol=1e-4, atol=1e-7) for n in whole)


def test_gradient_checkpointing_gives_the_same_gradients(tmp_path):
    """Recomputing the activations in the backward pass changes the memory, not the gradients."""
    plain = first_step_grads(tmp_path, 2, 1)
    recomputed = first_step_grads(tmp_path, 2, 1, gradient_checkpointing=True)
    assert not plain.pop("checkpointing") and recomputed.pop("checkpointing")  # the layers did recompute
    assert plain.keys() == recomputed.keys() and plain
    for name, grad in plain.items():
        torch.testing.assert_close(recomputed[name], grad, rtol=1e-5, atol=1e-8, msg=name)


def test_examples_align_token_for_token_with_the_scores(tmp_path):
    recipe = FineTune(TrainConfig.from_preset("tiny", method="cuset"), tmp_path, log=lambda _: None)
    recipe._setup_tokenizer()
    recipe._setup_data()
    recipe._check_lengths()
    recipe._score_base()
    recipe._setup_examples()
    scores, _ = score_samples(recipe.samples, recipe._score_config())  # cached by _score_base
    offsets = recipe.table.offsets
    for index, (example, score) in enumerate(zip(recipe.examples, scores)):
        np.testing.assert_array_equal(example.input_ids[example.target], score.token_ids)
        lo, hi = offsets[index], offsets[index + 1]
        np.testing.assert_array_equal(example.protected[example.target], recipe.objective.protected[lo:hi])
        np.testing.assert_array_equal(example.sensitive[example.target], recipe.table.sensitive[lo:hi])
        np.testing.assert_array_equal(example.in_cuda[example.target], recipe.table.in_cuda[lo:hi])
        assert not example.in_cuda[example.always].any()  # the end of turn is no CUDA
        assert example.weight == pytest.approx(recipe.objective.weights[index])
    assert recipe.objective.protected.any() and not recipe.objective.protected.all()
    assert recipe.table.in_cuda.any() and not recipe.table.in_cuda.all()  # load_inline samples: CUDA inside a Python wrapper


def test_a_tiny_run_writes_metrics_checkpoints_and_the_final_model(tmp_path):
    config = TrainConfig.from_preset("tiny", method="region-weight", max_steps=4, save_steps=2)
    result = FineTune(config, tmp_path, log=lambda _: None).run()
    rows = read_metrics(tmp_path / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    expected = {"loss", "nll", "masked_fraction", "weight_mean", "ess", "nll_sensitive", "nll_other", "tokens_per_s", "grad_norm", "lr"}
    assert expected <= rows[-1].keys()
    assert all(r["masked_fraction"] == 0.0 for r in rows)  # region-weight never masks
    assert rows[-1]["tokens"] == 2 * 512
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["checkpoint-2", "checkpoint-4"]
    # once final/ is saved the checkpoints keep their weights (for `cuset eval --checkpoint`), not the resume-only optimizer state
    for checkpoint in (tmp_path / "checkpoints").iterdir():
        names = {p.name for p in checkpoint.iterdir()}
        assert "trainer_state.json" in names and any(n.endswith(".safetensors") for n in names), names
        assert not names & {"optimizer.pt", "scheduler.pt"} and not any(n.startswith("rng_state") for n in names), names
    assert (tmp_path / "final" / "config.json").is_file()
    assert json.loads((tmp_path / "result.json").read_text())["steps"] == result["steps"] == 4
    assert result["final_loss"] == rows[-1]["loss"]
    # the tiny preset cuts at 512 tokens, where every bundled sample is longer: counted, not silent
    assert (result["data"]["n_cut"], result["data"]["n_dropped"], result["data"]["n_trained"]) == (8, 0, 8)
    assert json.loads((tmp_path / "data.json").read_text()) == result["data"]


def whole_lengths(config: TrainConfig, tokenizer, fingerprint: str) -> dict[str, int]:
    """Sample id -> tokens of prompt + response + end of turn, rendered without a limit."""
    samples = load("bundled")
    uncut = ScoreConfig(model=config.model, max_length=10**6)
    return {samples[i].id: len(render(samples[i], tokenizer, uncut, fingerprint).input_ids) for i in spread_subset(len(samples), config.max_samples)}


@pytest.mark.parametrize("overlength", ["drop", "cut"])
def test_samples_over_max_length_are_counted_then_dropped_or_cut(tmp_path, overlength):
    config = TrainConfig.from_preset("tiny", method="sft", max_samples=16, max_length=1400, overlength=overlength)
    recipe = FineTune(config, tmp_path, log=lambda _: None)
    recipe._setup_tokenizer()
    recipe._setup_data()
    recipe._check_lengths()
    lengths = whole_lengths(config, recipe.tokenizer, recipe.resolved.fingerprint)
    over = sorted(i for i, n in lengths.items() if n > 1400)
    assert 0 < len(over) < 16  # the median sample has ~1,424 tokens: some of each kind
    stats = json.loads((tmp_path / "data.json").read_text())
    assert sorted(stats["overlength_ids"]) == over and stats["n_overlength"] == len(over) and stats["n_selected"] == 16
    kept = {s.id for s in recipe.samples}
    if overlength == "drop":
        assert kept == set(lengths) - set(over) and stats["n_dropped"] == len(over) and stats["n_cut"] == 0
        assert not any(r.truncated for r in recipe.rendered)
        assert stats["longest_kept_tokens"] == max(n for n in lengths.values() if n <= 1400)
    else:
        assert kept == set(lengths) and stats["n_cut"] == len(over) and stats["n_dropped"] == 0
        assert sorted(s.id for s, r in zip(recipe.samples, recipe.rendered) if r.truncated) == over


def test_whole_samples_keep_their_end_of_turn_token(tmp_path):
    config = TrainConfig.from_preset("tiny", method="sft", max_samples=3, max_length=2112, overlength="drop")
    recipe = FineTune(config, tmp_path, log=lambda _: None)
    recipe._setup_tokenizer()
    recipe._setup_data()
    recipe._check_lengths()
    recipe._score_base()
    recipe._setup_examples()
    end = recipe.tokenizer.convert_tokens_to_ids("<|im_end|>")
    for example in recipe.examples:
        last = int(np.flatnonzero(example.target)[-1])
        assert example.input_ids[last] == end and example.always[last] and example.always.sum() == 1


def test_dropping_every_sample_says_how_to_fix_it(tmp_path):
    recipe = FineTune(TrainConfig.from_preset("tiny", max_length=256, overlength="drop"), tmp_path, log=lambda _: None)
    recipe._setup_tokenizer()
    recipe._setup_data()
    with pytest.raises(ValueError, match="raise max_length, or set overlength: cut"):
        recipe._check_lengths()


def test_bf16_on_a_cpu_without_bf16_products_trains_through_float32_gemms(tmp_path, monkeypatch):
    """The fine-tune's bf16 autocast on such a CPU runs its products as float32 GEMMs on the bf16
    values (cuset.bf16), says so in its log, and lands where torch's own bf16 kernels land."""
    from cuset import bf16

    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # trains on this CPU, GPU or not
    seen: list[bf16.Float32Matmuls] = []
    real = bf16.Float32Matmuls.__torch_dispatch__

    def counting(self, *args, **kwargs):
        if self not in seen:
            seen.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(bf16.Float32Matmuls, "__torch_dispatch__", counting)

    def run(name: str, native: bool) -> tuple[list[str], list[dict]]:
        if native:
            monkeypatch.setenv("CUSET_BF16_MATMULS", "native")
        else:
            monkeypatch.delenv("CUSET_BF16_MATMULS", raising=False)
        lines: list[str] = []
        config = TrainConfig.from_preset("tiny", method="sft", max_steps=2, save_steps=100, bf16=True)
        FineTune(config, tmp_path / name, log=lines.append).run()
        return lines, read_metrics(tmp_path / name / "metrics.jsonl")

    ours_log, ours = run("gemms", native=False)
    assert any(line.startswith("bf16: this CPU has no bfloat16 products") for line in ours_log), ours_log
    assert seen and seen[0].calls > 0
    count = len(seen)
    theirs_log, theirs = run("native", native=True)
    assert len(seen) == count  # CUSET_BF16_MATMULS=native: torch's kernels, no mode
    assert not any(line.startswith("bf16: this CPU") for line in theirs_log)
    for a, b in zip(ours, theirs, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=2e-2)
