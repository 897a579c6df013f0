"""Regenerate the bundled corpus, or check that the shipped files are up to date.

    python -m cuset.data.corpus          # write cuset/data/bundled/corpus.jsonl and split.json
    python -m cuset.data.corpus --check  # exit 1 (listing the stale files) if they differ
"""

from __future__ import annotations

import argparse
import sys

from cuset.data.corpus.build import build_samples, split_summary, stale_files, write_files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuset.data.corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the shipped files with the generator's output")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path} (run `python -m cuset.data.corpus` to regenerate)", file=sys.stderr)
        return 1 if stale else 0
    files = write_files()
    summary = split_summary(build_samples())
    for path in files:
        print(f"wrote {path}")
    print(f"{summary['n_samples']} samples; by family {summary['by_family']}; by style {summary['by_style']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
