"""The per-batch training loss of each method, on top of cuset.objective's pure functions.

One forward pass gives the log-probability of every gold response token; then per method

    sft            cuset_loss with m = target, w = 1 (exactly the causal-LM loss)
    dft            dft_loss (each token's NLL scaled by its detached probability)
    token-mask     cuset_loss with the token mask, w = 1
    region-weight  cuset_loss with m = target and the sample weights
    cuset          cuset_loss with the token mask and the sample weights
    profit         profit_loss: tokens whose current detached p exceeds profit_threshold, mean
                   over the kept tokens (ProFit)
    slm            slm_loss: the top slm_fraction of the micro-batch's tokens by excess loss over
                   the base model's cached scores (`ref_logp`, aligned like the cuset mask), mean
                   over k * num_items (Rho-1)

The adaptive mask runs `batch_low_confidence` on the current model's detached probabilities
from this same forward pass (no second pass); the protected set, the mask scope (`in_cuda`:
with `mask_scope: cuda` only tokens inside the CUDA source can be masked) and the weights were
fixed before training from the base-model scores. `static` mode uses the base-model mask
(`keep`). A masked token keeps the weight `floor` (max(m, eps)). For the first
`resolved_warmup_steps` optimizer steps (the objective's plain-SFT warm-up; `step` is the
Trainer's state.global_step) the objective's methods (token-mask, region-weight, cuset) train
with m = 1 and w = 1, exactly `sft`; the baselines have their own selection and ignore it.
Every loss is divided by `num_items`, the response tokens of the whole accumulated batch
(all processes), so gradient accumulation 1x4 and 4x1 give the same gradients. Two exceptions,
by their papers' definitions: `profit` divides by the kept tokens, which are only known after
the forward pass, so a micro-batch uses its own kept count scaled by its share of num_items
(exact with one micro-batch per step); `slm` selects its top k% within each micro-batch. The
end-of-turn token (`always`) is trained on by every method's selection, so the model learns to stop.

The vocabulary projection runs only from the batch's first trained-on position onwards
(`logits_to_keep`, as an index tensor): prompt positions never need logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cuset.objective import (
    PROFIT_THRESHOLD,
    SLM_FRACTION,
    ObjectiveConfig,
    batch_low_confidence,
    cuset_loss,
    dft_loss,
    profit_loss,
    profit_mask,
    slm_loss,
    slm_mask,
    warmup_active,
)

MASKING_METHODS = ("token-mask", "cuset")
OBJECTIVE_METHODS = ("token-mask", "region-weight", "cuset")  # the ones the plain-SFT warm-up applies to

# Per-step sums the metrics are made of (one float64 vector, so processes can all-reduce it).
TOTALS = (
    "loss_sum", "nll_sum", "n_targets", "n_kept", "w_sum", "w2_sum", "n_samples",
    "nll_sensitive_sum", "n_sensitive", "n_tokens",
)


@dataclass
class LossSpec:
    """What the loss does: the method, the objective config behind its mask, and the
    baselines' parameters (TrainConfig.profit_threshold, slm_fraction)."""

    method: str
    objective: ObjectiveConfig
    profit_threshold: float = PROFIT_THRESHOLD
    slm_fraction: float = SLM_FRACTION


@dataclass
class TokenView:
    """A batch cut to the positions the loss reads: tensors [B, K] for the K targets starting
    at column `first` (target column j is position first + 1 + j of the batch)."""

    logp: Any
    target: Any
    protected: Any
    keep: Any
    sensitive: Any
    weight: Any
    ref_logp: Any = None
    always: Any = None
    in_cuda: Any = None


def gold_logprobs(model: Any, batch: dict[str, Any]) -> TokenView:
    """Run the model once and return log p(gold) of every position from the first target on.

    input_ids [B, L]; the logits at position t predict token t + 1. `logits_to_keep` keeps
    the logits of positions first..L-1, where `first` + 1 is the earliest target in the batch."""
    import torch
    import torch.nn.functional as F

    input_ids, target = batch["input_ids"], batch["target"]
    width = input_ids.shape[1]
    first = int(target.any(dim=0).nonzero()[0, 0]) - 1 if bool(target.any()) else width - 2
    # The kept positions as an index tensor, not the int width - first: at batch > 1 that int's
    # slice is a strided view, and for frozen weights (a LoRA's lm_head) torch's matmul then runs
    # the output layer as a bmm on a per-row copy of its weight (the engine's prefill had the same
    # pattern: cuset.generate.engines). Indexing copies the rows instead; the logits are the same.
    keep = torch.arange(first, width, device=input_ids.device)
    logits = model(input_ids=input_ids, logits_to_keep=keep).logits[:, :-1]
    gold = input_ids[:, first + 1 :]
    nll = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), gold.reshape(-1), reduction="none")
    tgt = target[:, first + 1 :]
    logp = torch.where(tgt, -nll.view(gold.shape), torch.zeros_like(nll.view(gold.shape)))
    return TokenView(
        logp=logp,
        target=tgt,
        protected=batch["protected"][:, first + 1 :],
        keep=batch["keep"][:, first + 1 :],
        sensitive=batch["sensitive"][:, first + 1 :],
        weight=batch["weight"],
        ref_logp=batch["ref_logp"][:, first + 1 :] if "ref_logp" in batch else torch.zeros_like(logp),
        always=batch["always"][:, first + 1 :] if "always" in batch else torch.zeros_like(tgt),
        in_cuda=batch["in_cuda"][:, first + 1 :] if "in_cuda" in batch else torch.ones_like(tgt),
    )


def adaptive_mask(view: TokenView, config: ObjectiveConfig) -> Any:
    """m [B, K] (float): 0 where the current model is unsure of a token that its sample's
    protected set does not hold (and, under mask_scope `cuda`, that lies inside the CUDA
    source); the torch twin of cuset.objective.token_mask."""
    if config.policy == "none":
        return view.target.float()
    low = batch_low_confidence(view.logp.detach().exp(), view.target, config)
    protected = view.protected if view.always is None else view.protected | view.always
    drop = low & ~protected
    if config.mask_scope == "cuda":
        drop = drop & view.in_cuda
    return (view.target & ~drop).float()


def token_mask(view: TokenView, spec: LossSpec) -> Any:
    """The mask the method trains with: all targets, the adaptive mask, or the static one."""
    if spec.method not in MASKING_METHODS:
        return view.target.float()
    if spec.objective.mask_mode == "static":
        return view.keep * view.target
    return adaptive_mask(view, spec.objective)


def sample_weights(view: TokenView, spec: LossSpec) -> Any:
    """w [B]: the precomputed weights for weighting methods, else 1."""
    import torch

    return view.weight if spec.method in ("region-weight", "cuset") else torch.ones_like(view.weight)


def method_loss(view: TokenView, spec: LossSpec, num_items: Any, warmup: bool = False) -> tuple[Any, Any, Any]:
    """(loss, mask [B, K], weights [B]) of the method on one micro-batch; `warmup`: inside
    the objective's plain-SFT warm-up (the objective's methods then train as `sft`). The mask
    returned is the 0/1 one (the metrics' kept count); the loss applies the floor to it."""
    import torch

    if warmup and spec.method in OBJECTIVE_METHODS:
        mask = view.target.float()
        return cuset_loss(view.logp, mask, torch.ones_like(view.weight), num_items), mask, torch.ones_like(view.weight)
    if spec.method == "dft":
        mask, weights = view.target.float(), sample_weights(view, spec)
        return dft_loss(view.logp, view.target, num_items), mask, weights
    if spec.method == "profit":
        mask, weights = profit_mask(view.logp.detach().exp(), view.target, spec.profit_threshold, view.always), sample_weights(view, spec)
        n_targets = view.target.sum()
        num_kept = mask.sum() * (num_items / n_targets) if int(n_targets) else mask.sum()
        return profit_loss(view.logp, view.target, spec.profit_threshold, view.always, num_kept), mask, weights
    if spec.method == "slm":
        mask, weights = slm_mask(view.logp, view.ref_logp, view.target, spec.slm_fraction, view.always), sample_weights(view, spec)
        return slm_loss(view.logp, view.ref_logp, view.target, spec.slm_fraction, num_items, view.always), mask, weights
    mask, weights = token_mask(view, spec), sample_weights(view, spec)
    floor = spec.objective.floor if spec.method in MASKING_METHODS else 0.0
    return cuset_loss(view.logp, mask, weights, num_items, floor), mask, weights


def step_totals(view: TokenView, mask: Any, weights: Any, loss: Any, num_items: Any, n_tokens: Any) -> Any:
    """float64 [len(TOTALS)] sums of this micro-batch for the per-step metrics."""
    import torch

    nll = -view.logp.detach()
    sensitive = view.sensitive & view.target
    values = [
        loss.detach().double() * num_items,
        nll.sum(),
        view.target.sum(),
        (mask * view.target).sum(),
        weights.sum(),
        (weights * weights).sum(),
        weights.shape[0],
        (nll * sensitive).sum(),
        sensitive.sum(),
        n_tokens.sum(),
    ]
    return torch.stack([torch.as_tensor(v, dtype=torch.float64, device=view.logp.device) for v in values])


def objective_loss(model: Any, batch: dict[str, Any], spec: LossSpec, num_items: Any = None,
                   step: int | None = None, total_steps: int = 0) -> tuple[Any, Any]:
    """(loss, totals) of one micro-batch. `num_items` defaults to this batch's target count
    (then the loss is the batch's own mean); the Trainer passes the accumulated count.
    `step` (the optimizer steps done, state.global_step) and `total_steps` (state.max_steps)
    decide the plain-SFT warm-up; without `step` there is none."""
    view = gold_logprobs(model, batch)
    if num_items is None:
        num_items = view.target.sum()
    warmup = step is not None and spec.method in OBJECTIVE_METHODS and warmup_active(step, spec.objective, total_steps)
    loss, mask, weights = method_loss(view, spec, num_items, warmup)
    return loss, step_totals(view, mask, weights, loss, num_items, batch["n_tokens"])
