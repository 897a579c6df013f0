"""bfloat16 on a CPU without bf16 instructions: torch's own kernels against cuset.bf16's float32
GEMMs on the bf16 values, and float32, side by side in one run.

    python -m benchmarks.bf16            # coder-0.5b, LoRA r16, one autocast step of 128 tokens
    python -m benchmarks.bf16 --small    # the tiny model, 64 tokens (what CI runs)

Rows: a [M x K] @ [K x N] product (GFLOP/s, and the share of its elements bit-identical to
torch's bf16 kernel), then one training step as the fine-tunes run it (bf16 autocast forward,
loss, backward) in float32, in bf16 with torch's kernels and in bf16 through cuset.bf16: seconds,
the loss, and how far the gradients lie from torch's bf16 ones (relative L2), next to how far
float32's lie from them (the scale of bf16's own rounding). On a CPU with AMX / avx512_bf16 the
native row is the fast one and the fine-tunes do not use cuset.bf16; it is measured anyway.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from typing import Any


def product_rates(m: int, k: int, n: int, repeats: int = 3) -> dict[str, float]:
    import torch

    from cuset.bf16 import Float32Matmuls

    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)
    ab, bb = a.bfloat16(), b.bfloat16()
    runs = {"float32": (lambda: a @ b, None), "bfloat16 torch": (lambda: ab @ bb, None), "bfloat16 cuset.bf16": (lambda: ab @ bb, Float32Matmuls)}
    rates, outs = {}, {}
    for name, (op, mode) in runs.items():
        with mode() if mode else contextlib.nullcontext():
            outs[name] = op()
            best = float("inf")
            for _ in range(repeats):
                started = time.perf_counter()
                op()
                best = min(best, time.perf_counter() - started)
        rates[name] = 2 * m * k * n / best
    rates["identical"] = (outs["bfloat16 torch"] == outs["bfloat16 cuset.bf16"]).float().mean().item()
    return rates


def step(model: Any, ids: Any, bf16: bool, mode: Any = None) -> tuple[float, float, Any]:
    """(seconds, loss, flat gradient) of one forward + backward under the given autocast/mode."""
    import torch

    model.zero_grad(set_to_none=True)
    started = time.perf_counter()
    with mode if mode is not None else contextlib.nullcontext():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
    seconds = time.perf_counter() - started
    grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    return seconds, loss.item(), grads


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the tiny model, 64 tokens, a small product (CI)")
    ap.add_argument("--model", default="", help="default coder-0.5b (--small: tiny)")
    ap.add_argument("--tokens", type=int, default=0, help="tokens in the training step (default 128; --small 64)")
    args = ap.parse_args(argv)
    os.environ.setdefault("CUSET_MODELS_DIR", os.path.join(os.getcwd(), "workspace", "models"))
    import torch
    from transformers import AutoModelForCausalLM

    from cuset import models
    from cuset.bf16 import Float32Matmuls, native_bf16_matmuls

    model_name = args.model or ("tiny" if args.small else "coder-0.5b")
    tokens = args.tokens or (64 if args.small else 128)
    shape = (256, 512, 1024) if args.small else (512, 896, 4864)
    print(f"CPU bf16 instructions: {'yes' if native_bf16_matmuls('cpu') else 'no'}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, capability {torch.backends.cpu.get_cpu_capability()}")
    rates = product_rates(*shape)
    print(f"product [{shape[0]} x {shape[1]}] @ [{shape[1]} x {shape[2]}]:")
    for name in ("float32", "bfloat16 torch", "bfloat16 cuset.bf16"):
        print(f"  {name:<22} {rates[name] / 1e9:8.2f} GFLOP/s")
    print(f"  cuset.bf16 bit-identical to torch's bf16 kernel: {rates['identical']:.3%} of elements")

    model = AutoModelForCausalLM.from_pretrained(models.resolve(model_name).source, dtype=torch.float32)
    if not args.small:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))
    vocab = model.config.vocab_size
    ids = torch.randint(0, min(vocab, 50000), (1, tokens), generator=torch.Generator().manual_seed(0))
    step(model, ids, False)  # warm-up
    fp32 = step(model, ids, False)
    native = step(model, ids, True)
    mode = Float32Matmuls()
    ours = step(model, ids, True, mode)

    def rel(a: Any, b: Any) -> float:
        return ((a - b).norm() / b.norm()).item()

    print(f"training step, {model_name}{'' if args.small else ' (LoRA r16)'}, {tokens} tokens (forward + backward):")
    for name, (seconds, loss, _) in (("float32", fp32), ("bfloat16 torch", native), ("bfloat16 cuset.bf16", ours)):
        print(f"  {name:<22} {seconds:8.2f} s  {tokens / seconds:8.1f} tok/s  loss {loss:.5f}")
    print(f"  gradients vs torch's bf16: cuset.bf16 {rel(ours[2], native[2]):.4f}, float32 {rel(fp32[2], native[2]):.4f} (relative L2); "
          f"{mode.calls} products rerouted")
    figures = {
        "model": model_name,
        "product_fp32_gflops": round(rates["float32"] / 1e9, 2),
        "product_bf16_torch_gflops": round(rates["bfloat16 torch"] / 1e9, 2),
        "product_bf16_cuset_gflops": round(rates["bfloat16 cuset.bf16"] / 1e9, 2),
        "product_identical_share": round(rates["identical"], 5),
        "step_fp32_s": round(fp32[0], 3),
        "step_bf16_torch_s": round(native[0], 3),
        "step_bf16_cuset_s": round(ours[0], 3),
        "step_speedup_cuset_over_torch_bf16": round(native[0] / ours[0], 2),
        "step_cuset_over_fp32_time": round(ours[0] / fp32[0], 2),
        "grad_rel_diff_cuset_vs_torch_bf16": round(rel(ours[2], native[2]), 5),
        "grad_rel_diff_fp32_vs_torch_bf16": round(rel(fp32[2], native[2]), 5),
        "loss_diff_cuset_vs_torch_bf16": abs(ours[1] - native[1]),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
