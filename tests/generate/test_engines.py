"""Engine pieces on literal tensors: nucleus sampling, left padding, stop tokens; engine choice."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from cuset.generate import EngineError, GenerateConfig, make_engine, nucleus_probs, pick_engine
from cuset.generate.engines import RowSampler, _completion, left_pad, stop_token_ids

P = torch.tensor([[0.5, 0.3, 0.15, 0.05]])


@pytest.mark.parametrize(
    ("top_p", "expected"),
    [
        (1.0, [0.5, 0.3, 0.15, 0.05]),
        (0.5, [1.0, 0.0, 0.0, 0.0]),  # the top token alone already holds 0.5
        (0.7, [0.625, 0.375, 0.0, 0.0]),
        (0.9, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0]),
        (0.01, [1.0, 0.0, 0.0, 0.0]),  # the top token is always kept
    ],
)
def test_nucleus_keeps_the_smallest_set_reaching_top_p(top_p, expected):
    torch.testing.assert_close(nucleus_probs(P.log(), 1.0, top_p), torch.tensor([expected]))


def test_temperature_divides_the_logits_and_wide_vocabularies_match_a_full_sort():
    torch.testing.assert_close(nucleus_probs(P.log(), 2.0, 1.0), P.sqrt() / P.sqrt().sum())
    logits = torch.randn(3, 5000, generator=torch.Generator().manual_seed(0)) * 2  # nucleus beyond the first 64
    probs = torch.softmax(logits / 0.7, -1)
    ranked, order = probs.sort(-1, descending=True)
    ranked = ranked.masked_fill(ranked.cumsum(-1) - ranked >= 0.9, 0.0)
    expected = torch.zeros_like(probs).scatter_(-1, order, ranked)
    torch.testing.assert_close(nucleus_probs(logits, 0.7, 0.9), expected / expected.sum(-1, keepdim=True))


def test_row_sampler_draws_each_row_from_its_own_seed():
    logits = torch.randn(1, 100, generator=torch.Generator().manual_seed(1))
    alone = [RowSampler([seed], 1.0, 1.0)(None, logits).argmax(-1).item() for seed in (5, 6)]
    together = RowSampler([5, 6], 1.0, 1.0)(None, logits.repeat(2, 1))
    assert together.argmax(-1).tolist() == alone
    assert torch.isinf(together).sum().item() == 2 * 99


def test_left_padding_right_aligns_rows():
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_a_reply_ends_at_its_first_stop_token(tiny):
    _, tokenizer, _ = tiny
    stops = stop_token_ids(tokenizer)
    assert {tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|im_start|>", "<|endoftext|>")} <= set(stops)
    hello = tokenizer("hello world", add_special_tokens=False).input_ids
    ended = _completion(hello + [2, 2, 2], set(stops), tokenizer, 0.5)
    assert (ended.token_ids, ended.text, ended.finish_reason) == (hello + [2], "hello world", "eos")
    cut = _completion(hello, set(stops), tokenizer, 0.5)
    assert (cut.token_ids, cut.finish_reason) == (hello, "length")


def test_the_prefill_gives_the_output_layer_contiguous_rows_for_frozen_weights():
    """A merged LoRA's weights do not require grad; then torch's matmul runs a strided 3-D input
    (logits_to_keep=1's last-position slice) as a bmm on a per-row copy of the output layer's
    weight (coder-1.5b at batch 49: ~23 GB). The loop hands lm_head contiguous rows instead, and
    the replies are those of logits_to_keep=1 (a row's own greedy continuation)."""
    from transformers import AutoModelForCausalLM

    from cuset import models
    from cuset.generate import TransformersEngine

    model = AutoModelForCausalLM.from_pretrained(models.resolve("tiny").source).eval().requires_grad_(False)
    seen = []
    model.lm_head.register_forward_hook(lambda module, args, out: seen.append((tuple(args[0].shape), args[0].is_contiguous())))
    engine = TransformersEngine(model, models.load_tokenizer("tiny")[0])
    prompts = [[1, 504, 2385, 28, 3012], [1, 504, 2385], [1, 9100, 198, 28]]
    replies = engine.decode(prompts, 3, None, torch.device("cpu"))
    assert seen[0] == ((3, 1, 64), True) and all(contiguous for _, contiguous in seen)
    for prompt, reply in zip(prompts, replies, strict=True):
        ids = list(prompt)
        with torch.inference_mode():
            for _ in range(3):
                ids.append(int(model(input_ids=torch.tensor([ids]), logits_to_keep=1).logits[0, -1].argmax()))
        expected = ids[len(prompt):]
        ends = [i for i, t in enumerate(expected) if t in engine.stops]
        assert reply == (expected[: ends[0] + 1] if ends else expected)


def test_auto_picks_transformers_here_and_vllm_fails_clearly_when_missing():
    if importlib.util.find_spec("vllm") is not None and torch.cuda.is_available():
        pytest.skip("vLLM and a GPU are present")
    assert pick_engine("auto") == "transformers"
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(EngineError, match=r"vLLM is not installed: `pip install vllm`.*engine='transformers'"):
            make_engine(GenerateConfig(model="tiny", engine="vllm"))


def test_reply_counter_reports_replies_as_they_end_and_stops_nothing():
    import torch

    from cuset.generate.engines import ReplyCounter

    seen = []
    counter = ReplyCounter([7, 9], done_before=4, total=10, progress=lambda d, n: seen.append((d, n)))
    steps = [[1, 2, 3], [7, 2, 3], [5, 2, 3], [5, 9, 7]]  # the last token of each row, step by step
    ids = torch.zeros((3, 0), dtype=torch.long)
    for step in steps:
        ids = torch.cat([ids, torch.tensor(step)[:, None]], dim=1)
        assert not counter(ids, None).any()
    assert seen == [(5, 10), (7, 10)]  # row 0 ended at step 2; rows 1 and 2 at step 4; row 0's later 5 changes nothing


def test_bfloat16_where_it_is_slow_is_said_not_swapped(monkeypatch, capsys):
    """A dtype is part of a recipe: on a CPU without fast bfloat16 the engine still loads in
    bfloat16, and says on stderr what that costs and what would be faster."""
    from cuset import bf16, models

    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    monkeypatch.delenv("CUSET_BF16_MATMULS", raising=False)
    assert models.slow_bf16_note("bfloat16", "cpu") == ""  # cuset.bf16 runs its products as float32 GEMMs
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")  # torch's own bf16 kernels: the slow case
    assert "avx512_bf16" in models.slow_bf16_note("bfloat16", "cpu")
    assert models.slow_bf16_note("float32", "cpu") == ""
    assert bool(models.slow_bf16_note("bfloat16", "cuda:0")) == (not (torch.cuda.is_available() and torch.cuda.is_bf16_supported()))
    engine = make_engine(GenerateConfig(model="tiny", dtype="bfloat16", device="cpu"))
    assert next(engine.model.parameters()).dtype == torch.bfloat16
    assert "generating in bfloat16 (dtype bfloat16), but this machine has no fast bfloat16" in capsys.readouterr().err
    make_engine(GenerateConfig(model="tiny", dtype="float32", device="cpu"))
    assert "bfloat16" not in capsys.readouterr().err
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: True)
    assert models.slow_bf16_note("bfloat16", "cpu") == ""


def test_bfloat16_generation_on_a_cpu_without_bf16_goes_through_float32_gemms(monkeypatch):
    """On such a CPU the engine decodes in bfloat16 through cuset.bf16 (one mode for all batches,
    the weights' float32 copies made once), and its greedy replies are torch's bf16 ones."""
    from cuset import bf16
    from cuset.generate.engines import Request, TransformersEngine

    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    monkeypatch.delenv("CUSET_BF16_MATMULS", raising=False)  # the suite may run under =native
    modes: list[bf16.Float32Matmuls] = []
    real_enter = bf16.Float32Matmuls.__enter__
    monkeypatch.setattr(bf16.Float32Matmuls, "__enter__", lambda self: modes.append(self) or real_enter(self))
    engine = TransformersEngine.load("tiny", "bfloat16", "cpu")
    requests = [Request(prompt_ids=[5 + i, 17, 42 + 3 * i, 9], seed=i) for i in range(5)]
    config = GenerateConfig(model="tiny", dtype="bfloat16", device="cpu", max_new_tokens=12, batch_size=2)
    ours = engine.run(requests, config)
    assert len(modes) == 1 and modes[0].calls > 0 and modes[0].cached > 0  # 3 batches, one mode
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")
    theirs = engine.run(requests, config)
    assert len(modes) == 1
    assert [c.token_ids for c in ours] == [c.token_ids for c in theirs]
