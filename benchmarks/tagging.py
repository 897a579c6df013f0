"""CUDA-sensitivity tagging: throughput beside the bare tree-sitter parse, and accuracy.

    python -m benchmarks.tagging            # ~2,000 labelled kernels + the bundled corpus x3
    python -m benchmarks.tagging --small    # a quick size (what CI runs)

Throughput: `cuset.sensitivity.tag` over the hand-labelled kernels (tests/sensitivity/labelled
and heldout) repeated, and over the responses of ``cuset/data/bundled/corpus.jsonl`` when it
exists. Beside it, the bare ``Parser.parse`` of exactly the code the tagger parses (the CUDA
blocks, extracted beforehand), so the ratio holds on a noisy machine: rounds alternate between
the two and each figure is the median over rounds. Accuracy: the precision/recall tables of
`cuset.sensitivity.scoring` (overlap rule). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from cuset.sensitivity import tag
from cuset.sensitivity.scoring import Counts, evaluate, format_table, labelled_samples
from cuset.sensitivity.sources import Source, detect_format, markdown_sources, python_sources
from cuset.sensitivity.treesitter import parser

ROOT = Path(__file__).resolve().parents[1]
LABELLED = [ROOT / "tests" / "sensitivity" / "labelled", ROOT / "tests" / "sensitivity" / "heldout"]
CORPUS = ROOT / "cuset" / "data" / "bundled" / "corpus.jsonl"


def code_blocks(text: str) -> list[str]:
    """The code strings `tag` would hand to the parser for one sample."""
    fmt = detect_format(text)
    if fmt == "markdown":
        sources = markdown_sources(text)[0]
    elif fmt == "python":
        sources = python_sources(text)[0]
    else:
        sources = [Source(text, 0, len(text), "cuda")]
    return [s.code for s in sources]


def throughput(texts: list[str], rounds: int) -> dict[str, float]:
    """Median samples/s of `tag` and of the bare parse over ``rounds`` alternating rounds."""
    blocks = [[b.encode("utf-8", "surrogatepass") for b in code_blocks(t)] for t in texts]
    p = parser()
    for t in texts[:20]:  # warm up: queries compiled, caches filled
        tag(t)
    tag_rates, parse_rates = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for t in texts:
            tag(t)
        t1 = time.perf_counter()
        for bs in blocks:
            for b in bs:
                p.parse(b)
        t2 = time.perf_counter()
        tag_rates.append(len(texts) / (t1 - t0))
        parse_rates.append(len(texts) / (t2 - t1))
    tagging, parse_only = statistics.median(tag_rates), statistics.median(parse_rates)
    return {
        "tagging_kernels_per_s": round(tagging, 1),
        "parse_only_kernels_per_s": round(parse_only, 1),
        "tagging_over_parse_time": round(parse_only / tagging, 2),
        "mean_lines": round(sum(t.count("\n") + 1 for t in texts) / len(texts), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="a quick size for CI")
    args = ap.parse_args()
    rounds = 3 if args.small else 7

    kernels = [text for folder in LABELLED for _, text, _ in labelled_samples(folder)]
    target = 200 if args.small else 2000
    repeated = (kernels * (target // len(kernels) + 1))[:target]
    result: dict[str, float] = {}
    stats = throughput(repeated, rounds)
    print(
        f"labelled kernels: {len(repeated)} tagged per round ({len(kernels)} distinct, "
        f"{stats['mean_lines']} lines on average), {rounds} rounds"
    )
    print(f"  tag():        {stats['tagging_kernels_per_s']:>9.1f} kernels/s")
    print(
        f"  parse only:   {stats['parse_only_kernels_per_s']:>9.1f} kernels/s "
        f"(tagging takes {stats['tagging_over_parse_time']}x the parse time)"
    )
    result.update(stats)

    if CORPUS.exists():
        responses = [json.loads(line)["response"] for line in CORPUS.read_text().splitlines() if line.strip()]
        corpus = responses[:40] if args.small else responses * 3
        cstats = throughput(corpus, rounds)
        print(f"bundled corpus: {len(corpus)} responses per round ({cstats['mean_lines']} lines on average)")
        print(f"  tag():        {cstats['tagging_kernels_per_s']:>9.1f} samples/s")
        print(
            f"  parse only:   {cstats['parse_only_kernels_per_s']:>9.1f} samples/s "
            f"(tagging takes {cstats['tagging_over_parse_time']}x the parse time)"
        )
        result.update({f"corpus_{k}": v for k, v in cstats.items()})
    else:
        print(f"bundled corpus: {CORPUS} not found, skipped")

    micro = Counts()
    for folder in LABELLED:
        counts = evaluate(folder)
        print(f"\nprecision / recall, {folder.name} (overlap rule, see cuset/sensitivity/scoring.py):")
        print(format_table(counts))
        micro.add(counts["micro"])
        result[f"{folder.name}_micro_precision"] = round(counts["micro"].precision, 4)
        result[f"{folder.name}_micro_recall"] = round(counts["micro"].recall, 4)
    result["micro_precision"] = round(micro.precision, 4)
    result["micro_recall"] = round(micro.recall, 4)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
