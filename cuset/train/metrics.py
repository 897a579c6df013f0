"""Per-step training figures, written as JSON lines to the job folder's metrics.jsonl.

The loss function adds each micro-batch's sums (cuset.train.loss.TOTALS) to `StepStats`; at
the end of an optimizer step `cuset.train.trainer.MetricsCallback` all-reduces them over
processes and turns them into figures:

    loss             the objective's loss of the step (what the gradient is of)
    nll              plain mean NLL of all response tokens (comparable across methods)
    masked_fraction  share of response tokens the mask left out
    weight_mean, ess mean sample weight and effective sample size of the step's samples
    nll_sensitive, nll_other   mean NLL on CUDA-sensitive vs other response tokens
    tokens_per_s     tokens (prompt + response, all processes) through the model per second
    lr, grad_norm, seconds, elapsed, eta_s, step, total_steps, epoch, time

The Trainer's own loggers (tensorboard, mlflow, wandb) get the same figures under `cuset/`.
A line per step also goes to stdout, which is the job's log.txt.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from cuset.jobs.runner import read_metrics as read_metrics  # metrics.jsonl is a job folder's: read where log.txt is
from cuset.train.loss import TOTALS


class StepStats:
    """Sums of the current optimizer step, and the figures of the last finished one."""

    def __init__(self) -> None:
        self.totals: Any = None
        self.last: dict[str, float] = {}

    def add(self, totals: Any) -> None:
        self.totals = totals if self.totals is None else self.totals + totals

    def finish_step(self) -> dict[str, float]:
        """Reduce over processes, compute the figures, reset the sums."""
        import torch
        import torch.distributed as dist

        totals = self.totals if self.totals is not None else torch.zeros(len(TOTALS), dtype=torch.float64)
        if dist.is_available() and dist.is_initialized():
            totals = totals.clone()
            dist.all_reduce(totals)
        self.totals = None
        self.last = figures(dict(zip(TOTALS, totals.tolist())))
        return self.last


def figures(t: dict[str, float]) -> dict[str, float]:
    """The step's figures from its sums (see the module docstring)."""

    def ratio(a: float, b: float) -> float:
        return a / b if b else float("nan")

    n_other = t["n_targets"] - t["n_sensitive"]
    return {
        "loss": ratio(t["loss_sum"], t["n_targets"]),
        "nll": ratio(t["nll_sum"], t["n_targets"]),
        "masked_fraction": 1.0 - ratio(t["n_kept"], t["n_targets"]),
        "weight_mean": ratio(t["w_sum"], t["n_samples"]),
        "ess": ratio(t["w_sum"] ** 2, t["w2_sum"]),
        "nll_sensitive": ratio(t["nll_sensitive_sum"], t["n_sensitive"]),
        "nll_other": ratio(t["nll_sum"] - t["nll_sensitive_sum"], n_other),
        "response_tokens": t["n_targets"],
        "tokens": t["n_tokens"],
    }


def step_line(row: dict[str, Any]) -> str:
    """One human line per step for log.txt."""

    def num(key: str, fmt: str) -> str:
        value = row.get(key)
        return format(value, fmt) if isinstance(value, int | float) else "-"

    eta = row.get("eta_s")
    eta_text = f"{int(eta // 60)}m{int(eta % 60):02d}s" if isinstance(eta, int | float) else "-"
    return (
        f"step {row['step']}/{row['total_steps']}  loss {num('loss', '.4f')}  nll {num('nll', '.4f')}  "
        f"masked {num('masked_fraction', '.1%')}  w {num('weight_mean', '.2f')} ess {num('ess', '.1f')}  "
        f"nll sens/other {num('nll_sensitive', '.3f')}/{num('nll_other', '.3f')}  "
        f"{num('tokens_per_s', '.0f')} tok/s  eta {eta_text}"
    )


def tensorboard_figures(row: dict[str, Any]) -> dict[str, float]:
    """The step's figures for the Trainer's loggers, under `cuset/`."""
    keys = ("nll", "masked_fraction", "weight_mean", "ess", "nll_sensitive", "nll_other", "tokens_per_s")
    return {f"cuset/{k}": float(row[k]) for k in keys if isinstance(row.get(k), int | float) and math.isfinite(row[k])}


def data_summary(folder: str | Path) -> str:
    """One line on what a fine-tune trained on, from its data.json (written before training):
    how many samples were selected, how many were over max_length and dropped or cut, the
    longest kept. '' before the job has written it."""
    path = Path(folder) / "data.json"
    try:
        stats = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return ""
    over = stats.get("n_overlength", 0)
    fate = f"dropped {stats.get('n_dropped', 0)}" if stats.get("overlength") == "drop" else f"CUT {stats.get('n_cut', 0)} (their tails are not trained on)"
    return (f"Trained on {stats.get('n_trained', 0)} of {stats.get('n_selected', 0)} samples; {over} over max_length "
            f"{stats.get('max_length')} tokens" + (f", {fate}" if over else "") + f"; longest kept {stats.get('longest_kept_tokens', 0):,} tokens.")
