"""The fine-tuning config (`TrainConfig`) and its presets.

One dataclass holds every choice of a fine-tune; fields carry help text, validate in
`__post_init__`, and round-trip through YAML/JSON. A preset fills the fields for a machine
class; explicit values override it:

    tiny       the tiny random model, full fine-tuning, a few steps, cut at 512 tokens (seconds; tests)
    cpu        SmolLM2-135M (smollm2-135m), the whole model on all 213 samples x 3 epochs in bf16
               (~60-100 min on 2 cores; its greedy replies end their turn, LoRA r16's did not)
    cpu-coder  Qwen2.5-Coder-0.5B-Instruct (coder-0.5b) with LoRA on 16 whole samples (~30 min on 2 cores)
    gpu        one GPU, Qwen2.5-Coder-1.5B-Instruct (coder-1.5b) with LoRA on the whole corpus

No preset cuts a sample silently: before training, the samples whose prompt + response is
longer than max_length under the model's tokenizer are counted and dropped (`overlength:
drop`, the default) or kept cut and flagged (`overlength: cut`); the counts go to the log,
data.json and result.json in the job folder (cuset.train.recipe).

    from cuset.train import TrainConfig
    config = TrainConfig.from_preset("cpu", method="sft", max_steps=10)
    config.save("train.yaml"); TrainConfig.load("train.yaml")

`resolved()` turns the objective name or path into the config itself and `bf16: null` (auto)
into true/false, so the YAML saved next to a job's outputs says exactly what ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from cuset.config import ConfigFile
from cuset.objective import METHODS, PROFIT_THRESHOLD, SLM_FRACTION, ObjectiveConfig

REPORTERS = ("tensorboard", "mlflow", "wandb")

OVERLENGTH = ("drop", "cut")

# Each preset's max_length holds every bundled sample whole under its model's tokenizer
# (prompt + response + end of turn, with the chat template: SmolLM2's longest is 2,083 tokens,
# Qwen2.5-Coder's 1,726; tests/train/test_config.py checks it). `tiny` is the exception: a
# random model for tests, it cuts at 512 (overlength: cut, counted and logged) to stay fast.
# bf16 autocast where the CPU has bf16 matmuls (AMX / avx512_bf16, `bf16: null`): measured
# 1.85x (SmolLM2) to 2.25x (coder-0.5b) float32's speed here (see cuset/train/README.md).
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": {
        "model": "tiny", "max_samples": 8, "max_length": 512, "overlength": "cut", "max_steps": 4, "batch_size": 2,
        "grad_accum": 1, "lr": 1e-3, "lora_r": 0, "bf16": False, "save_steps": 2, "threads": 1,
    },
    "cpu": {
        "model": "smollm2-135m", "max_samples": 0, "max_length": 2112, "epochs": 3.0, "max_steps": 0, "batch_size": 1,
        "grad_accum": 4, "lr": 2e-4, "warmup_steps": 0.05, "lora_r": 0, "lora_alpha": 32, "bf16": None, "save_steps": 53,
    },
    # cpu-coder names its schedule (epochs, warm-up) so that a change of the defaults above cannot move it
    # under a running experiment (tests/test_experiment.py checks the committed configs).
    "cpu-coder": {
        "model": "coder-0.5b", "max_samples": 16, "max_length": 1792, "epochs": 1.0, "max_steps": 8, "batch_size": 1,
        "grad_accum": 4, "lr": 2e-4, "warmup_steps": 0.0, "lora_r": 16, "lora_alpha": 32, "bf16": False, "save_steps": 2,
    },
    "gpu": {
        "model": "coder-1.5b", "max_samples": 0, "max_length": 2048, "epochs": 3.0,
        "max_steps": 0, "batch_size": 4, "grad_accum": 4, "lr": 1e-4, "lora_r": 64, "lora_alpha": 128,
        "bf16": True, "save_steps": 50, "warmup_steps": 0.03,
    },
}


@dataclass
class TrainConfig(ConfigFile):
    """Every choice of one fine-tune. Defaults are the `cpu` preset's."""

    KIND: ClassVar[str] = "train config"

    method: str = field(default="cuset", metadata={"help": f"Training objective, one of {METHODS}."})
    preset: str = field(default="cpu", metadata={"help": f"Preset the values started from, one of {tuple(PRESETS)} (informational once resolved)."})
    model: str = field(default="smollm2-135m", metadata={"help": "Model name, local folder or hub id (see cuset.models)."})
    data: str = field(default="bundled", metadata={"help": "'bundled', a .jsonl/.parquet file or hf:NAME (see cuset.data.load)."})
    objective: str | dict[str, Any] = field(default="", metadata={"help": "Objective config: '' (defaults), a saved name, a YAML/JSON path, or the config itself."})
    max_samples: int = field(default=0, metadata={"help": "Train on this many samples, evenly spread over the data set (0 = all); after holdout."})
    holdout: int = field(default=0, metadata={"help": "Keep this many samples (evenly spread) out of training; the final model's plain NLL on them goes to result.json (cuset.train.heldout)."})
    max_length: int = field(default=2112, metadata={"help": "Longest prompt+response in tokens (with the chat template and end of turn)."})
    overlength: str = field(default="drop", metadata={"help": f"Samples longer than max_length, one of {OVERLENGTH}: drop them (the model never sees a half sample), or cut them at max_length (counted and logged)."})
    epochs: float = field(default=3.0, metadata={"help": "Passes over the data (used when max_steps is 0)."})
    max_steps: int = field(default=0, metadata={"help": "Optimizer steps (0 = run `epochs` passes)."})
    batch_size: int = field(default=1, metadata={"help": "Samples per forward pass and process."})
    grad_accum: int = field(default=4, metadata={"help": "Forward passes accumulated per optimizer step."})
    lr: float = field(default=2e-4, metadata={"help": "Peak learning rate (cosine schedule)."})
    warmup_steps: float = field(default=0.05, metadata={"help": "Linear warm-up: steps, or a fraction in [0, 1) of all steps."})
    lora_r: int = field(default=0, metadata={"help": "LoRA rank on every linear layer (0 = full fine-tuning)."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling alpha."})
    bf16: bool | None = field(default=None, metadata={"help": "bfloat16 autocast (fp32 master weights); null = where the device supports it."})
    gradient_checkpointing: bool = field(default=False, metadata={"help": (
        "Recompute each layer's activations in the backward pass instead of keeping them: the same gradients for "
        "~30% more time per step and a fraction of the memory (coder-1.5b on whole 1.7k-token samples held 23.5 GB "
        "without it and was killed for memory on a 24 GiB machine).")})
    save_steps: int = field(default=53, metadata={"help": "Save a checkpoint every N optimizer steps (jobs resume from the last)."})
    profit_threshold: float = field(default=PROFIT_THRESHOLD, metadata={"help": "profit: train on tokens whose current probability exceeds this (ProFit's static tau)."})
    slm_fraction: float = field(default=SLM_FRACTION, metadata={"help": "slm: share of each batch's response tokens kept, the top ones by excess loss over the base model (Rho-1's k%)."})
    seed: int = field(default=42, metadata={"help": "Seed of model init, LoRA init and data order."})
    output_dir: str = field(default="", metadata={"help": "Where checkpoints and the final model go ('' = the job's folder)."})
    report_to: list[str] = field(default_factory=list, metadata={"help": f"Extra loggers passed to the Trainer, any of {REPORTERS} (wandb runs offline)."})
    nproc: int = field(default=1, metadata={"help": "Processes of a job (> 1: launched with torchrun; gloo on CPU)."})
    threads: int = field(default=0, metadata={"help": "CPU threads per process (0 = the cores shared among the jobs allowed to run at once)."})
    evaluate: bool | dict[str, Any] = field(default=False, metadata={"help": "When the fine-tune completes, evaluate its final model in a background job: true (EvalConfig defaults) or a mapping of EvalConfig fields (see cuset.evaluate.evaluation)."})
    eval_every: int = field(default=0, metadata={"help": "With evaluate: also evaluate every N-th saved checkpoint (0 = the final model only)."})

    def __post_init__(self) -> None:
        if isinstance(self.report_to, str):
            self.report_to = [r for r in self.report_to.split(",") if r and r != "none"]
        checks = [
            (self.method in METHODS, f"method={self.method!r}: use one of {', '.join(METHODS)}."),
            (self.preset in PRESETS, f"preset={self.preset!r}: use one of {', '.join(PRESETS)}."),
            (bool(self.model.strip()), "model is empty: name a model ('smollm2-135m', 'coder-0.5b', 'tiny', a folder or a hub id)."),
            (bool(self.data.strip()), "data is empty: use 'bundled', a .jsonl/.parquet file or hf:NAME."),
            (self.max_samples >= 0, f"max_samples={self.max_samples}: use 0 (all) or a positive count."),
            (self.holdout >= 0, f"holdout={self.holdout}: use 0 (none) or a positive count of samples kept out of training."),
            (self.max_length >= 16, f"max_length={self.max_length}: use at least 16 tokens."),
            (self.overlength in OVERLENGTH, f"overlength={self.overlength!r}: use one of {', '.join(OVERLENGTH)}."),
            (0.0 <= self.profit_threshold < 1.0, f"profit_threshold={self.profit_threshold}: use a probability in [0, 1)."),
            (0.0 < self.slm_fraction <= 1.0, f"slm_fraction={self.slm_fraction}: use a share in (0, 1]."),
            (self.max_steps > 0 or self.epochs > 0, "Set max_steps > 0 or epochs > 0, or the run has nothing to do."),
            (self.max_steps >= 0 and self.epochs >= 0, "max_steps and epochs must be >= 0."),
            (self.batch_size >= 1 and self.grad_accum >= 1, "batch_size and grad_accum must be at least 1."),
            (self.lr > 0, f"lr={self.lr}: use a positive learning rate."),
            (self.warmup_steps >= 0, f"warmup_steps={self.warmup_steps}: use >= 0."),
            (self.lora_r >= 0 and self.lora_alpha > 0, "lora_r must be >= 0 (0 = full fine-tuning) and lora_alpha > 0."),
            (self.save_steps >= 1, f"save_steps={self.save_steps}: use at least 1."),
            (self.nproc >= 1, f"nproc={self.nproc}: use at least 1 process."),
            (self.threads >= 0, f"threads={self.threads}: use 0 (automatic) or a positive count."),
            (self.eval_every >= 0, f"eval_every={self.eval_every}: use 0 (final model only) or a positive count."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        unknown = sorted(set(self.report_to) - set(REPORTERS))
        if unknown:
            raise ValueError(f"report_to has unknown logger(s) {unknown}; valid: {', '.join(REPORTERS)} (or leave it empty).")
        if isinstance(self.objective, dict):
            ObjectiveConfig.from_dict(self.objective, "objective")

    @classmethod
    def from_preset(cls, preset: str = "cpu", **overrides: Any) -> TrainConfig:
        """The preset's values, then `overrides` (None values are ignored)."""
        if preset not in PRESETS:
            raise ValueError(f"Unknown preset {preset!r}; valid: {', '.join(PRESETS)}.")
        values = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
        return cls.from_dict({**values, "preset": preset}, f"preset {preset}")

    def objective_config(self) -> ObjectiveConfig:
        """The objective config this names: defaults, a saved name, a file, or inline."""
        from cuset.objective import load_named

        value = self.objective
        if isinstance(value, dict):
            return ObjectiveConfig.from_dict(value, "objective")
        if not value:
            return ObjectiveConfig()
        if Path(value).expanduser().is_file():
            return ObjectiveConfig.load(Path(value).expanduser())
        return load_named(value)

    def resolved(self) -> TrainConfig:
        """A copy with the objective inlined and bf16 decided for this machine."""
        bf16 = bf16_supported() if self.bf16 is None else self.bf16
        return replace(self, objective=self.objective_config().to_dict(), bf16=bf16, report_to=list(self.report_to))



def field_help() -> dict[str, str]:
    """Field name -> help text (the CLI and the app show these)."""
    return {f.name: f.metadata.get("help", "") for f in fields(TrainConfig)}


def bf16_supported() -> bool:
    """bfloat16 is fast where training runs: a CUDA GPU that supports it, else (no GPU) a CPU
    with avx512_bf16 / AMX (cuset.bf16.cpu_bf16_fast)."""
    import torch

    from cuset import bf16

    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    return bf16.cpu_bf16_fast()
