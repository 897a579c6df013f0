"""Run (or resume) an experiment of analysis/experiments/NAME.yaml; results in analysis/results/NAME/.

    python -m analysis.experiment cpu-135m --dry-run      # the units, what is done, the time estimate
    python -m analysis.experiment cpu-135m                # submit, follow (tqdm + ETA), resume, write results
    python -m analysis.experiment cpu-135m --results-only # rewrite the results folder from what finished
    python -m analysis.experiment cpu-135m --adopt train/smollm2-135m/sft/s42=19
                                                          # a fine-tune run by hand stands for that unit
                                                          # (only when its config is the unit's)
    python -m analysis.experiment cpu-coder --retry eval/coder-0.5b/sft/s42/greedy
                                                          # a failed unit back to pending (after a fix)
    python -m analysis.experiment cpu-coder --redo eval/coder-0.5b/sft/s42/greedy --why "evaluated before the RoPE fix"
                                                          # a done evaluation whose verdicts are void, to pending
    python -m analysis.experiment --list
    python -m analysis.experiment cpu-coder --allow-slow-bf16
                                                          # start even where its bfloat16 is slow here
    python -m analysis.experiment cpu-coder-full --force-reregister
                                                          # go on although the registered YAML changed,
                                                          # recording the change (see analysis/README.md)

Fine-tunes and evaluations run as background jobs (cuset.jobs): Ctrl-C stops this command,
not them, and the next start continues where things are. The logic is cuset.experiment's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from cuset.experiment import (
        RESULTS_DIR,
        adopt_job,
        dry_run,
        list_experiments,
        load_experiment,
        redo_unit,
        retry_unit,
        run_experiment,
        write_results_only,
    )

    parser = argparse.ArgumentParser(prog="python -m analysis.experiment", description=__doc__.split("\n")[0])
    parser.add_argument("name", nargs="?", help="experiment name (analysis/experiments/NAME.yaml) or a YAML path")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and the estimate; submit and write nothing")
    parser.add_argument("--results-only", action="store_true", help="write the results folder from the finished units; submit nothing")
    parser.add_argument("--out", default="", help="results folder (default analysis/results/NAME)")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between checks of the jobs")
    parser.add_argument("--list", action="store_true", help="list the shipped experiments")
    parser.add_argument("--allow-slow-bf16", action="store_true",
                        help="start even where the recipe's bfloat16 has no fast hardware here (refused by default, naming the units)")
    parser.add_argument("--force-reregister", action="store_true",
                        help="start although the YAML changed since it was registered (results/NAME/registration.yaml): the old copy is "
                             "kept as registration.N.yaml and the change recorded in registration.json and the results table")
    parser.add_argument("--adopt", metavar="UNIT=JOB", help="let fine-tune job JOB (run by hand) stand for train unit UNIT; refused unless its config is the unit's")
    parser.add_argument("--retry", metavar="UNIT", action="append", default=[],
                        help="put a failed unit (and the evaluations that failed with it) back to pending, e.g. after a fix; "
                             "the next run submits it as a new job (repeatable)")
    parser.add_argument("--redo", metavar="UNIT", action="append", default=[],
                        help="put a done evaluation unit whose verdicts are void (evaluated before a fix) back to pending; needs --why "
                             "(repeatable)")
    parser.add_argument("--why", default="", help="with --redo: why the unit's verdicts are void (kept in state.json)")
    args = parser.parse_args(argv)
    if args.list or not args.name:
        print("\n".join(list_experiments()) or "no experiments in analysis/experiments/")
        return 0 if args.list else 2
    try:
        config = load_experiment(args.name)
    except ValueError as exc:
        print(f"analysis.experiment: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else RESULTS_DIR / config.name
    if args.adopt:
        unit, _, job = args.adopt.rpartition("=")
        try:
            print(adopt_job(config, out, unit, int(job)))
        except ValueError as exc:
            print(f"analysis.experiment: --adopt {args.adopt}: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.retry:
        try:
            for unit in args.retry:
                print("\n".join(retry_unit(config, out, unit)))
        except ValueError as exc:
            print(f"analysis.experiment: --retry: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.redo:
        try:
            for unit in args.redo:
                print(redo_unit(config, out, unit, args.why))
        except ValueError as exc:
            print(f"analysis.experiment: --redo: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.dry_run:
        print("\n".join(dry_run(config, out)))
        return 0
    if args.results_only:
        for path in write_results_only(config, out):
            print(path)
        return _validation_figure(config, out)
    status = _follow(config, out, args.poll, run_experiment, args.allow_slow_bf16, args.force_reregister)
    return _validation_figure(config, out) if status == 0 else status


def _validation_figure(config, out: Path) -> int:  # noqa: ANN001 - thin CLI glue
    """A validation experiment's figure: its fine-tunes' training NLL (falling or rising)."""
    if not config.validation:
        return 0
    from cuset.figures.experiment import write_training_figure

    try:
        print(write_training_figure(out))
    except ValueError as exc:
        print(f"analysis.experiment: {exc}", file=sys.stderr)
    return 0


def _follow(config, out: Path, poll: float, run, allow_slow_bf16: bool = False, force_reregister: bool = False) -> int:  # noqa: ANN001 - thin CLI glue
    from tqdm import tqdm

    from cuset.experiment.registration import RegistrationError
    from cuset.experiment.runner import SlowHardwareError

    bar = tqdm(total=0, desc=config.name, unit="unit", file=sys.stderr, dynamic_ncols=True)

    def on_progress(progress, events) -> None:  # noqa: ANN001
        for line in events:
            tqdm.write(line, file=sys.stderr)
        bar.total = progress.total
        bar.n = progress.done + progress.failed
        hours, rest = divmod(int(progress.eta_s), 3600)
        now = progress.active[0] if progress.active else "-"
        bar.set_postfix_str(f"eta {hours}h{rest // 60:02d}m; {now}"[:120], refresh=False)
        bar.refresh()

    try:
        progress = run(config, out, poll_s=poll, on_progress=on_progress, allow_slow_bf16=allow_slow_bf16, force_reregister=force_reregister)
    except (SlowHardwareError, RegistrationError) as exc:
        bar.close()
        print(f"analysis.experiment: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        bar.close()
        print(f"\nstopped following {config.name}; its jobs keep running (`cuset jobs list`); rerun to continue and write the results",
              file=sys.stderr)
        return 130
    bar.close()
    print(f"{config.name}: {progress.done} of {progress.total} units done, {progress.failed} failed; results in {out}")
    return 0 if not progress.failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
