"""What the `cuset` verbs read from their shared option groups (cuset.cli.build_parser's `common`
and `objective`), and how they print: one place that cuset.cli and cuset.analysis_commands both
import, so neither verb module imports the other.

    samples = load_samples(args)          # DATA [--field NAME=COLUMN] [--split S] [--ids a,b] [--limit N]
    config = objective_from_args(args)    # --config FILE|NAME, then --tau, --policy, ... on top
    emit(args, payload, lines)            # JSON with --json (one line with --compact), else the lines
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cuset.data import DataError


def field_map(pairs: list[str]) -> dict[str, str]:
    """--field NAME=COLUMN pairs as {sample field: source column}."""
    out = {}
    for pair in pairs:
        name, sep, column = pair.partition("=")
        if not sep or not name or not column:
            raise DataError(f"--field {pair!r}: write it as NAME=COLUMN, e.g. --field response=completion.")
        out[name] = column
    return out


def load_samples(args: argparse.Namespace) -> list[Any]:
    """The samples of DATA, narrowed to --ids (every id must exist) and cut to --limit."""
    from cuset.data import load

    samples = load(args.data, field_map(args.field), split=args.split)
    if args.ids:
        wanted = set(args.ids.split(","))
        samples = [s for s in samples if s.id in wanted]
        missing = wanted - {s.id for s in samples}
        if missing:
            raise DataError(f"{args.data}: no samples with id(s) {', '.join(sorted(missing))}.")
    return samples[: args.limit] if args.limit else samples


def objective_from_args(args: argparse.Namespace) -> Any:
    """The ObjectiveConfig of --config (a file or a saved name; the defaults without one) with
    the objective flags given on top."""
    from cuset.objective import ObjectiveConfig, load_named

    if not args.config:
        config = ObjectiveConfig()
    elif Path(args.config).exists():
        config = ObjectiveConfig.load(args.config)
    else:
        config = load_named(args.config)
    overrides = {k: getattr(args, k) for k in ("threshold_mode", "quantile", "tau", "policy", "mask_scope") if getattr(args, k, None) is not None}
    data = {**config.to_dict(), **overrides}
    if getattr(args, "method_regions", None):
        data["regions"] = {**data["regions"], "method": args.method_regions}
    if getattr(args, "max_gap", None) is not None:
        data["regions"] = {**data["regions"], "max_gap": args.max_gap}
    return ObjectiveConfig.from_dict(data, args.config or "options")


def emit(args: argparse.Namespace, payload: Any, lines: list[str]) -> None:
    """Print `payload` as JSON under --json (indented unless --compact), else the lines."""
    if args.json:
        print(json.dumps(payload, indent=None if args.compact else 2, default=float))
    else:
        print("\n".join(lines))
