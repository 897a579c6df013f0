"""The `cuset` command line: every analysis stage, scriptable with `--json`.

    cuset tag kernel.cu                      CUDA-sensitive spans
    cuset score kernel.cu --model tiny       per-token probability, entropy, rank, categories
    cuset regions bundled --limit 20         low-confidence sensitive regions
    cuset stats bundled                      the paper's two findings (confidence by category; regions vs chance)
    cuset objective bundled --config c.yaml  masked fraction and sample-weight distribution
    cuset prescore [--model M] [--check N]   regenerate / check the bundled corpus's shipped scores
    cuset diff | failures | select           confidence diff of two models, failures vs regions, data selection (cuset.analysis_commands)

DATA is 'bundled', a .jsonl/.parquet file, a single code file (.cu/.py/.md) or hf:NAME.
Bad input exits with status 2 and one message on stderr naming the file, line and field.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from cuset.analysis_commands import add_analysis_commands
from cuset.cli_options import emit, load_samples, objective_from_args
from cuset.data import DataError
from cuset.evaluate.commands import add_eval_commands, add_evaluate_commands, split_program_args
from cuset.train.commands import add_training_commands

EXIT_BAD_INPUT = 2


def _scored(args: argparse.Namespace) -> Any:
    from tqdm import tqdm

    from cuset.confidence import ScoreConfig, score_dataset

    samples = load_samples(args)
    config = ScoreConfig(model=args.model, max_length=args.max_length, batch_size=args.batch_size, dtype=args.dtype)
    bar = tqdm(total=len(samples), desc="scoring", unit="sample", file=sys.stderr, disable=args.quiet)

    def progress(done: int, total: int) -> None:
        bar.update(done - bar.n)

    scored = score_dataset(samples, config, progress, dataset_name=str(args.data), use_cache=not args.no_cache)
    bar.close()
    return scored


def cmd_tag(args: argparse.Namespace) -> int:
    from cuset.sensitivity import tag

    out, lines = [], []
    for sample in load_samples(args):
        result = tag(sample.response)
        line_starts = [0] + [i + 1 for i, ch in enumerate(sample.response) if ch == "\n"]
        spans = []
        for span in result.spans:
            line = _line_of(line_starts, span.start)
            spans.append({**asdict(span), "line": line})
        out.append({"id": sample.id, "spans": spans, "blocks": [asdict(b) for b in result.blocks], "notes": result.notes})
        lines.append(f"== {sample.id}: {len(spans)} spans")
        lines += [f"  line {s['line']:>4}  {s['category']:<15} {s['text'][:60]!r}" for s in spans]
        lines += [f"  note: {note}" for note in result.notes]
    emit(args, out if len(out) > 1 else out[0], lines)
    return 0


def _line_of(line_starts: list[int], offset: int) -> int:
    import bisect

    return bisect.bisect_right(line_starts, offset)


def cmd_score(args: argparse.Namespace) -> int:
    from cuset import models
    from cuset.confidence import describe

    scored = _scored(args)
    tokenizer, _ = models.load_tokenizer(args.model)
    out, lines = [], []
    for sample, scores, tagged in zip(scored.samples, scored.scores, scored.tags):
        rows = describe(scores, sample.response, tagged, tokenizer)
        out.append({"id": sample.id, "truncated": scores.truncated, "tokens": rows})
        lines.append(f"== {sample.id}: {len(rows)} response tokens" + ("  [TRUNCATED at max_length]" if scores.truncated else ""))
        lines.append(f"  {'#':>5} {'token':<18} {'p':>7} {'entropy':>8} {'rank':>6}  categories")
        for row in rows[: args.show]:
            lines.append(
                f"  {row['index']:>5} {row['text'][:18]!r:<18} {row['p']:>7.4f} {row['entropy']:>8.3f} {row['rank']:>6}  {','.join(row['categories'])}"
            )
        if len(rows) > args.show:
            lines.append(f"  ... {len(rows) - args.show} more tokens (--show N, or --json for all)")
    stats = scored.stats
    lines.append(
        f"scored {stats['n_tokens']} tokens of {stats['n_samples']} samples in {stats['seconds']:.2f} s "
        f"({stats['cache_hits']} from cache; model {stats['model']})"
    )
    emit(args, {"samples": out, "stats": stats}, lines)
    return 0


def cmd_regions(args: argparse.Namespace) -> int:
    from cuset.objective import compute

    scored = _scored(args)
    config = objective_from_args(args)
    result = compute(scored.table, config)
    from cuset.regions import region_rows

    out = region_rows(result.regions, [s.response for s in scored.samples], [s.id for s in scored.samples])
    lines = [f"{len(out)} regions ({config.regions.method}, max_gap {config.regions.max_gap})"]
    lines += [
        f"  {r['sample'][:32]:<32} line {r['line']:>4}  {r['kind']:<21} size {r['size']:>3}  mean p {r['mean_p']:.3f}  {r['text'][:50]!r}"
        for r in out
    ]
    emit(args, {"regions": out, "stats": result.stats}, lines)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from cuset.findings import findings, format_findings

    scored = _scored(args)
    result = findings(scored.table, objective_from_args(args), permutations=args.permutations, seed=args.seed)
    lines = [f"{scored.stats['model']}: {scored.stats['n_samples']} samples, {scored.stats['n_tokens']:,} response tokens"]
    emit(args, result | {"stats": scored.stats}, lines + format_findings(result))
    return 0


def cmd_objective(args: argparse.Namespace) -> int:
    import numpy as np

    from cuset.objective import compute

    scored = _scored(args)
    config = objective_from_args(args)
    result = compute(scored.table, config, args.method)
    s = result.stats
    hist, edges = np.histogram(result.weights, bins=10)
    lines = [
        f"method {args.method}, threshold {config.threshold_mode} "
        + (f"q={config.quantile}" if config.threshold_mode == "quantile" else f"tau={config.tau}")
        + f", policy {config.policy}, mask scope {config.mask_scope}",
        f"masked fraction       {s['masked_fraction']:.3%} (sensitive {s['masked_fraction_sensitive']:.3%}, other {s['masked_fraction_other']:.3%})",
        f"outside CUDA source   {s['outside_cuda_fraction']:.3%} of the tokens, {s['masked_fraction_outside_cuda']:.3%} of them masked "
        f"({s['masked_outside_cuda_share']:.3%} of all masked tokens)",
        f"low-confidence tokens {s['low_fraction']:.3%}; low sensitive {s['low_sensitive_tokens']}, preserved {s['low_sensitive_preserved']}",
        f"regions               {s['n_regions']}  {s['regions_by_kind']}",
        f"sample weights        mean {s['weight_mean']:.3f}, min {s['weight_min']:.3f}, max {s['weight_max']:.3f}, "
        f"effective sample size {s['effective_sample_size']:.1f} of {s['n_samples']}",
    ]
    lines += [f"  w in [{lo:.2f}, {hi:.2f}) {'#' * int(c)}" if c < 60 else f"  w in [{lo:.2f}, {hi:.2f}) {c}" for lo, hi, c in zip(edges[:-1], edges[1:], hist)]
    if args.save:
        from cuset.objective import save_named

        path = save_named(args.save, config)
        lines.append(f"saved objective config {args.save!r} as {path}")
    payload = {"config": config.to_dict(), "stats": s, "weight_histogram": {"counts": hist.tolist(), "edges": edges.tolist()}}
    emit(args, payload, lines)
    return 0


def cmd_prescore(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cuset.confidence import SHIPPED_DIR, ScoreConfig, compare_with_shipped, ship_bundled

    lines, payload = [], {}
    for model in args.model or ["coder-0.5b", "smollm2-135m"]:
        if args.check:
            from cuset.data import load

            result = compare_with_shipped(load("bundled"), ScoreConfig(model=model), args.check)
            lines.append(f"{model}: re-scored {', '.join(result['samples'])} ({result['tokens']} tokens): max |dp| {result['max_abs_dp']:.4f}, "
                         f"mean |dp| {result['mean_abs_dp']:.5f}, mean |dH| {result['mean_abs_dentropy']:.4f}, "
                         f"same rank {result['rank_equal']:.1%}, same top-1 {result['top1_equal']:.1%}")
        else:
            bar = tqdm(total=0, desc=f"scoring {model}", unit="sample", file=sys.stderr, disable=args.quiet)

            def progress(done: int, total: int, bar: Any = bar) -> None:
                bar.total = total
                bar.update(done - bar.n)

            result = ship_bundled(model, progress, use_cache=not args.no_cache)
            bar.close()
            lines.append(f"{model}: {result['n_samples']} samples, {result['n_tokens']:,} tokens ({result['dtype']}) -> "
                         f"{SHIPPED_DIR / result['file']} ({result['bytes'] / 1e6:.1f} MB)")
        payload[model] = result
    emit(args, payload, lines)
    return 0


def _rejudge_experiment(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """`cuset eval rejudge --experiment`: the experiment layer's (cuset.experiment.rejudge)."""
    from cuset.experiment.rejudge import command

    return command(args, overrides)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cuset", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("data", help="'bundled', a .jsonl/.parquet file, a code file, or hf:NAME")
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument("--compact", action="store_true", help="with --json: one line")
    common.add_argument("--field", action="append", default=[], metavar="NAME=COLUMN", help="map a source column onto a sample field")
    common.add_argument("--split", default="train", help="split of an HF data set")
    common.add_argument("--ids", help="comma-separated sample ids to keep")
    common.add_argument("--limit", type=int, default=0, help="keep the first N samples")
    scoring = argparse.ArgumentParser(add_help=False)
    scoring.add_argument("--model", default=None, help="model name, folder or hub id (default: $CUSET_MODEL or the embedded coder-0.5b)")
    scoring.add_argument("--max-length", type=int, default=2048)
    scoring.add_argument("--batch-size", type=int, default=4)
    scoring.add_argument("--dtype", default="", choices=("", "float32", "bfloat16"), help="default: the model's own (bfloat16 for the Qwen coders, float32 otherwise)")
    scoring.add_argument("--no-cache", action="store_true", help="score again even when cached")
    scoring.add_argument("--quiet", action="store_true", help="no progress bar")
    objective = argparse.ArgumentParser(add_help=False)
    objective.add_argument("--config", help="objective config: a YAML/JSON file or a saved config's name")
    objective.add_argument("--threshold-mode", dest="threshold_mode", choices=("quantile", "absolute"))
    objective.add_argument("--quantile", type=float)
    objective.add_argument("--tau", type=float)
    objective.add_argument("--policy", choices=("protect_regions", "protect_sensitive", "none"))
    objective.add_argument("--mask-scope", dest="mask_scope", choices=("all", "cuda"), help="cuda: only tokens inside the CUDA source may be masked")
    objective.add_argument("--region-method", dest="method_regions", choices=("gap", "statement", "dbscan"))
    objective.add_argument("--max-gap", dest="max_gap", type=int)

    sub.add_parser("tag", parents=[common], help="CUDA-sensitive spans").set_defaults(func=cmd_tag)
    p = sub.add_parser("score", parents=[common, scoring], help="per-token confidence")
    p.add_argument("--show", type=int, default=80, help="tokens per sample in the table")
    p.set_defaults(func=cmd_score)
    sub.add_parser("regions", parents=[common, scoring, objective], help="low-confidence sensitive regions").set_defaults(func=cmd_regions)
    p = sub.add_parser("stats", parents=[common, scoring, objective], help="the paper's two findings: confidence of sensitive vs other tokens, and whether low-confidence ones form regions")
    p.add_argument("--permutations", type=int, default=200, help="permutations of the region-clustering test")
    p.add_argument("--seed", type=int, default=0, help="seed of the permutations")
    p.set_defaults(func=cmd_stats)
    p = sub.add_parser("objective", parents=[common, scoring, objective], help="mask and weight figures of an objective config")
    p.add_argument("--method", default="cuset", choices=("sft", "dft", "token-mask", "region-weight", "cuset"))
    p.add_argument("--save", metavar="NAME", help="save the resolved config under NAME in the workspace")
    p.set_defaults(func=cmd_objective)
    p = sub.add_parser("prescore", help="regenerate (or --check) the bundled corpus's shipped scores")
    p.add_argument("--model", action="append", help="model to ship scores for (repeatable; default coder-0.5b and smollm2-135m)")
    p.add_argument("--check", type=int, default=0, metavar="N", help="instead: re-score N random samples and compare with the shipped scores")
    p.add_argument("--no-cache", action="store_true", help="score everything afresh (default: repack from the workspace cache and the shipped files)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--compact", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_prescore)
    add_analysis_commands(sub, common, scoring, objective)
    add_training_commands(sub)
    add_evaluate_commands(sub)
    add_eval_commands(sub, rejudge_experiment=_rejudge_experiment)
    return parser


def main(argv: list[str] | None = None) -> int:
    from cuset.models import ModelError

    argv, program_args = split_program_args(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    if program_args:
        args.program_args = program_args
    try:
        return int(args.func(args))
    except (DataError, ModelError, ValueError) as exc:
        print(f"cuset {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
