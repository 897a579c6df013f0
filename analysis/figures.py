"""Regenerate every paper figure from the stored results, as PDF, SVG and PNG.

    python -m analysis.figures                          # into <workspace>/figures
    python -m analysis.figures --out paper/figs --formats pdf --model default
    python -m analysis.figures --limit 20 --model tiny  # a quick look on a few samples

Token scores come from the workspace's cache (samples not scored yet are scored first, with a
progress bar); training curves from the fine-tune jobs; correctness from the completed
evaluation runs. A figure without data is skipped, and the reason printed. The figures and
their manifest.json are written by cuset.figures.make_all; this is only its command line.
"""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from cuset.figures import FORMATS

    parser = argparse.ArgumentParser(prog="python -m analysis.figures", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="", help="output folder (default: <workspace>/figures)")
    parser.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, from {', '.join(FORMATS)}")
    parser.add_argument("--model", default="", help="model of the token scores (default: $CUSET_MODEL or 'default')")
    parser.add_argument("--data", default="bundled", help="data set of the confidence, region and sweep figures")
    parser.add_argument("--limit", type=int, default=0, help="use the first N samples (0 = all)")
    parser.add_argument("--objective", default="", help="saved objective config for regions and the sweep (default: defaults)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from cuset.figures import FiguresConfig, make_all

    bars: dict[str, tqdm] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in bars:
            bars[phase] = tqdm(total=total, desc=phase, unit="sample" if phase == "scoring" else "figure", file=sys.stderr)
        bar = bars[phase]
        bar.total = total
        bar.update(done - bar.n)

    try:
        config = FiguresConfig(out_dir=args.out, formats=args.formats.split(","), model=args.model, data=args.data,
                               limit=args.limit, objective=args.objective)
        figures = make_all(config=config, progress=progress)
    except ValueError as exc:  # bad formats, data set or objective name: the message says which
        print(f"analysis.figures: {exc}", file=sys.stderr)
        return 2
    finally:
        for bar in bars.values():
            bar.close()
    for figure in figures:
        if figure.made:
            print(f"{figure.name:16} {'  '.join(figure.files.values())}")
        else:
            print(f"{figure.name:16} skipped: {figure.skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
