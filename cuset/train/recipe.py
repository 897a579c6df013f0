"""The fine-tuning recipe: samples -> base-model scores -> objective -> model -> Trainer.

    from cuset.train import FineTune, TrainConfig
    result = FineTune(TrainConfig.from_preset("tiny", method="cuset"), "out/").run()

Steps, in order (each a method, so tests can run part of it):

    _training_arguments  TrainingArguments (initialises the process group under torchrun)
    _setup_tokenizer     the model's tokenizer and fingerprint (as scoring names them)
    _setup_data          load the data set, keep `holdout` evenly spread samples out of training,
                         then `max_samples` evenly spread samples of the rest
    _check_lengths       render each sample as scoring does; count those longer than max_length
                         and drop them (`overlength: drop`) or keep them cut and flagged
                         (`cut`); the counts go to the log, data.json and result.json
    _score_base          base-model scores (cuset.confidence.score_dataset, cached on disk),
                         then cuset.objective.compute: protected set, static mask, weights
                         (and `slm`'s reference log-probabilities, aligned by the same path).
                         `sft`/`dft`/`profit` need no scores: only the sensitivity tags are computed.
                         Under several processes rank 0 scores first, the others read the cache.
    _setup_examples      align the per-token arrays onto each rendered sample
    _setup_model         the model in float32 (bf16 runs under autocast), LoRA when lora_r > 0
    _setup_trainer       CusetTrainer with the metrics callback
    run                  train (resuming from the last complete checkpoint), save the final
                         model, the held-out NLL (cuset.train.heldout) and result.json

Outputs in `out_dir`: data.json (the sample counts, written before training starts),
metrics.jsonl, checkpoints/checkpoint-N/, final/ and result.json (which repeats data.json
under "data").
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cuset.train.config import TrainConfig
from cuset.train.data import ExampleDataset, align_examples, collate, placeholder_scores, spread_subset

SCORING_METHODS = ("token-mask", "region-weight", "cuset", "slm")


class Progress(Protocol):
    """What a running job reports (cuset.jobs' reporter implements it)."""

    def phase(self, text: str) -> None: ...

    def progress(self, step: int, total: int, eta_s: float) -> None: ...


def last_checkpoint(folder: Path) -> Path | None:
    """The newest complete checkpoint in `folder`: trainer_state.json is written last, and a
    process killed while writing it leaves it empty or cut, so it must also parse."""
    if not folder.is_dir():
        return None
    found = []
    for path in folder.glob("checkpoint-*"):
        suffix = path.name.removeprefix("checkpoint-")
        if suffix.isdigit() and (path / "trainer_state.json").is_file():
            found.append((int(suffix), path))
    for _, path in sorted(found, reverse=True):
        try:
            json.loads((path / "trainer_state.json").read_text())
        except (ValueError, OSError):
            continue
        return path
    return None


class FineTune:
    """One fine-tune of `config` writing into `out_dir` (see the module docstring)."""

    def __init__(self, config: TrainConfig, out_dir: str | Path, reporter: Progress | None = None, log: Callable[[str], None] = print) -> None:
        self.config = config.resolved()
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir = Path(self.config.output_dir) if self.config.output_dir else self.out_dir
        self.checkpoint_dir = self.run_dir / "checkpoints"
        self.reporter = reporter
        self.log = log
        self.timings: dict[str, float] = {}
        self.trainer: Any = None
        self.heldout_samples: list[Any] = []
        self.heldout: dict[str, Any] = {}

    # --- steps -----------------------------------------------------------------------------

    def _setup_environment(self) -> None:
        """Loggers write into the job folder; wandb stays offline."""
        if "tensorboard" in self.config.report_to:
            os.environ.setdefault("TENSORBOARD_LOGGING_DIR", str(self.out_dir / "runs"))
        if "mlflow" in self.config.report_to:
            os.environ.setdefault("MLFLOW_TRACKING_URI", (self.out_dir / "mlruns").resolve().as_uri())
        if "wandb" in self.config.report_to:
            os.environ.setdefault("WANDB_MODE", "offline")
            os.environ.setdefault("WANDB_DIR", str(self.out_dir))
        import importlib.util

        for name in self.config.report_to:
            if importlib.util.find_spec(name) is None:
                raise ValueError(f"report_to includes {name!r} but the package is not installed: `pip install {name}`, or drop it from report_to.")

    def _training_arguments(self) -> Any:
        import torch
        from transformers import TrainingArguments

        c = self.config
        cuda = torch.cuda.is_available()
        several = int(os.environ.get("WORLD_SIZE", "1")) > 1
        return TrainingArguments(
            output_dir=str(self.checkpoint_dir),
            per_device_train_batch_size=c.batch_size,
            gradient_accumulation_steps=c.grad_accum,
            learning_rate=c.lr,
            lr_scheduler_type="cosine",
            warmup_steps=c.warmup_steps,
            num_train_epochs=c.epochs if c.epochs > 0 else 1.0,
            max_steps=c.max_steps if c.max_steps > 0 else -1,
            bf16=bool(c.bf16),
            gradient_checkpointing=c.gradient_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False} if c.gradient_checkpointing else None,
            use_cpu=not cuda,
            ddp_backend="gloo" if several and not cuda else None,
            ddp_find_unused_parameters=False,
            save_strategy="steps",
            save_steps=c.save_steps,
            save_total_limit=2,
            logging_steps=1,
            report_to=list(c.report_to) or "none",
            run_name=self.out_dir.name,
            seed=c.seed,
            data_seed=c.seed,
            remove_unused_columns=False,
            dataloader_pin_memory=cuda,
            disable_tqdm=True,
            average_tokens_across_devices=True,
        )

    def _setup_tokenizer(self) -> None:
        from transformers import AutoTokenizer

        from cuset import models

        self.resolved = models.resolve(self.config.model)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.resolved.source)
        except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear message
            raise models.ModelError(
                f"Could not load the tokenizer of model {self.config.model!r} from {self.resolved.source!r} "
                f"({type(exc).__name__}). Use 'default', 'tiny', a local model folder, or a hub id this machine can reach."
            ) from exc
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.tokenizer.eos_token_id or 0))

    def _setup_data(self) -> None:
        from cuset.data import load
        from cuset.train.heldout import heldout_split

        samples = load(self.config.data)
        held, pool = heldout_split(len(samples), self.config.holdout)
        self.heldout_samples = [samples[i] for i in held]
        keep = pool[spread_subset(len(pool), self.config.max_samples)]
        self.samples = [samples[i] for i in keep]
        kept_out = f", {len(held)} held out" if len(held) else ""
        self.log(f"data: {len(self.samples)} of {len(samples)} samples from {self.config.data}{kept_out}")

    def _check_lengths(self) -> None:
        """Render every sample with the model's chat template (as scoring and training see it)
        and deal with the ones longer than max_length as `overlength` says. Writes data.json."""
        from cuset.confidence import render

        c = self.config
        rendered = [render(s, self.tokenizer, self._score_config(), self.resolved.fingerprint) for s in self.samples]
        lengths = [len(r.input_ids) if not r.truncated else None for r in rendered]
        over = [i for i, r in enumerate(rendered) if r.truncated]
        over_ids = [self.samples[i].id for i in over]
        stats: dict[str, Any] = {
            "max_length": c.max_length,
            "overlength": c.overlength,
            "n_selected": len(self.samples),
            "n_overlength": len(over),
            "n_dropped": len(over) if c.overlength == "drop" else 0,
            "n_cut": len(over) if c.overlength == "cut" else 0,
            "overlength_ids": over_ids,
            "longest_kept_tokens": max((n for n in lengths if n is not None), default=0),
        }
        if over and c.overlength == "drop":
            if len(over) == len(self.samples):
                raise ValueError(
                    f"All {len(over)} samples are longer than max_length={c.max_length} tokens under {c.model!r}'s tokenizer: "
                    "raise max_length, or set overlength: cut to train on their first max_length tokens."
                )
            keep = [i for i in range(len(self.samples)) if not rendered[i].truncated]
            self.samples = [self.samples[i] for i in keep]
            rendered = [rendered[i] for i in keep]
            self.log(f"data: dropped {len(over)} of {stats['n_selected']} samples longer than max_length={c.max_length} tokens "
                     f"(overlength: drop): {', '.join(over_ids[:10])}{' ...' if len(over) > 10 else ''}")
        elif over:
            self.log(f"data: WARNING {len(over)} of {stats['n_selected']} samples are longer than max_length={c.max_length} tokens and are CUT "
                     f"there (overlength: cut; their tail and end of turn are not trained on): {', '.join(over_ids[:10])}{' ...' if len(over) > 10 else ''}")
        else:
            self.log(f"data: all {len(self.samples)} samples fit max_length={c.max_length} whole (longest {stats['longest_kept_tokens']} tokens)")
        stats["n_trained"] = len(self.samples)
        self.rendered = rendered
        self.data_stats = stats
        if int(os.environ.get("RANK", "0")) == 0:
            (self.out_dir / "data.json").write_text(json.dumps(stats, indent=2))
        if over:
            self._phase(f"data: {len(over)} of {stats['n_selected']} samples over max_length {c.max_length}: "
                        f"{'dropped' if c.overlength == 'drop' else 'cut'}")

    def _score_config(self) -> Any:
        from cuset.confidence import ScoreConfig

        # The base model's scores in the model's own scoring dtype (not the training dtype): they
        # describe the model, and so come from the shipped or cached scores where they exist.
        return ScoreConfig(model=self.config.model, max_length=self.config.max_length)

    def _score_base(self) -> None:
        """The objective's decisions for every token, fixed before training."""
        from cuset import models
        from cuset.confidence import TokenTable, score_dataset
        from cuset.objective import compute
        from cuset.sensitivity import tag

        started = time.perf_counter()
        score_config = self._score_config()
        if self.config.method in SCORING_METHODS:
            self._phase(f"scoring {len(self.samples)} samples under the base model (cached)")
            scored = score_dataset(self.samples, score_config, self._scoring_progress, dataset_name=self.config.data)
            table = scored.table
            self.scoring_stats = {k: v for k, v in scored.stats.items() if isinstance(v, int | float | str)}
            models.load.cache_clear()  # the scoring copy of the model is not needed any more
        else:
            tags = [tag(s.response) for s in self.samples]
            table = TokenTable.build([placeholder_scores(s.id, r) for s, r in zip(self.samples, self.rendered)], tags)
            self.scoring_stats = {}
        self.table = table
        self.objective = compute(table, self.config.objective_config(), self.config.method)
        self.timings["scoring_s"] = time.perf_counter() - started
        s = self.objective.stats
        self.log(
            f"objective ({self.config.method}): masked {s['masked_fraction']:.1%} at base-model scores, "
            f"{s['n_regions']} regions, weights mean {s['weight_mean']:.2f} ess {s['effective_sample_size']:.1f} of {s['n_samples']}"
        )

    def _setup_examples(self) -> None:
        examples = align_examples([s.id for s in self.samples], self.rendered, self.table, self.objective)
        dropped = len(self.samples) - len(examples)
        if not examples:
            raise ValueError(f"No sample has response tokens within max_length={self.config.max_length}; raise max_length.")
        if dropped:
            self.log(f"data: left out {dropped} samples whose prompt fills max_length={self.config.max_length}")
        self.examples = examples
        lengths = np.array([len(e) for e in examples])
        self.log(f"data: {len(examples)} examples, {int(lengths.sum())} tokens, {int(sum(e.target.sum() for e in examples))} trained-on")

    def _setup_model(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, set_seed

        from cuset.models import slow_bf16_note

        set_seed(self.config.seed)
        model = AutoModelForCausalLM.from_pretrained(self.resolved.source, dtype=torch.float32)
        model.config.use_cache = False
        if self.config.lora_r > 0:
            from peft import LoraConfig, get_peft_model

            lora = LoraConfig(r=self.config.lora_r, lora_alpha=self.config.lora_alpha, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
            model = get_peft_model(model, lora)
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        total = sum(p.numel() for p in model.parameters())
        self.log(f"model: {self.config.model} ({total / 1e6:.1f} M parameters, {trainable / 1e6:.2f} M trained), bf16 {self.config.bf16}")
        slow = slow_bf16_note("bfloat16", "cuda" if torch.cuda.is_available() else "cpu") if self.config.bf16 else ""
        if slow:
            self.log(f"warning: bf16 autocast as configured, but {slow}; bf16: false trains in float32 (another recipe)")
        self.model = model

    def _setup_trainer(self) -> None:
        from transformers.trainer_callback import PrinterCallback

        from cuset.train.loss import LossSpec
        from cuset.train.metrics import StepStats
        from cuset.train.trainer import CusetTrainer, MetricsCallback

        stats = StepStats()
        on_progress = self.reporter.progress if self.reporter is not None else None
        self.trainer = CusetTrainer(
            model=self.model,
            args=self.args,
            train_dataset=ExampleDataset(self.examples),
            data_collator=lambda items: collate(items, self.pad_id),
            spec=LossSpec(self.config.method, self.config.objective_config(), self.config.profit_threshold, self.config.slm_fraction),
            step_stats=stats,
            callbacks=[MetricsCallback(stats, self.out_dir / "metrics.jsonl", on_progress)],
        )
        self.trainer.remove_callback(PrinterCallback)  # MetricsCallback prints a line per step

    # --- the recipe ------------------------------------------------------------------------

    def prepare(self) -> Any:
        """Every step up to a ready Trainer; returns it."""
        self._setup_environment()
        self.args = self._training_arguments()
        self._setup_tokenizer()
        with self.args.main_process_first(desc="base-model scores"):
            self._setup_data()
            self._check_lengths()
            self._score_base()
        self._setup_examples()
        self._setup_model()
        self._setup_trainer()
        return self.trainer

    def run(self) -> dict[str, Any]:
        """Prepare, train (resuming from the last complete checkpoint), save; returns result.json's content."""
        started = time.perf_counter()
        trainer = self.prepare()
        resume = last_checkpoint(self.checkpoint_dir)
        if resume is not None:
            self.log(f"resuming from {resume.name}")
        self._phase("training")
        train_started = time.perf_counter()
        with self.bf16_matmuls():
            trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        self.timings["train_s"] = time.perf_counter() - train_started
        self._phase("saving")
        final = self.run_dir / "final"
        trainer.save_model(str(final))
        if trainer.is_world_process_zero():
            self.tokenizer.save_pretrained(str(final))
            freed = drop_resume_state(self.checkpoint_dir)
            if freed:
                self.log(f"final model saved: removed the checkpoints' optimizer states ({freed / 2**30:.2f} GiB), kept their weights for `cuset eval --checkpoint`")
        self.heldout = self._heldout()
        self.timings["total_s"] = time.perf_counter() - started
        result = self._result(resume, final)
        if trainer.is_world_process_zero():
            (self.out_dir / "result.json").write_text(json.dumps(result, indent=2))
        return result

    def _heldout(self) -> dict[str, Any]:
        """The final model's plain NLL on the held-out samples ({} without holdout); rank 0 only."""
        from cuset.confidence import render
        from cuset.train.heldout import heldout_nll

        if not self.heldout_samples or not self.trainer.is_world_process_zero():
            return {}
        started = time.perf_counter()
        self._phase(f"held-out NLL on {len(self.heldout_samples)} samples")
        rendered = [render(s, self.tokenizer, self._score_config(), self.resolved.fingerprint) for s in self.heldout_samples]
        with self.bf16_matmuls():
            figures = heldout_nll(self.trainer.model, rendered, bool(self.config.bf16), [s.id for s in self.heldout_samples])
        self.timings["heldout_s"] = time.perf_counter() - started
        figures["n_cut"] = sum(r.truncated for r in rendered)
        self.log(f"held-out NLL {figures['nll']:.4f} over {figures['n_tokens']} tokens of {figures['n_samples']} samples")
        return figures

    def bf16_matmuls(self) -> contextlib.AbstractContextManager:
        """bf16 autocast on a CPU without bf16 products: its matmuls as float32 GEMMs on the bf16
        values (cuset.bf16), the same numbers ~50x faster than torch's fallback kernel."""
        import torch

        from cuset import bf16

        device = "cuda" if torch.cuda.is_available() else "cpu"
        if not (self.config.bf16 and bf16.enabled("bfloat16", device)):
            return contextlib.nullcontext()
        self.log("bf16: this CPU has no bfloat16 products; bf16 matmuls and attention run as float32 GEMMs on the bf16 values (cuset.bf16)")
        return bf16.cpu_matmuls("bfloat16", device)

    def _result(self, resume: Path | None, final: Path) -> dict[str, Any]:
        from cuset.train.metrics import read_metrics

        rows = read_metrics(self.out_dir / "metrics.jsonl")
        tail = rows[-5:]

        def mean(key: str) -> float | None:
            values = [r[key] for r in tail if isinstance(r.get(key), int | float)]
            return float(np.mean(values)) if values else None

        speeds = [r["tokens_per_s"] for r in rows if isinstance(r.get("tokens_per_s"), int | float)]
        return {
            "method": self.config.method,
            "model": self.config.model,
            "steps": int(self.trainer.state.global_step),
            "final_loss": rows[-1]["loss"] if rows else None,
            "final_nll": rows[-1]["nll"] if rows else None,
            "loss_last5": mean("loss"),
            "nll_last5": mean("nll"),
            "tokens_per_s": float(np.median(speeds)) if speeds else None,
            "resumed_from": resume.name if resume else None,
            "final_model": str(final),
            "n_examples": len(self.examples),
            "data": self.data_stats,
            "seed": self.config.seed,
            "objective": {k: v for k, v in self.objective.stats.items() if not isinstance(v, dict)},
            "scoring": self.scoring_stats,
            **({"heldout": self.heldout} if self.heldout else {}),
            **{k: round(v, 2) for k, v in self.timings.items()},
        }

    # --- reporting -------------------------------------------------------------------------

    def _phase(self, text: str) -> None:
        self.log(text)
        if self.reporter is not None:
            self.reporter.phase(text)

    def _scoring_progress(self, done: int, total: int) -> None:
        if self.reporter is not None:
            self.reporter.phase(f"scoring base model {done}/{total} samples")


def train(config: TrainConfig, out_dir: str | Path, reporter: Progress | None = None) -> dict[str, Any]:
    """Run one fine-tune in this process; returns what result.json holds."""
    return FineTune(config, out_dir, reporter).run()


RESUME_ONLY = ("optimizer.pt", "scheduler.pt", "scaler.pt")  # a finished fine-tune never resumes


def drop_resume_state(checkpoint_dir: Path) -> int:
    """Remove what only resuming needs (optimizer, scheduler, scaler states) from every
    checkpoint once the final model is saved: a full fine-tune's Adam state is twice its
    weights (SmolLM2-135M: 1.1 of a checkpoint's 1.6 GB). The weights and trainer_state.json
    stay, so a checkpoint can still be evaluated. Returns the bytes freed."""
    freed = 0
    for path in sorted(Path(checkpoint_dir).glob("checkpoint-*/*")):
        if path.name in RESUME_ONLY or path.name.startswith("rng_state"):
            freed += path.stat().st_size
            path.unlink()
    return freed
