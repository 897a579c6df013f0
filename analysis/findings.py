"""The paper's two findings for every embedded model, written to analysis/results/findings/.

    python -m analysis.findings                                   # smollm2-135m, coder-0.5b, coder-1.5b (every 3rd sample)
    python -m analysis.findings --models coder-0.5b --permutations 1000
    python -m analysis.findings --every coder-1.5b=1              # the whole corpus under coder-1.5b

Scores come from the caches (the workspace's, then those shipped with the package) and are
computed where missing, with a progress bar. The files (findings.json, by_category.csv,
clustering.csv) are committed: the table of analysis/results/findings/README.md, the Models page and the "findings by model"
figure are drawn from them without scoring anything. The logic is cuset.findings'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

OUT = Path(__file__).resolve().parent / "results" / "findings"
DEFAULT_MODELS = ("smollm2-135m", "coder-0.5b", "coder-1.5b")


def main(argv: list[str] | None = None) -> int:
    from cuset.findings import format_findings, measure_models, write_results

    parser = argparse.ArgumentParser(prog="python -m analysis.findings", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated model names")
    parser.add_argument("--every", action="append", default=["coder-1.5b=3"], metavar="MODEL=K",
                        help="score every K-th sample for MODEL (default coder-1.5b=3: 71 of 213 samples on a CPU)")
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--data", default="bundled")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    every = dict(item.split("=", 1) for item in args.every)
    bars: dict[str, tqdm] = {}

    def progress(model: str, done: int, total: int) -> None:
        if model not in bars:
            bars[model] = tqdm(total=total, desc=f"scoring {model}", unit="sample", file=sys.stderr)
        bar = bars[model]
        bar.update(done - bar.n)

    result = measure_models([m for m in args.models.split(",") if m], args.data, {k: int(v) for k, v in every.items()},
                            args.permutations, progress=progress)
    for bar in bars.values():
        bar.close()
    for entry in result["models"]:
        print(f"== {entry['title']} ({entry['samples']} of {entry['of_samples']} samples, {entry['tokens']:,} tokens, {entry['dtype']})")
        print("\n".join(format_findings(entry)))
    for path in write_results(result, args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
