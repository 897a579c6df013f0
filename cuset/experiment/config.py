"""An experiment as data: `analysis/experiments/NAME.yaml`, validated by `ExperimentConfig`.

    name: cpu-135m                      # optional: the file's stem
    description: SmolLM2-135M, four methods, one seed
    models: [smollm2-135m]
    methods: [sft, cuset, dft, profit]  # any of cuset.objective.METHODS, or `base` (no fine-tune)
    seeds: [42]
    preset: cpu                         # the TrainConfig preset the fine-tunes start from
    train: {max_samples: 64, max_steps: 32}   # TrainConfig overrides (not model/method/seed)
    evaluation:                         # how every model is evaluated
      suite: bundled
      levels: [1, 2]
      n_samples: 4                      # sampled candidates per task (0 = none) ...
      temperature: 0.8                  # ... at this temperature
      greedy: true                      # and one greedy candidate per task
      max_new_tokens: 1024
      options: {trials: 5}              # any other EvalConfig field
    estimate: {train_min: 15, greedy_min: 20, sampled_min: 40}   # minutes per unit: the ETA's prior
    select: {top: 0.5, by: region_score}   # optional: train on the top half of the data by region score
                                        # (cuset.selection, on each model's own scores; written to
                                        # analysis/results/NAME/selections/ and used as the data)
    variants:                           # optional: a method with other objective / train settings,
      cuset-cuda: {method: cuset, objective: {mask_scope: cuda}}   # named in methods like a method
    method_seeds: {sft: [42, 43]}       # optional: other seeds for some methods (or variants)
    registration: {primary: pass@1, mode: sampled, comparisons: [cuset - sft], n_samples: 4,
                   tasks: 49, alpha: 0.05, registered: 2026-12-05}   # optional, cuset.experiment.registration

A validation experiment evaluates nothing on the test tasks (`evaluation: {greedy: false,
n_samples: 0}`): its fine-tunes keep `train: {holdout: N}` corpus samples out, and the results
compare their held-out NLL (cuset.experiment.validation), which is how an objective variant is
chosen before the test tasks are run (issue 31).

Unknown keys, methods or presets are rejected with the list of valid ones, and every train
override and evaluation setting is checked by building the TrainConfig / EvalConfig it makes,
so a typo fails before anything runs. A variant's name stands for the method everywhere in
the results (unit keys, candidates.csv, the tables); its fine-tune runs the variant's `method`
with the experiment's train overrides, then the variant's `train`, and its `objective` keys
over the experiment's objective.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from cuset.config import ConfigFile
from cuset.experiment.registration import Registration
from cuset.objective import METHODS

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS_DIR = REPO / "analysis" / "experiments"
RESULTS_DIR = REPO / "analysis" / "results"
BASE = "base"  # the model as it is, without fine-tuning
RESERVED_TRAIN_KEYS = ("model", "method", "seed", "preset", "evaluate", "eval_every", "output_dir")
MODES = ("greedy", "sampled")
ESTIMATE_KEYS = ("train_min", "greedy_min", "sampled_min")
VARIANT_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]*")  # no '_' (replies/ file names split on it), '/' (unit keys) or spaces (run labels)


@dataclass
class EvalSettings(ConfigFile):
    """How each model of the experiment is evaluated (a greedy and/or a sampled pass)."""

    KIND: ClassVar[str] = "experiment evaluation"

    suite: str = field(default="bundled", metadata={"help": "EvalConfig.suite: 'bundled', 'corpus', a KernelBench folder or hf:NAME."})
    levels: list[int] = field(default_factory=list, metadata={"help": "Levels to keep; empty = all."})
    split: str = field(default="", metadata={"help": "'in_distribution', 'held_out' or '' (both)."})
    limit: int = field(default=0, metadata={"help": "First N tasks only (0 = all)."})
    backend: str = field(default="cpu", metadata={"help": "Where candidates run (cpu, compile, cuda)."})
    n_samples: int = field(default=0, metadata={"help": "Sampled candidates per task (0 = no sampled pass)."})
    temperature: float = field(default=0.8, metadata={"help": "Temperature of the sampled pass."})
    greedy: bool = field(default=True, metadata={"help": "Also one greedy candidate per task."})
    max_new_tokens: int = field(default=1536, metadata={"help": "Reply length cap, tokens."})
    options: dict[str, Any] = field(default_factory=dict, metadata={"help": "Any other EvalConfig field (trials, tolerance, timeout_s, ...)."})

    def __post_init__(self) -> None:
        if self.n_samples and self.temperature <= 0:
            raise ValueError(f"evaluation: n_samples={self.n_samples} needs temperature > 0 (e.g. 0.8); greedy replies come from greedy: true.")
        reserved = sorted(set(self.options) & {"model", "method", "seed", "label", "n_samples", "temperature", "train_job", "solutions"})
        if reserved:
            raise ValueError(f"evaluation.options sets {reserved}: the experiment sets those itself (use n_samples/temperature/greedy above).")
        self.levels = [int(x) for x in self.levels]
        for mode in self.modes:  # every setting checked by the EvalConfig it makes
            self.eval_values(mode, "tiny", 0)

    @property
    def modes(self) -> list[str]:
        return [m for m in MODES if (m == "greedy" and self.greedy) or (m == "sampled" and self.n_samples > 0)]

    def eval_values(self, mode: str, model: str, seed: int) -> Any:
        """The EvalConfig of one pass (`mode` greedy or sampled) of `model` with `seed`."""
        from cuset.evaluate.evaluation import EvalConfig

        values = {
            "suite": self.suite, "levels": list(self.levels), "split": self.split, "limit": self.limit, "backend": self.backend,
            "max_new_tokens": self.max_new_tokens, "seed": seed, "model": model,
            "n_samples": 1 if mode == "greedy" else self.n_samples, "temperature": 0.0 if mode == "greedy" else self.temperature,
            **self.options,
        }
        return EvalConfig.from_dict(values, "experiment evaluation")


@dataclass
class Variant(ConfigFile):
    """A method run with other settings, side by side with the method itself."""

    KIND: ClassVar[str] = "experiment variant"

    method: str = field(default="", metadata={"help": f"The method it varies, one of {METHODS}."})
    objective: dict[str, Any] = field(default_factory=dict, metadata={"help": "ObjectiveConfig fields over the experiment's objective (e.g. mask_scope: cuda)."})
    train: dict[str, Any] = field(default_factory=dict, metadata={"help": "TrainConfig overrides over the experiment's train (not model, method, seed, objective)."})

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method={self.method!r}: a variant varies one of {', '.join(METHODS)}.")
        reserved = sorted(set(self.train) & {*RESERVED_TRAIN_KEYS, "objective"})
        if reserved:
            raise ValueError(f"train sets {reserved}: the experiment sets model, method and seed; put objective fields under objective.")


@dataclass
class ExperimentConfig(ConfigFile):
    """Models x methods x seeds, their fine-tuning and their evaluation."""

    KIND: ClassVar[str] = "experiment"

    name: str = field(default="", metadata={"help": "The experiment's name (default: the file's stem); results go to analysis/results/NAME/."})
    description: str = field(default="", metadata={"help": "One line on what it compares."})
    models: list[str] = field(default_factory=list, metadata={"help": "Model names (cuset.models)."})
    methods: list[str] = field(default_factory=list, metadata={"help": f"Methods, from {(BASE, *METHODS)}; `sft` is the paired comparisons' reference."})
    seeds: list[int] = field(default_factory=lambda: [42], metadata={"help": "Seeds of training (init, data order) and sampling."})
    preset: str = field(default="cpu", metadata={"help": "TrainConfig preset the fine-tunes start from."})
    train: dict[str, Any] = field(default_factory=dict, metadata={"help": "TrainConfig overrides on top of the preset."})
    evaluation: EvalSettings = field(default_factory=EvalSettings, metadata={"help": "How every model is evaluated."})
    estimate: dict[str, float] = field(default_factory=dict, metadata={"help": f"Minutes per unit, {', '.join(ESTIMATE_KEYS)}: the ETA's prior until units finish."})
    max_attempts: int = field(default=3, metadata={"help": "Runs of a job (first + resumes) before its unit counts as failed."})
    select: dict[str, Any] = field(default_factory=dict, metadata={"help": "Train on a selection of the data: {top: fraction or count, by: region_score|weight} (cuset.selection); {} = all."})
    variants: dict[str, Variant] = field(default_factory=dict, metadata={"help": "name -> {method, objective, train}: a method with other settings, listed in methods by its name."})
    method_seeds: dict[str, list[int]] = field(default_factory=dict, metadata={"help": "method (or variant) -> its seeds, instead of seeds."})
    registration: Registration | None = field(default=None, metadata={"help": "What it will test, fixed before it runs (cuset.experiment.registration); none = every comparison exploratory."})

    source: ClassVar[Path | None] = None  # the YAML it was loaded from; load_experiment sets it on the instance (registration copies it)

    def __post_init__(self) -> None:
        if isinstance(self.evaluation, dict):
            self.evaluation = EvalSettings.from_dict(self.evaluation, "experiment evaluation")
        self._check_variants()
        valid = (BASE, *METHODS, *self.variants)
        unknown = [m for m in self.methods if m not in valid]
        checks = [
            (bool(self.models), "models is empty: name at least one model (e.g. smollm2-135m)."),
            (bool(self.methods), f"methods is empty: name some of {', '.join(valid)}."),
            (not unknown, f"unknown method(s) {unknown}; valid: {', '.join(valid)}."),
            (len(set(self.methods)) == len(self.methods) and len(set(self.models)) == len(self.models), "models and methods must not repeat."),
            (bool(self.seeds) and len(set(self.seeds)) == len(self.seeds), "seeds: give one or more distinct integers."),
            (self.max_attempts >= 1, f"max_attempts={self.max_attempts}: use at least 1."),
            (set(self.estimate) <= set(ESTIMATE_KEYS), f"estimate has unknown keys {sorted(set(self.estimate) - set(ESTIMATE_KEYS))}; valid: {', '.join(ESTIMATE_KEYS)}."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"experiment {self.name or '(unnamed)'}: {message}")
        self.seeds = [int(s) for s in self.seeds]
        if not self.evaluation.modes:
            self._check_validation()
        if self.select:
            from cuset.selection import BY, selection_size

            unknown_keys = sorted(set(self.select) - {"top", "by"})
            if unknown_keys or "top" not in self.select:
                raise ValueError(f"experiment {self.name}: select has {'unknown keys ' + str(unknown_keys) if unknown_keys else 'no top'}; write select: {{top: 0.5, by: region_score}}.")
            selection_size(float(self.select["top"]), 1000)
            if self.select.setdefault("by", "region_score") not in BY:
                raise ValueError(f"experiment {self.name}: select.by={self.select['by']!r}; valid: {', '.join(BY)}.")
        reserved = sorted(set(self.train) & set(RESERVED_TRAIN_KEYS))
        if reserved:
            raise ValueError(f"experiment {self.name}: train sets {reserved}; the experiment sets those (models, methods, seeds, preset).")
        bad_seeds = {m: s for m, s in self.method_seeds.items() if m not in self.methods or not s or len(set(s)) != len(s)}
        if bad_seeds:
            raise ValueError(f"experiment {self.name}: method_seeds {bad_seeds}: each key a method of the experiment "
                             f"({', '.join(self.methods)}), each value one or more distinct integers.")
        self.method_seeds = {m: [int(x) for x in s] for m, s in self.method_seeds.items()}
        for model in self.models:  # every override checked by the TrainConfig it makes
            for method in self.trained_methods:
                self.train_config(model, method, self.seeds_of(method)[0])
        if isinstance(self.registration, dict):
            self.registration = Registration.from_dict(self.registration, f"experiment {self.name}, registration")
        if self.registration is not None:
            try:
                self.registration.check(self)
            except ValueError as exc:
                raise ValueError(f"experiment {self.name}, registration: {exc}") from None

    @property
    def validation(self) -> bool:
        """A validation experiment: fine-tunes judged by their held-out NLL, no evaluation pass."""
        return not self.evaluation.modes

    def _check_validation(self) -> None:
        where = f"experiment {self.name or '(unnamed)'}"
        if BASE in self.methods:
            raise ValueError(f"{where}: evaluation sets no pass (greedy: false, n_samples: 0), so this is a validation experiment, "
                             f"and `{BASE}` has no fine-tune to validate; remove it, or set greedy: true or n_samples >= 1.")
        if int(self.train.get("holdout", 0) or 0) < 1:
            raise ValueError(f"{where}: evaluation sets no pass (greedy: false, n_samples: 0) and train sets no holdout, so nothing is "
                             "measured: set greedy: true or n_samples >= 1, or train: {holdout: N} for a validation experiment.")
        if self.registration is not None:
            raise ValueError(f"{where}: a validation experiment registers nothing (it chooses what a later experiment registers); remove registration.")

    def _check_variants(self) -> None:
        variants = {}
        for name, spec in self.variants.items():
            where = f"experiment {self.name}, variant {name!r}"
            if not VARIANT_NAME.fullmatch(str(name)) or name in (BASE, *METHODS):
                raise ValueError(f"{where}: name it with lower-case letters, digits, '.', '+' or '-' (no '_'), and not after a method "
                                 f"({BASE}, {', '.join(METHODS)}); e.g. cuset-cuda.")
            if name not in self.methods:
                raise ValueError(f"{where} is not in methods ({', '.join(self.methods)}): list it there, or remove it.")
            variants[name] = spec if isinstance(spec, Variant) else Variant.from_dict(dict(spec or {}), where)
        self.variants = variants

    def to_dict(self) -> dict[str, Any]:
        """The fields, without variants, method_seeds and registration where they are empty: the
        experiment.yaml of an experiment that uses none of them stays as it was written before."""
        data = super().to_dict()
        for key in ("variants", "method_seeds", "registration"):
            if not data[key]:
                del data[key]
        return data

    def seeds_of(self, method: str) -> list[int]:
        """The seeds `method` (or variant) runs with: method_seeds' where it names them, else seeds."""
        return self.method_seeds.get(method, self.seeds)

    @property
    def trained_methods(self) -> list[str]:
        return [m for m in self.methods if m != BASE]

    def train_config(self, model: str, method: str, seed: int) -> Any:
        """The TrainConfig of one fine-tune (not resolved: that happens when it is submitted);
        `method` may name a variant."""
        from cuset.train.config import TrainConfig

        values = {**self.train}
        variant = self.variants.get(method)
        if variant is not None:
            values.update(variant.train)
            if variant.objective:
                base = values.get("objective") or {}
                if not isinstance(base, dict):  # a saved name or a file: its values, then the variant's
                    base = TrainConfig(objective=base).objective_config().to_dict()
                values["objective"] = {**base, **variant.objective}
        where = f"variant {method!r}" if variant is not None else "train"
        try:
            return TrainConfig.from_preset(self.preset, **{**values, "model": model, "method": variant.method if variant else method, "seed": seed})
        except ValueError as exc:
            raise ValueError(f"experiment {self.name}, {where}: {exc}") from None


def experiment_path(name: str) -> Path:
    """analysis/experiments/NAME.yaml, or NAME itself when it is a file."""
    path = Path(name).expanduser()
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    path = EXPERIMENTS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"No experiment {name!r}; shipped: {', '.join(list_experiments()) or 'none'} (analysis/experiments/NAME.yaml).")
    return path


def list_experiments() -> list[str]:
    return sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.yaml"))


def load_experiment(name: str) -> ExperimentConfig:
    """The validated experiment NAME (or a YAML path); `name` defaults to the file's stem."""
    import yaml

    path = experiment_path(name)
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of experiment fields, got {type(data).__name__}.")
    data.setdefault("name", path.stem)
    config = ExperimentConfig.from_dict(data, str(path))
    config.source = path
    return config


def field_help() -> dict[str, str]:
    return {f.name: f.metadata.get("help", "") for f in fields(ExperimentConfig)}
