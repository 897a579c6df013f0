"""Training speed: the cost of the CuSeT loss over plain SFT, and throughput against the roofline.

    python -m benchmarks.training            # cpu preset's model (smollm2-135m), LoRA, float32, 4 x 1024 tokens, 6 pairs
    python -m benchmarks.training --small    # 2 x 512 tokens, 3 pairs (what CI runs)
    python -m benchmarks.training --full-ft  # full fine-tuning instead of LoRA
    python -m benchmarks.training --bf16     # under bfloat16 autocast

Paired step times: each batch runs one training step (forward, loss, backward, through
CusetTrainer.compute_loss under the Trainer's own autocast) as `sft` and as `cuset` (adaptive
mask + sample weights), in alternating order, on unchanged weights; the figure is the median
of the per-batch ratios cuset/sft (aim <= 1.05). Throughput: tokens (prompt + response) per
second of the `sft` steps. Roofline fraction = the FLOPs the step actually does per second
over the best FLOP/s of a 2048^3 matmul in the step's dtype, measured in the same run before
and after the steps (aim >= 0.4). The FLOPs of a step (`step_flops`), per position of the
padded batch [B, W]: forward 2 x (parameters of every matmul: the body's linear layers, the
LoRA adapters, and the vocabulary projection only at the positions it runs on,
`logits_to_keep`), plus causal attention 2 x W x hidden per layer; backward the same again for
the activation gradients (attention: twice), plus weight gradients 2 x (trainable matmul
parameters) only: with LoRA the frozen weights get none, so a LoRA step is ~4N, not 6N. The
embedding lookup does no matmul and is not counted. The samples are cut at the benchmark's
length (overlength: cut): the figure is speed, so every step has the same number of tokens.
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
        lora_r=0 if args.full_ft else 16, max_length=args.length, overlength="cut", bf16=args.bf16, grad_accum=1,
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


def matmul_peak(dtype: Any, n: int = 2048, trials: int = 5) -> float:
    """The best FLOP/s of an n^3 matmul in `dtype` over `trials` timings (the best, because
    other work on the machine only ever slows a timing down)."""
    import torch

    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    best = 0.0
    for _ in range(trials):
        started = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * n**3 / (time.perf_counter() - started))
    return best


def matmul_parameters(model: Any) -> dict[str, int]:
    """Weight elements of every matmul (torch.nn.Linear, LoRA's A and B included): `body`,
    `head` (the vocabulary projection, which runs only on the kept positions) and `trainable`
    (of either; the head when it trains counts at the kept positions too, under trainable_head)."""
    import torch

    head = model.get_output_embeddings()
    counts = {"body": 0, "head": 0, "trainable_body": 0, "trainable_head": 0}
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            part = "head" if module is head else "body"
            counts[part] += module.weight.numel()
            if module.weight.requires_grad:
                counts[f"trainable_{part}"] += module.weight.numel()
    return counts


def step_flops(model: Any, batch: dict[str, Any]) -> float:
    """FLOPs of one forward + backward of `batch` as cuset.train.loss runs it (module docstring)."""
    counts = matmul_parameters(model)
    config = model.config
    input_ids, target = batch["input_ids"], batch["target"]
    rows, width = input_ids.shape
    first = int(target.any(dim=0).nonzero()[0, 0]) - 1 if bool(target.any()) else width - 2
    positions, head_positions = rows * width, rows * (width - first)
    attention = 2.0 * rows * config.num_hidden_layers * width * width * config.hidden_size  # QK^T and AV, causal half
    forward = 2.0 * (counts["body"] * positions + counts["head"] * head_positions) + attention
    weight_grads = 2.0 * (counts["trainable_body"] * positions + counts["trainable_head"] * head_positions)
    return forward + (forward + attention) + weight_grads


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
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (the cpu preset trains in float32)")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--length", type=int, default=1024, help="tokens per sequence (samples cut there)")
    args = parser.parse_args()
    if args.small:
        args.pairs, args.batch_size, args.length = 3, 2, 512
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts its thread pool
    os.environ["CUSET_WORKSPACE"] = tempfile.mkdtemp(prefix="cuset-bench-")
    os.environ.setdefault("CUSET_MODELS_DIR", os.path.join(os.getcwd(), "workspace", "models"))

    import torch

    recipe, trainer = setup_trainer(args)
    objective = recipe.config.objective_config()
    loader = iter(trainer.get_train_dataloader())
    batches = [randomised(next(loader), seed) for seed in range(args.pairs + 1)]
    dtype = torch.bfloat16 if recipe.config.bf16 else torch.float32
    # As the fine-tune runs it: on a CPU without bf16 instructions, bf16 products as float32 GEMMs
    # (cuset.bf16); the peak is measured through the same path.
    with recipe.bf16_matmuls():
        peak_before = matmul_peak(dtype)
        paired_times(trainer, batches[:1], objective)  # warm-up: allocator, autocast caches
        times = paired_times(trainer, batches[1:], objective)
        flops = max(peak_before, matmul_peak(dtype))
    params = sum(p.numel() for p in trainer.model.parameters())
    tokens = sum(int(b["n_tokens"].sum()) for b in batches[1:])
    tokens_per_s = tokens / sum(times["sft"])
    done_per_s = sum(step_flops(trainer.model, b) for b in batches[1:]) / sum(times["sft"])
    counts = matmul_parameters(trainer.model)
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
        "step_gflops_per_s": round(done_per_s / 1e9, 1),
        "flops_per_token": round(done_per_s / tokens_per_s),
        "nominal_6n_per_token": 6 * params,
        "trainable_params": counts["trainable_body"] + counts["trainable_head"],
        "roofline": round(done_per_s / flops, 3),
        "load_average": round(os.getloadavg()[0], 2),
    }
    from cuset import bf16

    path = " (products as float32 GEMMs on the bf16 values: cuset.bf16)" if recipe.config.bf16 and bf16.enabled("bfloat16", "cpu") else ""
    figures["bf16_as_float32_gemms"] = bool(path)
    print(f"{params / 1e6:.1f} M parameters, {figures['threads']} threads, {figures['dtype']}{path}, load average {figures['load_average']}")
    print(f"step  sft {figures['sft_step_s']} s, cuset {figures['cuset_step_s']} s: cuset/sft {figures['cuset_over_sft']} (aim <= 1.05)")
    print(f"throughput {tokens_per_s:.0f} tok/s = {done_per_s / 1e9:.1f} GFLOP/s done ({figures['flops_per_token'] / params:.2f} N per token, "
          f"N = {params / 1e6:.1f} M); matmul peak {flops / 1e9:.0f} GFLOP/s ({figures['dtype']}); roofline {figures['roofline']} (aim >= 0.4)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
