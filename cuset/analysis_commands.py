"""The `cuset diff`, `cuset failures` and `cuset select` verbs (registered by cuset.cli through
`add_analysis_commands`, which hands over cuset.cli's shared option groups; what the verbs read
from them is cuset.cli_options).

    cuset diff bundled --model coder-0.5b --against coder-1.5b --limit 10 [--json] [--top 10]
    cuset diff bundled --model smollm2-135m --against job:3      # a fine-tune against its base
    cuset failures 7 [--model M] [--json]                         # evaluation run 7
    cuset select bundled --top 0.5 --out top.jsonl [--model M] [--by region_score|weight]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cuset.cli_options import emit, load_samples, objective_from_args


def _progress(args: argparse.Namespace, what: str) -> Any:
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def progress(name: str, done: int, total: int) -> None:
        if args.quiet:
            return
        bar = bars.setdefault(name, tqdm(total=total, desc=f"{what} {name}", unit="sample", file=sys.stderr))
        bar.update(done - bar.n)

    return progress


def cmd_diff(args: argparse.Namespace) -> int:
    from cuset.diff import format_summary, run_diff

    samples = load_samples(args)
    _, summary = run_diff(samples, args.model or "default", args.against, objective_from_args(args), args.top,
                          _progress(args, "scoring"), max_length=args.max_length, batch_size=args.batch_size, dtype=args.dtype)
    emit(args, summary, format_summary(summary))
    return 0


def cmd_failures(args: argparse.Namespace) -> int:
    from cuset.failures import format_report, run_failures

    report = run_failures(args.run, model=args.model, config=objective_from_args(args), progress=_progress(args, "scoring"))
    emit(args, report, format_report(report))
    return 0


def cmd_select(args: argparse.Namespace) -> int:
    from cuset.confidence import ScoreConfig
    from cuset.selection import select_samples, write_selection

    samples = load_samples(args)
    config = ScoreConfig(model=args.model or "default", max_length=args.max_length, batch_size=args.batch_size, dtype=args.dtype)
    rows = select_samples(samples, config, objective_from_args(args), top=args.top, by=args.by)
    path = write_selection(rows, args.out)
    lines = [f"selected {len(rows)} of {len(samples)} samples by {args.by} under {config.model} -> {path}"]
    lines += [f"  {r['rank']:>4} {r['id'][:40]:<40} region score {r['region_score']:.5f}  weight {r['weight']:.3f}" for r in rows[:20]]
    if len(rows) > 20:
        lines.append(f"  ... {len(rows) - 20} more in {path}")
    emit(args, {"out": str(path), "selected": [{k: v for k, v in r.items() if k != "sample"} for r in rows]}, lines)
    return 0


def add_analysis_commands(sub: Any, common: argparse.ArgumentParser, scoring: argparse.ArgumentParser, objective: argparse.ArgumentParser) -> None:
    """Add `diff`, `failures` and `select` to the `cuset` parser's subcommands."""
    p = sub.add_parser("diff", parents=[common, scoring, objective], help="confidence diff of two models on the same samples (B - A, per token)")
    p.add_argument("--against", required=True, metavar="B", help="the second model: a name, folder, hub id or job:ID (same tokenizer as --model)")
    p.add_argument("--top", type=int, default=10, help="tokens and regions listed as gaining / losing most")
    p.set_defaults(func=cmd_diff)
    p = sub.add_parser("failures", parents=[objective], help="do an evaluation run's located failures fall inside low-confidence sensitive regions?")
    p.add_argument("run", type=int, help="evaluation run id (see `cuset results list` or the Results page)")
    p.add_argument("--model", default=None, help="score the code under this model (default: the model that wrote it, the run's)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--compact", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_failures)
    p = sub.add_parser("select", parents=[common, scoring, objective], help="rank samples by region score (or weight) and export the top as JSONL")
    p.add_argument("--top", type=float, required=True, help="a fraction in (0, 1] (e.g. 0.5) or a count >= 1 (e.g. 32)")
    p.add_argument("--out", required=True, help="JSONL file to write (loadable as training data: TrainConfig.data)")
    p.add_argument("--by", default="region_score", choices=("region_score", "weight"))
    p.set_defaults(func=cmd_select)
