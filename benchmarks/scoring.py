"""Scoring throughput on the default model, against this machine's matmul roofline.

    python -m benchmarks.scoring            # 24 bundled samples, float32 and bfloat16
    python -m benchmarks.scoring --small    # 3 samples, float32 only (what CI runs)

In one run: the FLOP/s of a large matmul (2048^3) of each dtype, then teacher-forced scoring
of the same samples without cache. Roofline fraction = tokens/s x 2 x parameters / matmul
FLOP/s, given two ways: over the scored response tokens (the issue's figure) and over every
token run through the model (prompt + response), which is the work actually done. Then the
same call again, served from the cache, for the cache speedup.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import torch

from cuset import models
from cuset.confidence import ScoreConfig, score_samples
from cuset.data import load


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
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    n_samples = 3 if args.small else args.samples
    dtypes = ["float32"] if args.small else ["float32", "bfloat16"]
    samples = load("bundled")[:n_samples]
    os.environ["CUSET_WORKSPACE"] = tempfile.mkdtemp(prefix="cuset-bench-")  # cold cache
    os.environ.setdefault("CUSET_MODELS_DIR", os.path.join(os.getcwd(), "workspace", "models"))
    print(f"torch threads: {torch.get_num_threads()}; {n_samples} bundled samples; model {args.model}")
    figures: dict[str, float] = {}
    for dtype in dtypes:
        model, _, _ = models.load(args.model, dtype)
        params = sum(p.numel() for p in model.parameters())
        flops = matmul_flops(getattr(torch, dtype))
        config = ScoreConfig(model=args.model, dtype=dtype, batch_size=4)
        _, stats = score_samples(samples, config)
        t0 = time.perf_counter()
        _, cached = score_samples(samples, config)
        cache_seconds = time.perf_counter() - t0
        scored_frac = stats["tokens_per_s"] * 2 * params / flops
        processed_frac = stats["processed_tokens_per_s"] * 2 * params / flops
        speedup = stats["seconds"] / cache_seconds
        print(f"{dtype}: matmul {flops / 1e9:.1f} GFLOP/s; {params / 1e6:.1f} M parameters")
        print(f"  scored   {stats['n_tokens']:>6} response tokens  {stats['tokens_per_s']:>8.1f} tok/s  roofline {scored_frac:.2f}")
        print(f"  processed {stats['processed_tokens']:>5} tokens in all   {stats['processed_tokens_per_s']:>8.1f} tok/s  roofline {processed_frac:.2f}")
        print(f"  cache: {stats['seconds']:.2f} s cold -> {cache_seconds:.3f} s cached ({cached['cache_hits']} hits), {speedup:.0f}x faster")
        figures |= {
            f"{dtype}_matmul_gflops": round(flops / 1e9, 1),
            f"{dtype}_scored_tokens_per_s": round(stats["tokens_per_s"], 1),
            f"{dtype}_roofline_scored": round(scored_frac, 3),
            f"{dtype}_processed_tokens_per_s": round(stats["processed_tokens_per_s"], 1),
            f"{dtype}_roofline_processed": round(processed_frac, 3),
            f"{dtype}_cache_speedup": round(speedup, 1),
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
