"""`CusetTrainer`: transformers' Trainer with the CuSeT objective as its loss; `MetricsCallback`.

Only `compute_loss` changes (it calls cuset.train.loss.objective_loss with the optimizer steps
done so far, state.global_step, and the run's max_steps, for the objective's plain-SFT
warm-up; resuming from a checkpoint restores both) plus two flags:
the Trainer must count `num_items_in_batch` over the accumulated batch (it does so only for
models that "accept loss kwargs", so we say ours does), and must not divide our loss by the
accumulation steps again (`loss_is_scaled_for_ga`). Under several processes the count is
summed over all of them and DDP averages gradients, so the loss is multiplied by the process
count, as the Trainer does for its own losses.

`MetricsCallback` writes one JSON line per optimizer step to metrics.jsonl (figures: see
cuset.train.metrics) and reports progress to the job store.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import Trainer, TrainerCallback

from cuset.train.loss import LossSpec, objective_loss
from cuset.train.metrics import StepStats, step_line, tensorboard_figures


class CusetTrainer(Trainer):
    """A Trainer whose loss is the chosen method's (cuset.objective.METHODS; see cuset.train.loss)."""

    loss_is_scaled_for_ga = True

    def __init__(self, *args: Any, spec: LossSpec, step_stats: StepStats | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec
        self.step_stats = step_stats or StepStats()
        self.model_accepts_loss_kwargs = True

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None) -> Any:
        loss, totals = objective_loss(model, inputs, self.spec, num_items_in_batch, step=self.state.global_step, total_steps=self.state.max_steps)
        if model.training:
            self.step_stats.add(totals)
        if num_items_in_batch is not None and self.args.average_tokens_across_devices:
            loss = loss * self.accelerator.num_processes
        return (loss, None) if return_outputs else loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs and "train_runtime" not in logs:
            logs = {**logs, **tensorboard_figures(self.step_stats.last)}
        super().log(logs, start_time)


class MetricsCallback(TrainerCallback):
    """Writes one JSON line per optimizer step and reports progress (rank 0 only).

    `on_progress(step, total, eta_s)` is the job reporter's hook (None outside a job)."""

    def __init__(self, stats: StepStats, path: Path, on_progress: Callable[[int, int, float], None] | None = None) -> None:
        self.stats = stats
        self.path = Path(path)
        self.on_progress = on_progress
        self.train_start = 0.0
        self.first_step = 0
        self.step_start = 0.0

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.train_start = time.time()
        self.first_step = state.global_step
        self.stats.totals = None

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.step_start = time.time()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        now = time.time()
        row = self.stats.finish_step()
        done = state.global_step - self.first_step
        elapsed = now - self.train_start
        eta = elapsed / done * (state.max_steps - state.global_step) if done else float("nan")
        seconds = now - self.step_start
        scheduler = kwargs.get("lr_scheduler")
        row |= {
            "step": state.global_step,
            "total_steps": state.max_steps,
            "epoch": float(state.epoch or 0.0),
            "lr": float(scheduler.get_last_lr()[0]) if scheduler is not None else float("nan"),
            "seconds": seconds,
            "tokens_per_s": row["tokens"] / seconds if seconds > 0 else float("nan"),
            "elapsed": elapsed,
            "eta_s": eta,
            "time": now,
        }
        self.stats.last = row
        if not state.is_world_process_zero:
            return
        if self.on_progress is not None:
            self.on_progress(state.global_step, state.max_steps, eta)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """After the Trainer's log of a step (which carries grad_norm), write the line."""
        logs = logs or {}
        row = self.stats.last
        if not state.is_world_process_zero or not row or row.get("step") != state.global_step or "written" in row:
            return
        for key, name in (("grad_norm", "grad_norm"), ("learning_rate", "lr")):
            if isinstance(logs.get(key), int | float):
                row[name] = float(logs[key])
        row["written"] = 1.0
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items() if k != "written"}
        with self.path.open("a") as out:
            out.write(json.dumps(clean) + "\n")
        print(step_line(clean), file=sys.stdout, flush=True)
