"""Confidence diff: what one model (a fine-tune, a bigger model) changed token by token against another.

Both models score the same samples with the same template (cuset.confidence). A diff needs one
tokenizer: the token ids of every sample must agree, else `TokenizerMismatch` names both models
(a fine-tune against its base, or coder-0.5b against coder-1.5b, share Qwen's tokenizer;
smollm2-135m and coder-0.5b do not). Per token, B minus A:

    delta_logp = log p_B(gold) - log p_A(gold)    (nats; > 0: B is surer of the gold token)
    delta_rank = rank_B - rank_A                  (< 0: the gold token moved up B's list)

The data-set view (`summarise_diff`): the mean delta over CUDA-sensitive vs other tokens and
per category; the tokens and regions that gained or lost most; and the question CuSeT's
objective raises: did the regions it preserves (found on model A's scores under the given
ObjectiveConfig, by default the app's) gain more than the tokens it masks? That difference of
means carries a bootstrap interval that resamples whole samples (tokens of one sample are not
independent).

    cuset diff bundled --model coder-0.5b --against coder-1.5b --limit 10
    from cuset.diff import run_diff
    diff, summary = run_diff(samples, "smollm2-135m", "job:3")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from cuset.confidence import ScoreConfig, TokenScores, TokenTable, score_samples
from cuset.data import Sample
from cuset.objective import ObjectiveConfig, compute
from cuset.regions import extent_mask, region_rows
from cuset.sensitivity import CATEGORIES, TagResult, tag

N_BOOT = 1000


class TokenizerMismatch(ValueError):
    """Two models tokenized a sample differently: their per-token scores cannot be paired."""


def check_same_tokens(a: TokenScores, b: TokenScores, model_a: str = "A", model_b: str = "B") -> None:
    """Raise TokenizerMismatch unless `a` and `b` score the same token ids of one sample."""
    if len(a) == len(b) and np.array_equal(a.token_ids, b.token_ids):
        return
    n = min(len(a), len(b))
    differ = np.flatnonzero(a.token_ids[:n] != b.token_ids[:n])
    where = f"first difference at token {int(differ[0])}" if differ.size else f"{len(a)} vs {len(b)} tokens"
    raise TokenizerMismatch(
        f"sample {a.sample_id!r}: {model_a!r} and {model_b!r} tokenize it differently ({where}). A confidence diff "
        f"needs one tokenizer: compare a fine-tune with its base, or models of one family (coder-0.5b vs coder-1.5b)."
    )


@dataclass
class DiffTable:
    """A data set scored under two models, flattened like cuset.confidence.TokenTable.

    `table` is model A's TokenTable (its p, category bits, statements, offsets); logp_*/rank_*
    [N] are both models' gold log-probabilities (nats) and ranks, in the same token order."""

    table: TokenTable
    logp_a: np.ndarray
    logp_b: np.ndarray
    rank_a: np.ndarray
    rank_b: np.ndarray
    model_a: str = "A"
    model_b: str = "B"

    @cached_property
    def delta_logp(self) -> np.ndarray:
        return (self.logp_b.astype(np.float64) - self.logp_a.astype(np.float64))

    @cached_property
    def delta_rank(self) -> np.ndarray:
        return self.rank_b.astype(np.int64) - self.rank_a.astype(np.int64)


def diff_table(scores_a: Sequence[TokenScores], scores_b: Sequence[TokenScores], tags: Sequence[TagResult],
               model_a: str = "A", model_b: str = "B") -> DiffTable:
    """Pair per-sample scores of two models (index-aligned with `tags`) into a DiffTable;
    raises TokenizerMismatch for the first sample whose tokens differ."""
    if len(scores_a) != len(scores_b) or len(scores_a) != len(tags):
        raise ValueError(f"diff_table: {len(scores_a)} scores of {model_a}, {len(scores_b)} of {model_b}, {len(tags)} tags; give one of each per sample.")
    for a, b in zip(scores_a, scores_b):
        check_same_tokens(a, b, model_a, model_b)

    def cat(items: Sequence[TokenScores], name: str, dtype: Any) -> np.ndarray:
        return np.concatenate([getattr(x, name) for x in items]).astype(dtype) if items else np.zeros(0, dtype=dtype)

    return DiffTable(TokenTable.build(list(scores_a), list(tags)), cat(scores_a, "logp", np.float32), cat(scores_b, "logp", np.float32),
                     cat(scores_a, "rank", np.int32), cat(scores_b, "rank", np.int32), model_a, model_b)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def group_rows(diff: DiffTable) -> list[dict[str, Any]]:
    """Mean delta log p and delta rank per sensitivity category, 'any sensitive' and 'not
    sensitive'; a token counts in every category it carries. Also the share of tokens B made
    more likely (delta log p > 0)."""
    bits = diff.table.bits.astype(np.int64)
    groups = [(c, ((bits >> i) & 1).astype(bool)) for i, c in enumerate(CATEGORIES)]
    groups += [("any sensitive", bits != 0), ("not sensitive", bits == 0)]
    rows = []
    for name, where in groups:
        d = diff.delta_logp[where]
        rows.append({"category": name, "tokens": int(where.sum()), "mean_delta_logp": _mean(d),
                     "mean_delta_rank": _mean(diff.delta_rank[where].astype(np.float64)),
                     "gained_share": float((d > 0).mean()) if d.size else float("nan")})
    return rows


def difference_interval(delta: np.ndarray, sample: np.ndarray, first: np.ndarray, second: np.ndarray, n_samples: int,
                        n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """mean(delta[first]) - mean(delta[second]) and its percentile bootstrap interval,
    resampling whole samples (sample [N]: each token's sample index; first/second bool [N]).
    Returns (difference, low, high); nan when a group is empty."""
    def sums(where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (np.bincount(sample[where], weights=delta[where], minlength=n_samples),
                np.bincount(sample[where], minlength=n_samples).astype(np.float64))

    (s1, n1), (s2, n2) = sums(first), sums(second)
    if not n1.sum() or not n2.sum():
        return float("nan"), float("nan"), float("nan")
    point = s1.sum() / n1.sum() - s2.sum() / n2.sum()
    rng = np.random.default_rng(seed)
    # counts [B, S]: how often each sample is drawn in each replicate; per-replicate sums by a matrix product.
    counts = rng.multinomial(n_samples, np.full(n_samples, 1.0 / n_samples), size=n_boot).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (counts @ s1) / (counts @ n1) - (counts @ s2) / (counts @ n2)
    reps = reps[np.isfinite(reps)]
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(reps, [tail, 100 - tail]) if reps.size else (float("nan"), float("nan"))
    return float(point), float(low), float(high)


def _token_row(diff: DiffTable, k: int, responses: Sequence[str], ids: Sequence[str]) -> dict[str, Any]:
    t = diff.table
    s = int(t.sample[k])
    a, b = int(t.starts[k]), int(t.ends[k])
    return {"sample": ids[s], "index": int(t.pos[k]), "text": responses[s][a:b], "line": responses[s].count("\n", 0, a) + 1,
            "logp_a": float(diff.logp_a[k]), "logp_b": float(diff.logp_b[k]), "delta_logp": float(diff.delta_logp[k]),
            "rank_a": int(diff.rank_a[k]), "rank_b": int(diff.rank_b[k]),
            "categories": [c for i, c in enumerate(CATEGORIES) if int(t.bits[k]) >> i & 1]}


def summarise_diff(diff: DiffTable, responses: Sequence[str], ids: Sequence[str], config: ObjectiveConfig | None = None,
                   top: int = 10, n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any]:
    """The data-set view of a diff (plain JSON-ready values).

    overall: tokens, mean/median delta log p, share gained, mean delta rank;
    by_category: group_rows; top_gained/top_lost_tokens: the `top` tokens with the largest and
    smallest delta log p; regions: CuSeT's regions on model A's scores (compute(table_a,
    config)), each with the mean delta log p over its token extent, and the `top` that gained
    and lost most; preserved_vs_masked: mean delta over the tokens inside region extents
    (preserved) vs the tokens the objective masks, their difference with a bootstrap interval
    over samples."""
    config = config or ObjectiveConfig()
    t = diff.table
    d = diff.delta_logp
    order = np.argsort(d, kind="stable")
    result = compute(t, config, "cuset")
    regions = result.regions
    extent = extent_mask(regions, t.offsets)
    masked = result.mask == 0
    # Mean delta per region over its extent: prefix sums over the flat token order.
    prefix = np.r_[0.0, np.cumsum(d)]
    first = t.offsets[regions.sample] + regions.tok_start
    last = t.offsets[regions.sample] + regions.tok_end + 1
    region_delta = (prefix[last] - prefix[first]) / np.maximum(last - first, 1)
    rows = region_rows(regions, list(responses), list(ids))
    for row, value in zip(rows, region_delta):
        row["mean_delta_logp"] = float(value)
    ranked = sorted(rows, key=lambda r: r["mean_delta_logp"])
    difference, low, high = difference_interval(d, t.sample, extent, masked, t.n_samples, n_boot, seed)
    return {
        "model_a": diff.model_a,
        "model_b": diff.model_b,
        "overall": {"samples": t.n_samples, "tokens": int(d.size), "mean_delta_logp": _mean(d),
                    "median_delta_logp": float(np.median(d)) if d.size else float("nan"),
                    "gained_share": float((d > 0).mean()) if d.size else float("nan"),
                    "mean_delta_rank": _mean(diff.delta_rank.astype(np.float64))},
        "by_category": group_rows(diff),
        "top_gained_tokens": [_token_row(diff, int(k), responses, ids) for k in order[::-1][:top]],
        "top_lost_tokens": [_token_row(diff, int(k), responses, ids) for k in order[:top]],
        "regions": {"count": len(regions), "top_gained": ranked[::-1][:top], "top_lost": ranked[:top]},
        "preserved_vs_masked": {
            "preserved_tokens": int(extent.sum()), "masked_tokens": int(masked.sum()),
            "preserved_mean_delta_logp": _mean(d[extent]), "masked_mean_delta_logp": _mean(d[masked]),
            "difference": difference, "interval": [low, high], "n_boot": n_boot,
        },
    }


def format_summary(summary: dict[str, Any]) -> list[str]:
    """The summary as text lines for the CLI."""
    o, pm = summary["overall"], summary["preserved_vs_masked"]
    lines = [f"{summary['model_b']} - {summary['model_a']}: {o['samples']} samples, {o['tokens']:,} tokens; mean delta log p "
             f"{o['mean_delta_logp']:+.4f} nats (median {o['median_delta_logp']:+.4f}), {o['gained_share']:.1%} gained, "
             f"mean delta rank {o['mean_delta_rank']:+.2f}",
             f"  {'category':<16} {'tokens':>7} {'dlogp':>9} {'drank':>8} {'gained':>7}"]
    lines += [f"  {r['category']:<16} {r['tokens']:>7} {r['mean_delta_logp']:>+9.4f} {r['mean_delta_rank']:>+8.2f} {r['gained_share']:>7.1%}"
              for r in summary["by_category"] if r["tokens"]]
    lines.append(f"regions on {summary['model_a']}'s scores: {summary['regions']['count']}; preserved tokens ({pm['preserved_tokens']}) "
                 f"mean dlogp {pm['preserved_mean_delta_logp']:+.4f}, masked tokens ({pm['masked_tokens']}) {pm['masked_mean_delta_logp']:+.4f}; "
                 f"difference {pm['difference']:+.4f} [95% {pm['interval'][0]:+.4f}, {pm['interval'][1]:+.4f}] (bootstrap over samples)")
    for name in ("top_gained_tokens", "top_lost_tokens"):
        lines.append(name.replace("_", " ") + ":")
        lines += [f"  {r['sample'][:28]:<28} line {r['line']:>4} {r['text'][:18]!r:<20} {r['delta_logp']:+8.3f}  rank {r['rank_a']}->{r['rank_b']}"
                  for r in summary[name]]
    for name in ("top_gained", "top_lost"):
        lines.append(f"regions {name.replace('top_', '')} most:")
        lines += [f"  {r['sample'][:28]:<28} line {r['lines']:>7} {r['kind']:<21} {r['mean_delta_logp']:+8.3f}  {r['text'][:40]!r}"
                  for r in summary["regions"][name]]
    return lines


# --- side effects: which weights score -----------------------------------------------------------


def score_config(spec: str, **options: Any) -> ScoreConfig:
    """The ScoreConfig that scores under model `spec` (cuset.generate.source specs: a model
    name, folder, `job:ID[@checkpoint-N]` or an adapter folder). A fine-tune that cuset.models
    cannot load as it is (a LoRA adapter, a checkpoint without its tokenizer) is merged or
    copied once into workspace/cache/merged/ (cuset.generate.engines.merged_folder) and scored
    from there, in its base model's scoring dtype, so that base and fine-tune compare like with like."""
    from cuset.generate.source import resolve_source
    from cuset.models import default_score_dtype

    source = resolve_source(spec)
    if source.kind == "base":
        return ScoreConfig(model=spec, **options)
    from cuset.generate.engines import merged_folder

    dtype = options.pop("dtype", "") or default_score_dtype(source.base or None)
    folder = source.path if source.kind == "full" and source.tokenizer == source.path else merged_folder(source, dtype)
    return ScoreConfig(model=folder, dtype=dtype, **options)


def run_diff(samples: Sequence[Sample], model_a: str, model_b: str, config: ObjectiveConfig | None = None, top: int = 10,
             progress: Callable[[str, int, int], None] | None = None, **score_options: Any) -> tuple[DiffTable, dict[str, Any]]:
    """Score `samples` under both models (cached), pair them and summarise; progress(model, done, total)."""
    samples = list(samples)
    if not samples:
        raise ValueError("run_diff: no samples to compare.")
    tags = [tag(s.response) for s in samples]
    scores = []
    for name in (model_a, model_b):
        report = (lambda done, total, name=name: progress(name, done, total)) if progress else None
        scores.append(score_samples(samples, score_config(name, **score_options), report)[0])
    diff = diff_table(scores[0], scores[1], tags, model_a, model_b)
    return diff, summarise_diff(diff, [s.response for s in samples], [s.id for s in samples], config, top)


def sample_diff(scores_a: TokenScores, scores_b: TokenScores, model_a: str = "A", model_b: str = "B") -> tuple[np.ndarray, list[str]]:
    """One sample's delta log p [n] and a tooltip line per token with both models' values."""
    check_same_tokens(scores_a, scores_b, model_a, model_b)
    delta = scores_b.logp.astype(np.float64) - scores_a.logp.astype(np.float64)
    notes = [f"{model_a}: p = {pa:.4f}, rank {ra}\n{model_b}: p = {pb:.4f}, rank {rb}\nΔ log p = {dd:+.3f} nats, Δ rank = {rb - ra:+d}"
             for pa, ra, pb, rb, dd in zip(scores_a.p, scores_a.rank.astype(int), scores_b.p, scores_b.rank.astype(int), delta)]
    return delta, notes
