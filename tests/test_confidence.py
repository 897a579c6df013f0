"""Teacher-forced token scores: response-only, exact statistics, batching, cache, truncation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cuset.confidence import (
    ScoreConfig,
    TokenScores,
    TokenTable,
    category_stats,
    render,
    score_dataset,
    score_samples,
    token_categories,
)
from cuset.data import Sample
from cuset.sensitivity import CATEGORY_BIT, Span, Statement, TagResult

SAMPLES = [
    Sample(id="k1", instruction="Write a CUDA kernel that scales a vector.", response="__global__ void k(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= 2.f;\n}\n"),
    Sample(id="k2", instruction="Say hi", response="int main() { return 0; }"),
    Sample(id="k3", instruction="", response="x = 1\n"),
]


def test_response_tokens_cover_exactly_the_response(tiny):
    _, tokenizer, resolved = tiny
    for sample in SAMPLES:
        r = render(sample, tokenizer, ScoreConfig(model="tiny"), resolved.fingerprint)
        starts, ends = r.starts[r.response_mask], r.ends[r.response_mask]
        assert "".join(sample.response[a:b] for a, b in zip(starts, ends)) == sample.response
        assert not r.truncated


def test_statistics_match_a_direct_forward_pass(tiny):
    model, tokenizer, resolved = tiny
    config = ScoreConfig(model="tiny", top_k=3)
    scores, stats = score_samples(SAMPLES[:1], config, use_cache=False)
    r = render(SAMPLES[0], tokenizer, config, resolved.fingerprint)
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([r.input_ids])).logits[0]
    positions = np.flatnonzero(r.response_mask)
    logprobs = torch.log_softmax(logits[positions - 1].float(), -1)
    gold = torch.tensor(r.input_ids)[positions]
    expected_logp = logprobs.gather(1, gold[:, None]).squeeze(1).numpy()
    s = scores[0]
    assert len(s) == len(positions) == stats["n_tokens"]
    np.testing.assert_allclose(s.logp, expected_logp, atol=1e-4)
    np.testing.assert_allclose(s.p, np.exp(expected_logp), rtol=1e-3)
    entropy = -(logprobs.exp() * logprobs).sum(-1).numpy()
    np.testing.assert_allclose(s.entropy, entropy, atol=1e-4)
    rank = (logprobs > logprobs.gather(1, gold[:, None])).sum(-1).numpy() + 1
    # The tiny random model's logits are nearly uniform, so float noise between the batched and
    # the direct pass can swap near-ties: ranks agree up to a few places.
    assert (s.rank == rank).mean() > 0.9 and np.abs(s.rank - rank).max() <= 3
    assert s.topk_ids[:, 0].tolist() == logprobs.argmax(-1).tolist()
    assert (np.diff(s.topk_p, axis=1) <= 0).all()


def test_batched_scores_equal_one_by_one(tiny):
    together, _ = score_samples(SAMPLES, ScoreConfig(model="tiny", batch_size=3), use_cache=False)
    for sample, batched in zip(SAMPLES, together):
        alone, _ = score_samples([sample], ScoreConfig(model="tiny", batch_size=1), use_cache=False)
        assert batched.sample_id == sample.id
        np.testing.assert_allclose(batched.logp, alone[0].logp, atol=1e-4)


def test_cache_hits_return_the_same_scores(tiny):
    config = ScoreConfig(model="tiny", batch_size=2)
    first, stats1 = score_samples(SAMPLES, config)
    second, stats2 = score_samples(SAMPLES, config)
    assert stats2["cache_hits"] == len(SAMPLES) and stats1["cache_hits"] < len(SAMPLES)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.token_ids, b.token_ids)
        np.testing.assert_array_equal(a.topk_ids, b.topk_ids)
        np.testing.assert_allclose(a.p, b.p)
    changed = [Sample(id="k1", instruction=SAMPLES[0].instruction, response=SAMPLES[0].response + "// edit\n")]
    _, stats3 = score_samples(changed, config)
    assert stats3["cache_hits"] == 0


def test_long_samples_are_truncated_and_flagged(tiny):
    long = Sample(id="long", instruction="x", response="int a = 0;\n" * 200)
    scores, stats = score_samples([long], ScoreConfig(model="tiny", max_length=64), use_cache=False)
    assert scores[0].truncated and stats["n_truncated"] == 1
    assert 0 < len(scores[0]) < 64
    assert scores[0].ends.max() < len(long.response)


def test_a_prompt_longer_than_the_limit_leaves_no_scored_tokens(tiny):
    sample = Sample(id="long-prompt", instruction="word " * 200, response="__global__ void k() {}")
    scores, stats = score_samples([sample, SAMPLES[1]], ScoreConfig(model="tiny", max_length=80, batch_size=2), use_cache=False)
    assert len(scores[0]) == 0 and scores[0].truncated
    assert len(scores[1]) > 0 and stats["n_truncated"] == 1


def test_token_categories_handle_straddling_tokens():
    text = "if (i < n) x[i] = 0;"
    tagged = TagResult(
        text=text,
        spans=[Span(4, 9, "bounds_guard", "i < n"), Span(0, 2, "qualifier", "if")],
        statements=[Statement(0, len(text), "if", 0), Statement(11, 20, "expression", 1)],
        blocks=[],
        notes=[],
    )
    # Tokens: "if" [0,2), " (i" [2,5) straddles the guard's start, " <" [5,7), "n)" [8,10) straddles its end, " x" [10,12)
    starts = np.array([0, 2, 5, 8, 10], dtype=np.int32)
    ends = np.array([2, 5, 7, 10, 12], dtype=np.int32)
    scores = TokenScores("s", np.zeros(5, np.int32), starts, ends, *(np.zeros(5, np.float32) for _ in range(3)),
                         np.ones(5, np.int32), np.zeros((5, 1), np.int32), np.zeros((5, 1), np.float32))
    bits, stmt, kinds = token_categories(scores, tagged)
    guard, qual = CATEGORY_BIT["bounds_guard"], CATEGORY_BIT["qualifier"]
    assert bits.tolist() == [qual, guard, guard, guard, 0]
    assert stmt.tolist() == [0, 0, 0, 0, 1]


def test_score_dataset_builds_a_table_and_records_the_run(tiny):
    from cuset.workspace import Store

    scored = score_dataset(SAMPLES, ScoreConfig(model="tiny"), dataset_name="unit")
    assert scored.table.n_samples == 3
    assert scored.table.p.shape[0] == sum(len(s) for s in scored.scores)
    assert scored.table.sensitive[: len(scored.scores[0])].any()  # blockIdx etc. in k1
    runs = Store().rows("scoring_runs")
    assert runs[0]["dataset"] == "unit" and runs[0]["n_tokens"] == scored.stats["n_tokens"]
    rows = {r["category"]: r for r in category_stats(scored.table)}
    assert rows["any sensitive"]["tokens"] + rows["not sensitive"]["tokens"] == scored.stats["n_tokens"]
    assert rows["thread_index"]["tokens"] > 0


def test_empty_table_statistics():
    table = TokenTable.build([], [])
    assert table.n_samples == 0
    assert category_stats(table)[0]["tokens"] == 0


def test_bad_score_config():
    with pytest.raises(ValueError, match="max_length"):
        ScoreConfig(max_length=2)
