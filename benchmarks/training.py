"""Training speed: the cost of the CuSeT loss over plain SFT, and throughput against the roofline.

    python -m benchmarks.training            # cpu preset: default model, LoRA, bf16, 4 x 512 tokens, 6 pairs
    python -m benchmarks.training --small    # 2 x 512 tokens, 3 pairs (what CI runs)
    python -m benchmarks.training --full-ft  # full fine-tuning instead of LoRA

Paired step times: each batch runs one training step (forward, loss, backward, through
CusetTrainer.compute_loss under the Trainer's own autocast) as `sft` and as `cuset` (adaptive
mask + sample weights), in alternating order, on unchanged weights; the figure is the median
of the per-batch ratios cuset/sft (aim <= 1.05). Throughput: tokens (prompt + response) per
second of the `sft` steps; roofline fraction = 6 x parameters x tokens/s over the FLOP/s of a
2048^3 matmul of the same dtype (aim >= 0.4). With LoRA the frozen weights get no weight
gradients, so the work done is nearer 4 x parameters per token: the 6N figure is nominal.
The cuset steps use a protected set and weights drawn at random (the cost does not depend on
the values, and scoring the base model first would take minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any


def setup_trainer(args: argparse.Namespace) -> Any:
    """A CusetTrainer on the cpu preset's model and data, without its base-model scoring."""
    from cuset.train import FineTune, TrainConfig

    config = TrainConfig.from_preset(
        "cpu", method="sft", model=args.model, batch_size=args.batch_size, max_samples=args.batch_size * (args.pairs + 1),
        lora_r=0 if args.full_ft else 16,
    )
    recipe = FineTune(config, tempfile.mkdtemp(prefix="cuset-bench-train-"), log=lambda _: None)
    return recipe, recipe.prepare()


def randomised(batch: dict[str, Any], seed: int) -> dict[str, Any]:
    """The batch with a random half of its targets protected and weights in [0.5, 2]."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    protected = batch["target"] & (torch.rand(batch["target"].shape, generator=generator) < 0.5)
    weight = 0.5 + 1.5 * torch.rand(batch["weight"].shape, generator=generator)
    return {**batch, "protected": protected, "weight": weight}


def step_seconds(trainer: Any, batch: dict[str, Any], method: str, objective: Any) -> float:
    """One forward + loss + backward as the Trainer runs it; gradients dropped afterwards."""
    from cuset.train.loss import LossSpec

    trainer.spec = LossSpec(method, objective)
    model = trainer.model
    model.train()
    num_items = batch["shift_labels"].ne(-100).sum()
    started = time.perf_counter()
    with trainer.accelerator.autocast():
        loss = trainer.compute_loss(model, batch, num_items_in_batch=num_items)
    trainer.accelerator.backward(loss)
    seconds = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    return seconds


def paired_times(trainer: Any, batches: list[dict[str, Any]], objective: Any) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"sft": [], "cuset": []}
    for index, batch in enumerate(batches):
        order = ("sft", "cuset") if index % 2 == 0 else ("cuset", "sft")
        for method in order:
            times[method].append(step_seconds(trainer, batch, method, objective))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="2 x 512 tokens, 3 pairs")
    parser.add_argument("--full-ft", action="store_true", help="full fine-tuning instead of LoRA r=16")
    parser.add_argument("--model", default="default")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    if args.small:
        args.pairs, args.batch_size = 3, 2
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts its thread pool
    os.environ["CUSET_WORKSPACE"] = tempfile.mkdtemp(prefix="cuset-bench-")
    os.environ.setdefault("CUSET_MODELS_DIR", os.path.join(os.getcwd(), "workspace", "models"))

    import torch

    from benchmarks.scoring import matmul_flops

    recipe, trainer = setup_trainer(args)
    objective = recipe.config.objective_config()
    loader = iter(trainer.get_train_dataloader())
    batches = [randomised(next(loader), seed) for seed in range(args.pairs + 1)]
    paired_times(trainer, batches[:1], objective)  # warm-up: allocator, autocast caches
    times = paired_times(trainer, batches[1:], objective)

    dtype = torch.bfloat16 if recipe.config.bf16 else torch.float32
    flops = matmul_flops(dtype)
    params = sum(p.numel() for p in trainer.model.parameters())
    tokens = sum(int(b["n_tokens"].sum()) for b in batches[1:])
    tokens_per_s = tokens / sum(times["sft"])
    ratios = [c / s for c, s in zip(times["cuset"], times["sft"])]
    figures = {
        "model": args.model,
        "lora": not args.full_ft,
        "dtype": str(dtype).removeprefix("torch."),
        "threads": torch.get_num_threads(),
        "tokens_per_step": tokens // len(batches[1:]),
        "sft_step_s": round(statistics.median(times["sft"]), 3),
        "cuset_step_s": round(statistics.median(times["cuset"]), 3),
        "cuset_over_sft": round(statistics.median(ratios), 3),
        "cuset_over_sft_total": round(sum(times["cuset"]) / sum(times["sft"]), 3),
        "tokens_per_s": round(tokens_per_s, 1),
        "matmul_gflops": round(flops / 1e9, 1),
        "roofline_6n": round(6 * params * tokens_per_s / flops, 3),
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(f"{params / 1e6:.1f} M parameters, {figures['threads']} threads, {figures['dtype']}, load average {figures['load_average']}")
    print(f"step  sft {figures['sft_step_s']} s, cuset {figures['cuset_step_s']} s: cuset/sft {figures['cuset_over_sft']} (aim <= 1.05)")
    print(f"throughput {tokens_per_s:.0f} tok/s; matmul {flops / 1e9:.0f} GFLOP/s; roofline (6N) {figures['roofline_6n']} (aim >= 0.4)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
