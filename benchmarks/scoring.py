"""Scoring throughput of coder-0.5b (the default) in float32 and bfloat16, against this
machine's matmul roofline of the same dtype, measured in the same run.

    python -m benchmarks.scoring            # 24 bundled samples, float32 and bfloat16
    python -m benchmarks.scoring --small    # 2 samples, both dtypes (what CI runs)
    python -m benchmarks.scoring --model smollm2-135m

In one run, per dtype: the FLOP/s of a large matmul (2048^3), then teacher-forced scoring of
the same samples without cache. The work of a scoring pass is counted as it is done: every
token (prompt + response) goes through the decoder stack (2 x its parameters per token) and
only the scored response positions through the vocabulary projection (2 x the head's
parameters); attention's own FLOPs are left out, so the fraction is a slight underestimate.
Roofline fraction = those FLOP/s over the matmul's. `vs_fp32_roofline` puts the bfloat16 run
against the float32 matmul too (the issue's figure). Then the same call again, served from
the cache, for the cache speedup.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import torch

from cuset import bf16, confidence, models
from cuset.confidence import ScoreConfig, score_samples
from cuset.data import load
from cuset.models import BF16_SLOW_NOTE


def matmul_flops(dtype: torch.dtype, n: int = 2048, repeats: int = 5) -> float:
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    t0 = time.perf_counter()
    for _ in range(repeats):
        torch.mm(a, b)
    return 2 * n**3 * repeats / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--model", default="coder-0.5b")
    parser.add_argument("--bf16-anyway", action="store_true", help="measure bfloat16 even where it is slow here (CUSET_BF16_MATMULS=native on a CPU without bf16 instructions)")
    args = parser.parse_args()
    n_samples = 2 if args.small else args.samples
    fast_bf16 = not models.slow_bf16_note("bfloat16", "cpu") or args.bf16_anyway
    dtypes = ["float32", "bfloat16"] if fast_bf16 else ["float32"]
    if not fast_bf16:
        print(f"bfloat16 not measured: {BF16_SLOW_NOTE} (--bf16-anyway measures it)")
    elif bf16.enabled("bfloat16", "cpu"):
        print("bfloat16 products: as float32 GEMMs on the bf16 values (cuset.bf16: this CPU has no bf16 instructions)")
    samples = load("bundled")[:n_samples]
    os.environ["CUSET_WORKSPACE"] = tempfile.mkdtemp(prefix="cuset-bench-")  # cold cache
    confidence.SHIPPED_DIR = Path(tempfile.mkdtemp(prefix="cuset-bench-shipped-"))  # nor the shipped scores
    confidence._shipped_index.cache_clear()
    os.environ.setdefault("CUSET_MODELS_DIR", os.path.join(os.getcwd(), "workspace", "models"))
    print(f"torch threads: {torch.get_num_threads()}; {n_samples} bundled samples; model {args.model}")
    figures: dict[str, float] = {}
    peaks: dict[str, float] = {}
    for dtype in dtypes:
        model, _, _ = models.load(args.model, dtype)
        embedding, projection = model.get_input_embeddings().weight, model.get_output_embeddings().weight
        head = projection.numel()
        # The embedding lookup costs no FLOPs: leave its matrix out (once when it is the head's too).
        body = sum(p.numel() for p in model.parameters()) - head - (0 if embedding is projection else embedding.numel())
        with bf16.cpu_matmuls(dtype, "cpu"):  # the peak of the products scoring runs
            flops = peaks[dtype] = matmul_flops(getattr(torch, dtype))
        config = ScoreConfig(model=args.model, dtype=dtype, batch_size=4)
        _, stats = score_samples(samples, config)
        t0 = time.perf_counter()
        _, cached = score_samples(samples, config)
        cache_seconds = time.perf_counter() - t0
        seconds = stats["processed_tokens"] / stats["processed_tokens_per_s"]
        work = 2 * body * stats["processed_tokens"] + 2 * head * stats["n_tokens"]
        achieved = work / seconds
        speedup = stats["seconds"] / cache_seconds
        print(f"{dtype}: matmul {flops / 1e9:.1f} GFLOP/s; {body / 1e6:.1f} M decoder + {head / 1e6:.1f} M head parameters")
        print(f"  scored   {stats['n_tokens']:>6} response tokens  {stats['tokens_per_s']:>8.1f} tok/s")
        print(f"  processed {stats['processed_tokens']:>5} tokens in all   {stats['processed_tokens_per_s']:>8.1f} tok/s")
        print(f"  achieved {achieved / 1e9:.1f} GFLOP/s = {achieved / flops:.2f} of the {dtype} matmul, {achieved / peaks['float32']:.2f} of the float32 one")
        print(f"  cache: {stats['seconds']:.2f} s cold -> {cache_seconds:.3f} s cached ({cached['cache_hits']} hits), {speedup:.0f}x faster")
        figures |= {
            f"{dtype}_matmul_gflops": round(flops / 1e9, 1),
            f"{dtype}_scored_tokens_per_s": round(stats["tokens_per_s"], 1),
            f"{dtype}_processed_tokens_per_s": round(stats["processed_tokens_per_s"], 1),
            f"{dtype}_roofline": round(achieved / flops, 3),
            f"{dtype}_vs_fp32_roofline": round(achieved / peaks["float32"], 3),
            f"{dtype}_cache_speedup": round(speedup, 1),
        }
        models.load.cache_clear()
    if fast_bf16:
        figures["bf16_over_fp32_speed"] = round(figures["bfloat16_processed_tokens_per_s"] / figures["float32_processed_tokens_per_s"], 2)
        print(f"bfloat16 / float32 scoring speed: {figures['bf16_over_fp32_speed']:.2f}x")
    else:
        figures["bf16_over_fp32_speed"] = None
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
