"""The CuSeT objective against hand computations (DESIGN.md, "The CuSeT objective")."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from cuset.confidence import TokenScores, TokenTable, token_in_code
from cuset.objective import (
    ObjectiveConfig,
    batch_low_confidence,
    compute,
    cuset_loss,
    dft_loss,
    effective_sample_size,
    low_confidence,
    maskable_tokens,
    profit_loss,
    profit_mask,
    region_scores,
    resolved_warmup_steps,
    sample_weights,
    slm_loss,
    slm_mask,
    token_mask,
    warmup_active,
)
from cuset.regions import REGION_KINDS, RegionConfig, Regions
from cuset.sensitivity import CATEGORY_BIT, tag

G = CATEGORY_BIT["bounds_guard"]
IX = CATEGORY_BIT["index_math"]


def table(ps: list[list[float]], bits: list[list[int]], in_cuda: list[list[bool]] | None = None) -> TokenTable:
    lengths = [len(p) for p in ps]
    n = sum(lengths)
    flat_p = np.array([x for row in ps for x in row], dtype=np.float32)
    return TokenTable(
        offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64),
        p=flat_p,
        bits=np.array([b for row in bits for b in row], dtype=np.uint16),
        stmt=np.full(n, -1, dtype=np.int32),
        stmt_kind=np.full(n, -1, dtype=np.int8),
        starts=np.arange(n, dtype=np.int32),
        ends=np.arange(n, dtype=np.int32) + 1,
        in_cuda=None if in_cuda is None else np.array([x for row in in_cuda for x in row], dtype=bool),
    )


def test_absolute_threshold_is_strict():
    t = table([[0.1, 0.5, 0.9]], [[0, 0, 0]])
    low = low_confidence(t, ObjectiveConfig(threshold_mode="absolute", tau=0.5))
    assert low.tolist() == [True, False, False]


def test_quantile_threshold_is_per_sample():
    # Sample 0 sorted: .1 .2 .3 .4 .5; q=0.5 -> index floor(0.5*4)=2 -> threshold .3 -> {.1,.2} low.
    # Sample 1 sorted: .6 .7 .8; q=0.5 -> index 1 -> threshold .7 -> {.6} low, though all are high.
    t = table([[0.5, 0.1, 0.4, 0.2, 0.3], [0.8, 0.6, 0.7]], [[0] * 5, [0] * 3])
    low = low_confidence(t, ObjectiveConfig(threshold_mode="quantile", quantile=0.5))
    assert low.tolist() == [False, True, False, True, False, False, True, False]


def test_token_mask_policies():
    low = np.array([True, True, False, False])
    sensitive = np.array([True, False, True, False])
    protected = np.array([False, True, False, False])
    assert token_mask(low, sensitive, protected, "protect_regions").tolist() == [0, 1, 1, 1]
    assert token_mask(low, sensitive, protected, "protect_sensitive").tolist() == [1, 0, 1, 1]
    assert token_mask(low, sensitive, protected, "none").tolist() == [1, 1, 1, 1]


def test_token_mask_scope_leaves_the_wrapper_trained():
    # token     0 `x=`  1 `"""`  2 `if (i < n)`  3 `a[i]`  4 `;`  5 `load`
    # low        yes      no        yes            yes      no    yes
    # sensitive  no       no        yes            no       no    no
    # protected  no       no        yes (region)   no       no    no
    # in CUDA    no       no        yes            yes      yes   no
    low = np.array([True, False, True, True, False, True])
    sensitive = np.array([False, False, True, False, False, False])
    protected = sensitive.copy()
    in_cuda = np.array([False, False, True, True, True, False])
    assert maskable_tokens(in_cuda, "all") is None
    assert token_mask(low, sensitive, protected, "protect_regions", maskable_tokens(in_cuda, "all")).tolist() == [0, 1, 1, 0, 1, 0]
    assert token_mask(low, sensitive, protected, "protect_regions", maskable_tokens(in_cuda, "cuda")).tolist() == [1, 1, 1, 0, 1, 1]
    assert token_mask(low, sensitive, protected, "none", maskable_tokens(in_cuda, "cuda")).tolist() == [1] * 6
    with pytest.raises(ValueError, match="valid: all, cuda"):
        maskable_tokens(in_cuda, "python")


def test_compute_under_mask_scope_and_the_outside_cuda_figures():
    # The 6 tokens above as a data set: absolute tau 0.5, token 2 a bounds guard (its own region).
    t = table([[0.1, 0.9, 0.2, 0.3, 0.8, 0.1]], [[0, 0, G, 0, 0, 0]], [[False, False, True, True, True, False]])
    everywhere = compute(t, ObjectiveConfig(threshold_mode="absolute", tau=0.5))
    assert everywhere.mask.tolist() == [0, 1, 1, 0, 1, 0]
    s = everywhere.stats
    # masked {0, 3, 5}; outside CUDA {0, 1, 5}, of which {0, 5} masked
    assert (s["masked_fraction"], s["outside_cuda_fraction"]) == pytest.approx((3 / 6, 3 / 6))
    assert (s["masked_fraction_outside_cuda"], s["masked_outside_cuda_share"]) == pytest.approx((2 / 3, 2 / 3))
    scoped = compute(t, ObjectiveConfig(threshold_mode="absolute", tau=0.5, mask_scope="cuda"))
    assert scoped.mask.tolist() == [1, 1, 1, 0, 1, 1]
    assert (scoped.stats["masked_fraction"], scoped.stats["masked_fraction_outside_cuda"], scoped.stats["masked_outside_cuda_share"]) == pytest.approx((1 / 6, 0, 0))
    # a table built without the flags counts every token as CUDA: scope cuda = scope all
    bare = table([[0.1, 0.9, 0.2, 0.3, 0.8, 0.1]], [[0, 0, G, 0, 0, 0]])
    assert compute(bare, ObjectiveConfig(threshold_mode="absolute", tau=0.5, mask_scope="cuda")).mask.tolist() == [0, 1, 1, 0, 1, 0]


def _split(text: str, pieces: list[str]) -> TokenScores:
    """TokenScores whose tokens are `pieces`, in order, covering `text` (p = 1)."""
    assert "".join(pieces) == text
    ends = np.cumsum([len(x) for x in pieces]).astype(np.int32)
    n = len(pieces)
    ones = np.ones(n, dtype=np.float32)
    return TokenScores("s", np.zeros(n, dtype=np.int32), ends - np.array([len(x) for x in pieces], dtype=np.int32), ends,
                       ones, np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32), np.ones(n, dtype=np.int32),
                       np.zeros((n, 1), dtype=np.int32), ones[:, None], False)


def test_token_in_code_finds_the_load_inline_string_and_the_fence_body():
    kernel = "__global__ void k(float* a) { a[0] = 1; }"
    pieces = ["import torch\n", "src", " =", ' """', kernel[:10], kernel[10:], '"""', "\n", "m", " = load", "_inline(cuda_sources=src)\n"]
    text = "".join(pieces)
    tagged = tag(text)
    assert [b.origin for b in tagged.blocks] == ["load_inline"]
    assert token_in_code(_split(text, pieces), tagged).tolist() == [False] * 4 + [True, True] + [False] * 5
    # a token that straddles the string's opening quotes is wrapper
    straddle = ["import torch\n", "src =", ' """__', kernel[2:], '"""\n', "m = load_inline(cuda_sources=src)\n"]
    assert token_in_code(_split("".join(straddle), straddle), tag("".join(straddle))).tolist() == [False, False, False, True, False, False]
    fenced = ["Here:\n", "```cuda\n", kernel, "\n", "```", "\n"]
    assert token_in_code(_split("".join(fenced), fenced), tag("".join(fenced))).tolist() == [False, False, True, True, False, False]
    plain = ["__global__", " void k(float* a)", " { a[0] = 1; }"]
    scores = _split("".join(plain), plain)
    assert TokenTable.build([scores], [tag("".join(plain))]).in_cuda.tolist() == [True] * 3


def _regions(sample, size, mean_p, kind) -> Regions:
    n = len(sample)
    zeros = np.zeros(n, dtype=np.int32)
    return Regions(
        sample=np.array(sample, dtype=np.int32), tok_start=zeros, tok_end=zeros, char_start=zeros,
        char_end=zeros, size=np.array(size, dtype=np.int32), mean_p=np.array(mean_p, dtype=np.float32),
        kind=np.array(kind, dtype=np.int8),
    )


def test_region_score_hand_computed():
    guard = REGION_KINDS.index("bounds guard")
    sync = REGION_KINDS.index("synchronisation")
    regions = _regions([0, 0, 2], [2, 4, 1], [0.25, 0.5, 0.0], [guard, sync, guard])
    kappa = np.ones(len(REGION_KINDS))
    kappa[sync] = 3.0
    r = region_scores(regions, np.array([10, 5, 4]), kappa)
    # r0 = (1*2*0.75 + 3*4*0.5) / 10 = 0.75; r1 = 0; r2 = 1*1*1 / 4 = 0.25
    assert r == pytest.approx([0.75, 0.0, 0.25])


def test_sample_weights_clip_then_renormalise():
    r = np.array([0.75, 0.0, 0.25])
    w = sample_weights(r, alpha=2.0, w_min=0.5, w_max=3.0)
    # mean r = 1/3: raw = 1 + 2*r/mean = [5.5, 1, 2.5] -> clip [3, 1, 2.5] -> / mean(6.5/3)
    expected = np.array([3.0, 1.0, 2.5]) / (6.5 / 3)
    assert w == pytest.approx(expected)
    assert w.mean() == pytest.approx(1.0)
    assert sample_weights(np.zeros(3), 2.0, 0.5, 3.0).tolist() == [1.0, 1.0, 1.0]


def test_effective_sample_size():
    assert effective_sample_size(np.ones(4)) == pytest.approx(4.0)
    assert effective_sample_size(np.array([2.0, 0.0, 0.0, 0.0])) == pytest.approx(1.0)


def test_compute_end_to_end_hand_case():
    # One sample, 6 tokens. Absolute tau=0.5: low = tokens 0,1,3,5. Sensitive: 1 (guard), 2, 3 (index).
    # Candidates: 1 and 3; gap method with max_gap=1 puts them in one region [1..3], size 2,
    # mean p (.2+.4)/2 = .3. Default policy masks low tokens outside [1..3]: tokens 0 and 5.
    t = table([[0.1, 0.2, 0.9, 0.4, 0.8, 0.3]], [[0, G, IX, IX, 0, 0]])
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5, regions=RegionConfig(max_gap=1))
    result = compute(t, config, "cuset")
    assert len(result.regions) == 1
    assert (result.regions.tok_start[0], result.regions.tok_end[0], result.regions.size[0]) == (1, 3, 2)
    assert result.regions.mean_p[0] == pytest.approx(0.3)
    assert result.mask.tolist() == [0, 1, 1, 1, 1, 0]
    assert result.stats["masked_fraction"] == pytest.approx(2 / 6)
    assert result.stats["low_sensitive_preserved"] == 2
    # With max_gap=0 they are two singleton regions and token 2 between them stays kept.
    split = compute(t, ObjectiveConfig(threshold_mode="absolute", tau=0.5, regions=RegionConfig(max_gap=0)))
    assert len(split.regions) == 2
    # sft and region-weight never mask; token-mask never reweights.
    assert compute(t, config, "sft").mask.tolist() == [1] * 6
    assert compute(t, config, "region-weight").mask.tolist() == [1] * 6
    two = table([[0.1, 0.2, 0.9], [0.9, 0.9, 0.9]], [[0, G, 0], [0, 0, 0]])
    assert compute(two, config, "token-mask").weights.tolist() == [1.0, 1.0]
    weighted = compute(two, config, "cuset").weights
    assert weighted[0] > 1.0 > weighted[1] and weighted.mean() == pytest.approx(1.0)


def test_protect_sensitive_policy_keeps_low_sensitive_outside_regions():
    t = table([[0.1, 0.2, 0.9]], [[0, G, 0]])
    config = ObjectiveConfig(threshold_mode="absolute", tau=0.5, policy="protect_sensitive")
    assert compute(t, config).mask.tolist() == [0, 1, 1]


def test_config_validation_and_round_trip(tmp_path):
    with pytest.raises(ValueError, match="quantile"):
        ObjectiveConfig(quantile=1.5)
    with pytest.raises(ValueError, match="unknown region kinds"):
        ObjectiveConfig(kappa={"warp drive": 2.0})
    with pytest.raises(ValueError, match="unknown field"):
        ObjectiveConfig.from_dict({"threshold": 0.3})
    for bad, message in (({"mask_scope": "python"}, "mask_scope"), ({"floor": 1.5}, r"floor=1.5: use a weight in \[0, 1\]"),
                         ({"floor": -0.1}, "floor"), ({"sft_warmup_steps": 2.5}, "whole number"), ({"sft_warmup_steps": -1}, "whole number"),
                         ({"sft_warmup_fraction": 1.0}, "sft_warmup_fraction"),
                         ({"sft_warmup_steps": 10, "sft_warmup_fraction": 0.1}, "set one of them")):
        with pytest.raises(ValueError, match=message):
            ObjectiveConfig(**bad)
    defaults = ObjectiveConfig()
    assert (defaults.mask_scope, defaults.floor, defaults.sft_warmup_steps, defaults.sft_warmup_fraction) == ("all", 0.0, 0, 0.0)
    config = ObjectiveConfig(quantile=0.3, kappa={"bounds guard": 2.0}, regions=RegionConfig(method="statement", max_gap=4),
                             mask_scope="cuda", floor=0.1, sft_warmup_fraction=0.2)
    for name in ("c.yaml", "c.json"):
        config.save(tmp_path / name)
        assert ObjectiveConfig.load(tmp_path / name) == config
    (tmp_path / "bad.yaml").write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match="bad.yaml"):
        ObjectiveConfig.load(tmp_path / "bad.yaml")


def test_loss_equals_cross_entropy_when_nothing_is_masked():
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 11)
    labels = torch.randint(0, 11, (2, 5))
    response = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    logp = torch.log_softmax(logits, -1).gather(-1, labels[..., None]).squeeze(-1) * response
    loss = cuset_loss(logp, response.float(), torch.ones(2), response.sum())
    reference = F.cross_entropy(logits[response], labels[response])
    assert loss.item() == pytest.approx(reference.item(), rel=1e-6)


def test_loss_hand_computed_with_mask_and_weights():
    logp = torch.log(torch.tensor([[0.5, 0.25, 1.0], [0.125, 1.0, 1.0]]))
    mask = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    weights = torch.tensor([2.0, 0.5])
    # (2*(ln2 + 0) + 0.5*(3 ln2 + 0)) / 6 = 3.5 ln2 / 6
    loss = cuset_loss(logp, mask, weights, torch.tensor(6))
    assert loss.item() == pytest.approx(3.5 * np.log(2) / 6, rel=1e-6)


def test_floor_keeps_a_small_weight_on_masked_tokens():
    logp = torch.log(torch.tensor([[0.5, 0.25, 1.0], [0.125, 1.0, 1.0]])).requires_grad_()
    mask = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    weights = torch.tensor([2.0, 0.5])
    # eps 0.1: (2*(ln2 + 0.1*ln4 + 0) + 0.5*(3 ln2 + 0 + 0.1*0)) / 6 = (2.4 + 1.5) ln2 / 6
    loss = cuset_loss(logp, mask, weights, torch.tensor(6), floor=0.1)
    assert loss.item() == pytest.approx(3.9 * np.log(2) / 6, rel=1e-6)
    loss.backward()
    # d/d logp = -w * max(m, eps) / 6: the masked token (row 0, col 1) gets 2 * 0.1 / 6
    expected = -torch.tensor([[2.0, 0.2, 2.0], [0.5, 0.5, 0.05]]) / 6
    torch.testing.assert_close(logp.grad, expected)
    # eps 1 trains every token in full (the mask no longer matters); eps 0 is the plain mask
    assert cuset_loss(logp, mask, weights, torch.tensor(6), floor=1.0).item() == pytest.approx(7.5 * np.log(2) / 6, rel=1e-6)
    assert cuset_loss(logp, mask, weights, torch.tensor(6), floor=0.0).item() == pytest.approx(3.5 * np.log(2) / 6, rel=1e-6)


def test_warmup_covers_the_first_optimizer_steps():
    three = ObjectiveConfig(sft_warmup_steps=3)
    assert [warmup_active(step, three) for step in range(5)] == [True, True, True, False, False]
    assert not warmup_active(0, ObjectiveConfig())
    # a fraction of the run, rounded up: 0.1 of 100 steps is 10 (not 11 from 0.1 * 100 = 10.000000000000002), of 162 it is 17
    tenth = ObjectiveConfig(sft_warmup_fraction=0.1)
    assert (resolved_warmup_steps(tenth, 100), resolved_warmup_steps(tenth, 162), resolved_warmup_steps(tenth, 4)) == (10, 17, 1)
    assert warmup_active(9, tenth, 100) and not warmup_active(10, tenth, 100)
    with pytest.raises(ValueError, match="total optimizer steps"):
        warmup_active(0, tenth)


def test_dft_loss_weights_by_detached_probability():
    logp = torch.log(torch.tensor([[0.5, 0.25]])).requires_grad_()
    loss = dft_loss(logp, torch.ones(1, 2), torch.tensor(2))
    assert loss.item() == pytest.approx((0.5 * np.log(2) + 0.25 * np.log(4)) / 2, rel=1e-6)
    loss.backward()
    assert logp.grad[0].tolist() == pytest.approx([-0.25, -0.125])  # p is a constant in the gradient


def test_batch_threshold_matches_data_set_threshold():
    rng = np.random.default_rng(0)
    ps = [rng.random(7).tolist(), rng.random(4).tolist()]
    t = table(ps, [[0] * 7, [0] * 4])
    for config in (ObjectiveConfig(quantile=0.3), ObjectiveConfig(threshold_mode="absolute", tau=0.4)):
        flat = low_confidence(t, config)
        padded = torch.zeros(2, 7)
        response = torch.zeros(2, 7, dtype=torch.bool)
        for row, p in enumerate(ps):
            padded[row, : len(p)] = torch.tensor(p)
            response[row, : len(p)] = True
        batch = batch_low_confidence(padded, response, config)
        assert batch[response].tolist() == flat.tolist()


# --- the literature's baselines ---------------------------------------------------------------

P = [[0.9, 0.2, 0.5, 0.05], [0.4, 0.8, 0.1, 0.6]]
RESPONSE = torch.tensor([[True, True, True, False], [True, True, True, True]])


def test_profit_keeps_tokens_above_the_threshold_and_averages_over_them():
    logp = torch.tensor(P, dtype=torch.float64).log().requires_grad_()
    loss = profit_loss(logp, RESPONSE, threshold=0.3)
    # kept: .9 .5 (row 0; .05 is no response token) and .4 .8 .6 (row 1); .2 and .1 are below 0.3
    hand = -(np.log(0.9) + np.log(0.5) + np.log(0.4) + np.log(0.8) + np.log(0.6)) / 5
    assert float(loss.detach()) == pytest.approx(hand, rel=1e-12)
    loss.backward()
    expected = -torch.tensor([[1, 0, 1, 0], [1, 1, 0, 1]], dtype=torch.float64) / 5
    torch.testing.assert_close(logp.grad, expected)  # no gradient through the gate, none on dropped tokens


def test_profit_always_keeps_the_end_of_turn_and_takes_a_given_divisor():
    logp = torch.tensor(P).log()
    always = torch.tensor([[False, False, False, True], [False, False, True, False]])
    assert profit_mask(logp.exp(), RESPONSE, 0.3, always).tolist() == [[1, 0, 1, 0], [1, 1, 1, 1]]  # off-response stays off
    loss = profit_loss(logp, RESPONSE, 0.3, always, num_kept=torch.tensor(12.0))
    hand = -(np.log(0.9) + np.log(0.5) + np.log(0.4) + np.log(0.8) + np.log(0.1) + np.log(0.6)) / 12
    assert float(loss) == pytest.approx(hand, rel=1e-6)
    assert float(profit_loss(logp, RESPONSE, 0.95)) == 0.0  # nothing above the threshold: no loss, no NaN


def test_slm_keeps_the_top_fraction_by_excess_loss():
    logp = torch.tensor(P, dtype=torch.float64).log().requires_grad_()
    ref = torch.tensor([[0.95, 0.9, 0.5, 0.9], [0.5, 0.9, 0.15, 0.3]], dtype=torch.float64).log()
    # excess = log p_ref - log p_theta on the 7 response tokens:
    #   row 0: ln(.95/.9)=.054  ln(.9/.2)=1.504  ln(.5/.5)=0      (position 3 is no response token)
    #   row 1: ln(.5/.4)=.223   ln(.9/.8)=.118   ln(.15/.1)=.405  ln(.3/.6)=-.693
    # fraction 0.5 -> ceil(3.5) = 4 tokens: 1.504, .405, .223, .118
    mask = slm_mask(logp, ref, RESPONSE, 0.5)
    assert mask.tolist() == [[0, 1, 0, 0], [1, 1, 1, 0]]
    loss = slm_loss(logp, ref, RESPONSE, 0.5, num_items=torch.tensor(7))
    hand = -(np.log(0.2) + np.log(0.4) + np.log(0.8) + np.log(0.1)) / (0.5 * 7)
    assert float(loss.detach()) == pytest.approx(hand, rel=1e-12)
    loss.backward()
    torch.testing.assert_close(logp.grad, -mask.double() / 3.5)


def test_slm_puts_the_always_tokens_first():
    logp = torch.tensor(P).log()
    ref = torch.zeros(2, 4)  # excess = -log p: the least likely tokens win
    always = torch.tensor([[False, False, False, False], [False, True, False, False]])
    # budget ceil(0.3 * 7) = 3: the end of turn (p .8), then p .1 and .2
    assert slm_mask(logp, ref, RESPONSE, 0.3, always).tolist() == [[0, 1, 0, 0], [0, 1, 1, 0]]


def test_slm_with_every_token_is_the_causal_lm_loss():
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 11, dtype=torch.float64)
    gold = torch.randint(0, 11, (2, 4))
    logp = torch.log_softmax(logits, -1).gather(-1, gold[..., None])[..., 0]
    logp = torch.where(RESPONSE, logp, torch.zeros_like(logp))
    loss = slm_loss(logp, torch.randn(2, 4, dtype=torch.float64), RESPONSE, 1.0, num_items=RESPONSE.sum())
    assert float(loss) == pytest.approx(float(F.cross_entropy(logits[RESPONSE], gold[RESPONSE])), rel=1e-12)
