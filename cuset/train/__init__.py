"""Fine-tuning: SFT, DFT, ProFit, Rho-1 SLM, token-mask, region-weight and CuSeT on transformers' Trainer.

    cuset train --method cuset --preset cpu            # a background job, followed with a progress bar
    cuset train --method sft --preset tiny --detach    # print the job id and return
    python -m cuset.train.run JOB_DIR                  # the job process (also under torchrun)

    from cuset.train import FineTune, TrainConfig
    result = FineTune(TrainConfig.from_preset("tiny", method="cuset"), "out/").run()

Modules: `config` (TrainConfig, presets), `data` (examples aligned with the base-model
scores), `loss` (each method's per-batch loss over cuset.objective's functions), `trainer`
(CusetTrainer, the metrics callback), `metrics` (per-step figures, metrics.jsonl), `recipe`
(the steps of one fine-tune), `run` (the job entry point), `commands` (the `train` and
`jobs` CLI verbs). Importing this package is cheap: transformers loads with the recipe.
"""

from typing import Any

from cuset.train.config import PRESETS, TrainConfig, bf16_supported, field_help
from cuset.train.metrics import read_metrics

__all__ = ["PRESETS", "FineTune", "TrainConfig", "bf16_supported", "field_help", "last_checkpoint", "read_metrics", "train"]


def __getattr__(name: str) -> Any:
    if name in ("FineTune", "last_checkpoint", "train"):
        from cuset.train import recipe

        return getattr(recipe, name)
    raise AttributeError(f"module 'cuset.train' has no attribute {name!r}")
