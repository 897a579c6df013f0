"""The per-batch training loss of each method, on top of cuset.objective's pure functions.

One forward pass gives the log-probability of every gold response token; then per method

    sft            cuset_loss with m = target, w = 1 (exactly the causal-LM loss)
    dft            dft_loss (each token's NLL scaled by its detached probability)
    token-mask     cuset_loss with the token mask, w = 1
    region-weight  cuset_loss with m = target and the sample weights
    cuset          cuset_loss with the token mask and the sample weights

The adaptive mask runs `batch_low_confidence` on the current model's detached probabilities
from this same forward pass (no second pass); the protected set and the weights were fixed
before training from the base-model scores. `static` mode uses the base-model mask (`keep`).
Every loss is divided by `num_items`, the response tokens of the whole accumulated batch
(all processes), so gradient accumulation 1x4 and 4x1 give the same gradients.

The vocabulary projection runs only from the batch's first trained-on position onwards
(`logits_to_keep`): prompt positions never need logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cuset.objective import ObjectiveConfig, batch_low_confidence, cuset_loss, dft_loss

MASKING_METHODS = ("token-mask", "cuset")

# Per-step sums the metrics are made of (one float64 vector, so processes can all-reduce it).
TOTALS = (
    "loss_sum", "nll_sum", "n_targets", "n_kept", "w_sum", "w2_sum", "n_samples",
    "nll_sensitive_sum", "n_sensitive", "n_tokens",
)


@dataclass
class LossSpec:
    """What the loss does: the method and the objective config behind its mask."""

    method: str
    objective: ObjectiveConfig


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


def gold_logprobs(model: Any, batch: dict[str, Any]) -> TokenView:
    """Run the model once and return log p(gold) of every position from the first target on.

    input_ids [B, L]; the logits at position t predict token t + 1. `logits_to_keep` keeps
    the logits of positions first..L-1, where `first` + 1 is the earliest target in the batch."""
    import torch
    import torch.nn.functional as F

    input_ids, target = batch["input_ids"], batch["target"]
    width = input_ids.shape[1]
    first = int(target.any(dim=0).nonzero()[0, 0]) - 1 if bool(target.any()) else width - 2
    keep = width - first
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
    )


def adaptive_mask(view: TokenView, config: ObjectiveConfig) -> Any:
    """m [B, K] (float): 0 where the current model is unsure of a token that its sample's
    protected set does not hold; the torch twin of cuset.objective.token_mask."""
    if config.policy == "none":
        return view.target.float()
    low = batch_low_confidence(view.logp.detach().exp(), view.target, config)
    return (view.target & ~(low & ~view.protected)).float()


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


def method_loss(view: TokenView, spec: LossSpec, num_items: Any) -> tuple[Any, Any, Any]:
    """(loss, mask [B, K], weights [B]) of the method on one micro-batch."""
    if spec.method == "dft":
        mask, weights = view.target.float(), sample_weights(view, spec)
        return dft_loss(view.logp, view.target, num_items), mask, weights
    mask, weights = token_mask(view, spec), sample_weights(view, spec)
    return cuset_loss(view.logp, mask, weights, num_items), mask, weights


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


def objective_loss(model: Any, batch: dict[str, Any], spec: LossSpec, num_items: Any = None) -> tuple[Any, Any]:
    """(loss, totals) of one micro-batch. `num_items` defaults to this batch's target count
    (then the loss is the batch's own mean); the Trainer passes the accumulated count."""
    view = gold_logprobs(model, batch)
    if num_items is None:
        num_items = view.target.sum()
    loss, mask, weights = method_loss(view, spec, num_items)
    return loss, step_totals(view, mask, weights, loss, num_items, batch["n_tokens"])
