"""`cuset run-cuda`, `cuset check` and `cuset suite validate`: the CPU backend from the command line.

    cuset run-cuda saxpy.cu util.cpp -I include -D N=1024 -- 3 4
    cuset run-cuda reduce.cu --race-check          # several thread orders; differing output = race
    cuset run-cuda reduce.cu --sanitize            # AddressSanitizer + bounds checks
    cuset check solution.py --task task.py --backend cpu --json [--tolerance strict]
    cuset check solution.py --task task.py --backend cuda [--no-sanitizer | --sanitizer-tools racecheck,memcheck,initcheck]
    cuset suite validate [bundled|corpus|KERNELBENCH_DIR]   # robust-kbench's task filters
    cuset eval rejudge RUN | --all | --experiment NAME   # stored candidates under today's evaluator (cuset.evaluate.rejudge)

`run-cuda` builds the way nvcc would and exits with the program's own exit code; when the
program did not run it exits with a code of its own and one line on stderr: 120 compile error,
121 unsupported construct, 122 outputs differ under --race-check/--fill-check, 125 the backend
itself failed. A fault the emulated GPU detects (illegal address, barrier divergence, deadlock,
host dereference of a device pointer) ends the program with 101. After the program, one line
on stderr says where the time went: `cuset run-cuda: build 3.2 s, run 0.4 s` (`build cached`
when the binary came from the build cache); `cuset check` prints the same split, and its
JSON record carries build_s and run_s.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuset.evaluate.check import BACKENDS
from cuset.evaluate.cpu.build import EXIT_BACKEND, EXIT_COMPILE_ERROR, EXIT_UNSUPPORTED, build_program
from cuset.evaluate.cpu.run import SCHEDULES, RunOptions, fill_check, race_check
from cuset.evaluate.sanitizer import DEFAULT_TOOLS
from cuset.evaluate.sanitizer import TOOLS as SANITIZER_TOOLS

BACKENDS_ALL = BACKENDS

EXIT_DIFFERS = 122
BUILD_EXIT = {"compile_error": EXIT_COMPILE_ERROR, "unsupported": EXIT_UNSUPPORTED, "backend_error": EXIT_BACKEND}


def add_evaluate_commands(sub: Any) -> None:
    """Add `run-cuda`, `check` and `suite validate` to the `cuset` parser's subcommands."""
    p = sub.add_parser("run-cuda", help="build and run a CUDA program on the CPU emulator (no GPU needed)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE", help=".cu/.cpp sources (headers they include are found as nvcc would)")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include folder")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE", help="preprocessor definition")
    p.add_argument("-o", dest="output", metavar="FILE", help="also keep the built executable here")
    p.add_argument("--sanitize", action="store_true", help="AddressSanitizer + UBSan; shared memory from the heap")
    p.add_argument("--schedule", default="forward", help="thread order between barriers: forward, reverse, random:SEED")
    p.add_argument("--fill", default="0xCD", help="garbage byte for fresh device/shared memory: 0xNN, zero, random")
    p.add_argument("--workers", type=int, help="OS threads running blocks (default: all cores)")
    p.add_argument("--race-check", action="store_true", help=f"run under {', '.join(SCHEDULES)} and compare outputs")
    p.add_argument("--fill-check", action="store_true", help="run with two garbage patterns and compare outputs")
    p.set_defaults(func=cmd_run_cuda, program_args=[])

    p = sub.add_parser("check", help="check a KernelBench-format solution (ModelNew) against its task")
    p.add_argument("solution", help="the solution .py (defines ModelNew)")
    p.add_argument("--task", required=True, help="the task .py (defines Model, get_inputs, get_init_inputs)")
    p.add_argument("--backend", default="cpu", choices=BACKENDS, help="cpu: the emulator; compile: nvcc only; cuda: a real GPU")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--timeout", type=float, default=120.0, help="wall-clock limit of the candidate process, seconds")
    p.add_argument("--tolerance", choices=("v0", "strict"), default="v0", help="tolerance profile: v0 = 1e-2; strict = fp32 1e-4, fp16/bf16 1e-2")
    p.add_argument("--static-policy", choices=("strict", "lenient"), default="strict", help="static checks: strict fails torch compute in forward; lenient flags it")
    p.add_argument("--no-poison", action="store_true", help="skip the poisoned run (to measure its cost; no reward_hack from it then)")
    p.add_argument("--no-sanitizer", action="store_true", help="cuda backend: skip the compute-sanitizer runs after the trials (a warning says when it is not found)")
    p.add_argument("--sanitizer-tools", default=",".join(DEFAULT_TOOLS),
                   help=f"cuda backend: compute-sanitizer tools in order, comma-separated, from {', '.join(SANITIZER_TOOLS)}")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("suite", help="benchmark suites: validate that their tasks can tell a kernel from a degenerate output")
    ssub = p.add_subparsers(dest="suite_command", required=True)
    q = ssub.add_parser("validate", help="flag tasks whose reference output is near constant, barely varies along an axis, "
                        "or ignores the inputs or the initial weights (robust-kbench's filters)")
    q.add_argument("suite", nargs="?", default="bundled", help="'bundled' (default), 'corpus', or a KernelBench checkout folder")
    q.add_argument("--level", type=int, action="append", help="keep tasks of this level (repeatable)")
    q.add_argument("--json", action="store_true", help="one JSON object per task")
    q.set_defaults(func=cmd_suite_validate)


def cmd_suite_validate(args: argparse.Namespace) -> int:
    """Exit 1 when a task is flagged (and not documented as accepted in its meta.toml)."""
    from cuset.evaluate.evaluation import EvalConfig, select_tasks
    from cuset.evaluate.suite.validate import validate_tasks

    tasks = select_tasks(EvalConfig(suite=args.suite, solutions="reference", levels=args.level or []))
    rows = validate_tasks(tasks)
    for row in rows:
        if args.json:
            print(json.dumps(row))
            continue
        mark = "FLAG" if row["flags"] or row["error"] else "ok  "
        notes = row["flags"] + [f"accepted: {a} ({row['why']})" for a in row["accepted"]] + ([row["error"]] if row["error"] else [])
        print(f"{mark} {row['id']:32s} {'; '.join(notes)}")
    bad = sum(bool(r["flags"] or r["error"]) for r in rows)
    if not args.json:
        print(f"{len(rows)} tasks, {bad} flagged, {sum(bool(r['accepted']) for r in rows)} with documented exceptions")
    return 1 if bad else 0


def add_eval_commands(sub: Any, rejudge_experiment: Callable[[argparse.Namespace, dict[str, Any]], int] | None = None) -> None:
    """`cuset eval` (an evaluation run) and `cuset results` (reading runs back). `rejudge_experiment`
    (args, overrides) -> exit status runs `cuset eval rejudge --experiment`: experiments are a
    higher layer's (cuset.experiment.rejudge.command, handed over by cuset.cli)."""
    from cuset.evaluate.evaluation import SOLUTIONS, field_help

    helps = {name: text.replace("%", "%%") for name, text in field_help().items()}  # argparse formats help with %
    p = sub.add_parser("eval", help="generate kernels for a suite and check them (foreground with progress, or --detach as a job)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--model", help=helps["model"])
    who.add_argument("--job", type=int, help="a fine-tune job: evaluate its final model (or --checkpoint N)")
    p.add_argument("--checkpoint", type=int, help="with --job: this checkpoint step instead of the final model")
    p.add_argument("--solutions", choices=SOLUTIONS, help=helps["solutions"])
    p.add_argument("--suite", help=helps["suite"])
    p.add_argument("--levels", help="comma-separated levels, e.g. 1,2")
    p.add_argument("--families", help="comma-separated op families")
    p.add_argument("--split", choices=("in_distribution", "held_out"), help=helps["split"])
    p.add_argument("--limit", type=int, help=helps["limit"])
    p.add_argument("--backend", choices=BACKENDS_ALL, help=helps["backend"])
    p.add_argument("--samples", dest="n_samples", type=int, help=helps["n_samples"])
    p.add_argument("--temperature", type=float, help=helps["temperature"])
    p.add_argument("--top-p", dest="top_p", type=float, help=helps["top_p"])
    p.add_argument("--seed", type=int, help=helps["seed"])
    p.add_argument("--max-new-tokens", dest="max_new_tokens", type=int, help=helps["max_new_tokens"])
    p.add_argument("--zero-shot", action="store_true", help="no example in the prompt")
    p.add_argument("--trials", type=int, help=helps["trials"])
    p.add_argument("--tolerance", choices=("v0", "strict"), help=helps["tolerance"])
    p.add_argument("--static-policy", dest="static_policy", choices=("strict", "lenient"), help=helps["static_policy"])
    p.add_argument("--no-sanitizer", dest="sanitizer", action="store_const", const=False,
                   help="cuda backend: no compute-sanitizer runs after the trials (EvalConfig sanitizer: false)")
    p.add_argument("--sanitizer-tools", dest="sanitizer_tools", help=helps["sanitizer_tools"] + " Comma-separated.")
    p.add_argument("--timeout", dest="timeout_s", type=float, help=helps["timeout_s"])
    p.add_argument("--workers", type=int, help=helps["workers"])
    p.add_argument("--label", help=helps["label"])
    p.add_argument("--config", help="an EvalConfig YAML/JSON; flags override it")
    p.add_argument("--detach", action="store_true", help="run as a background job; print its id and return")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    p.set_defaults(func=cmd_eval)
    esub = p.add_subparsers(dest="eval_command", required=False, metavar="{rejudge}")
    q = esub.add_parser("rejudge", help="check stored candidates again under the current evaluator and show which verdicts change",
                        description=REJUDGE_USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("run", nargs="?", type=int, help="an evaluation run of the workspace store (`cuset results list`)")
    q.add_argument("--all", action="store_true", help="every completed store run that is not itself a rejudge")
    q.add_argument("--experiment", metavar="NAME|FOLDER", help="an experiment's results folder (analysis/results/NAME): its kept replies")
    q.add_argument("--out", metavar="FILE.csv", help="with --experiment: where the rows go (default FOLDER/rejudge.csv; summary beside it as .json)")
    q.add_argument("--force", action="store_true", help="with --experiment: replace an existing --out and its .json")
    q.add_argument("--unit", action="append", default=[], metavar="MODEL/METHOD/sSEED/MODE",
                   help="with --experiment: rejudge this kept unit only (repeatable; default all)")
    q.add_argument("--apply", action="store_true",
                   help="with --experiment: make the new verdicts the results folder's (candidates.csv rows and kept replies of the "
                        "rejudged units), for units whose stored verdicts are void; then `python -m analysis.experiment NAME --results-only`")
    q.add_argument("--reextract", action="store_true",
                   help="with --experiment: check the code today's extractor takes from each kept reply (under the unit's protocol), "
                        "not the code stored with it; with --apply the kept replies get that code")
    q.add_argument("--backend", choices=BACKENDS_ALL, help="override the stored backend")
    q.add_argument("--trials", type=int, help="override the stored number of correctness trials")
    q.add_argument("--tolerance", choices=("v0", "strict"), help="override the stored tolerance profile")
    q.add_argument("--static-policy", dest="static_policy", choices=("strict", "lenient"), help="override the stored static policy")
    q.add_argument("--timeout", dest="timeout_s", type=float, help="override the stored per-candidate wall-clock limit, seconds")
    q.add_argument("--workers", type=int, default=0, help=helps["workers"])
    q.add_argument("--json", action="store_true", help="print one JSON object per rejudged run (or the experiment's summary)")
    q.set_defaults(func=cmd_eval_rejudge, rejudge_experiment=rejudge_experiment)

    p = sub.add_parser("results", help="evaluation runs: list, show, export CSV")
    rsub = p.add_subparsers(dest="results_command", required=True)
    q = rsub.add_parser("list", help="every evaluation run")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_results_list)
    q = rsub.add_parser("show", help="one run's rates by level, family and split")
    q.add_argument("run", type=int)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_results_show)
    q = rsub.add_parser("export", help="one row per candidate as CSV")
    q.add_argument("runs", type=int, nargs="+")
    q.add_argument("--csv", required=True, metavar="FILE")
    q.add_argument("--with-code", action="store_true", help="include the generated code and reply")
    q.set_defaults(func=cmd_results_export)


def _eval_config(args: argparse.Namespace) -> Any:
    from cuset.evaluate.evaluation import EvalConfig

    base = EvalConfig.load(args.config).to_dict() if args.config else {}
    for name in ("solutions", "suite", "split", "limit", "backend", "n_samples", "temperature", "top_p", "seed", "max_new_tokens",
                 "trials", "timeout_s", "workers", "label", "model", "tolerance", "static_policy", "sanitizer"):
        value = getattr(args, name, None)
        if value is not None:
            base[name] = value
    if getattr(args, "sanitizer_tools", None):
        base["sanitizer_tools"] = [t.strip() for t in args.sanitizer_tools.split(",") if t.strip()]
    if args.job is not None:
        base["model"] = f"job:{args.job}" + (f"@checkpoint-{args.checkpoint}" if args.checkpoint else "")
    if args.levels:
        base["levels"] = [int(x) for x in args.levels.split(",") if x.strip()]
    if args.families:
        base["families"] = [x.strip() for x in args.families.split(",") if x.strip()]
    if args.zero_shot:
        base["one_shot"] = False
    return EvalConfig.from_dict(base, "cuset eval")


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cuset.evaluate.evaluation import run_evaluation, submit_evaluation
    from cuset.evaluate.results import ResultStore

    config = _eval_config(args)
    if config.backend == "cuda" and config.sanitizer:
        from cuset.evaluate.sanitizer import warning

        line = warning()  # once, before the run; each stored record's integrity says it too
        if line:
            print(f"cuset eval: {line}", file=sys.stderr)
    if args.detach:
        job = submit_evaluation(config)
        print(job.id)
        return 0
    bars: dict[str, Any] = {}

    def progress(phase: str, done: int, total: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            bar = bars[phase] = tqdm(total=total, desc=phase, unit="candidate" if phase == "checking" else "reply", file=sys.stderr)
        bar.n = done
        bar.refresh()

    run_id = run_evaluation(config, progress=progress)
    for bar in bars.values():
        bar.close()
    run = ResultStore().get_run(run_id)
    if args.json:
        print(json.dumps({"run": run_id, **run["summary"]}, default=str))
    else:
        s = run["summary"]
        print(f"evaluation run {run_id} ({run['label']}): {s.get('candidates')} candidates, compiled {s.get('compile_rate', 0):.1%}, "
              f"correct {s.get('correct_rate', 0):.1%} in {s.get('seconds')} s")
        _print_groups(ResultStore().frame([run_id]))
    return 0


REJUDGE_USAGE = """Check stored candidates' code again under the current evaluator (cuset.evaluate.rejudge).

    cuset eval rejudge 12                          # -> a new store run "<label> (rejudged)" beside run 12
    cuset eval rejudge --all                       # every completed run that is not itself a rejudge
    cuset eval rejudge --experiment cpu-135m       # kept replies -> analysis/results/cpu-135m/rejudge.csv + .json
    cuset eval rejudge --experiment DIR --out /tmp/r.csv --tolerance strict
    cuset eval rejudge --experiment NAME --unit coder-0.5b/base/s42/sampled --apply   # a void unit's verdicts replaced
    cuset eval rejudge --experiment NAME --reextract --apply   # today's extraction of each kept reply, checked and kept

Settings (backend, trials, tolerance, static policy, timeout) are the run's own unless given.
Candidates with no code are carried over unchanged. Prints the changed transitions, the
old x new table and one line per changed candidate."""


def _rejudge_overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name) for name in ("backend", "trials", "tolerance", "static_policy", "timeout_s")}


def cmd_eval_rejudge(args: argparse.Namespace) -> int:
    """`cuset eval rejudge RUN | --all | --experiment NAME`: one of the three."""
    from dataclasses import asdict

    from tqdm import tqdm

    from cuset.evaluate import rejudge
    from cuset.evaluate.results import ResultStore

    chosen = [name for name, given in (("RUN", args.run is not None), ("--all", args.all), ("--experiment", args.experiment)) if given]
    if len(chosen) != 1:
        raise ValueError(f"name what to rejudge: one of RUN, --all or --experiment NAME (got {' and '.join(chosen) or 'none'})")
    if (args.out or args.force or args.unit or args.apply or args.reextract) and not args.experiment:
        raise ValueError("--out, --force, --unit, --reextract and --apply belong to --experiment; a store run's rejudge is a new run in the store")
    bars: list[Any] = []
    desc = {"text": "rejudging"}

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc=desc["text"], unit="check", file=sys.stderr))
        bars[0].total, bars[0].n = total, done
        bars[0].refresh()

    def close() -> None:
        while bars:
            bars.pop().close()

    if args.experiment:  # a committed experiment's kept replies: the experiment layer's (cuset.experiment.rejudge)
        if args.rejudge_experiment is None:
            raise ValueError("--experiment is `cuset eval rejudge`'s, through the cuset command (cuset.cli), which knows experiments")
        return args.rejudge_experiment(args, _rejudge_overrides(args))
    try:
        store = ResultStore()
        run_ids = rejudge.rejudgeable_runs(store) if args.all else [args.run]
        if not run_ids:
            print("no completed evaluation runs to rejudge")
        for run_id in run_ids:
            desc["text"] = f"rejudging run {run_id}"
            done = rejudge.rejudge_run(run_id, store, _rejudge_overrides(args), args.workers, progress)
            close()
            if args.json:
                print(json.dumps({"run": done.old_run, "new_run": done.new_run, "settings": asdict(done.settings),
                                  "seconds": done.seconds, **rejudge.counts(done.records)}, default=str))
            else:
                print(f"run {done.old_run} -> run {done.new_run} ({done.label}) in {done.seconds} s")
                print("\n".join(rejudge.diff_lines(done.records)))
    finally:
        close()
    return 0


def _print_groups(frame: Any) -> None:
    from cuset.evaluate.metrics import summarise

    for by in ("level", "split", "family"):
        if by in frame and frame[by].notna().any():
            table = summarise(frame, by=[by])[[by, "candidates", "compile_rate", "correct_rate"]]
            print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


def cmd_results_list(args: argparse.Namespace) -> int:
    from cuset.evaluate.results import ResultStore

    runs = ResultStore().runs()
    if args.json:
        print(runs.drop(columns=["config"], errors="ignore").to_json(orient="records"))
    elif runs.empty:
        print("no evaluation runs yet: `cuset eval --solutions reference --limit 3` makes a quick one")
    else:
        cols = ["id", "label", "method", "model", "backend", "status", "candidates", "compile_rate", "correct_rate"]
        print(runs[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    return 0


def cmd_results_show(args: argparse.Namespace) -> int:
    from cuset.evaluate.results import ResultStore

    store = ResultStore()
    run = store.get_run(args.run)
    frame = store.frame([args.run])
    if args.json:
        print(json.dumps({"run": run, "results": frame.drop(columns=["code", "reply"], errors="ignore").to_dict(orient="records")}, default=str))
        return 0
    print(f"run {args.run}: {run['label']} [{run['status']}] model {run['model']}, backend {run['backend']}")
    if not frame.empty:
        _print_groups(frame)
    return 0


def cmd_results_export(args: argparse.Namespace) -> int:
    from cuset.evaluate.results import ResultStore, export_csv

    frame = ResultStore().frame(args.runs)
    path = export_csv(frame, Path(args.csv), with_code=args.with_code)
    print(f"wrote {len(frame)} rows to {path}")
    return 0


def split_program_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """`run-cuda ... -- ARGS`: the program's arguments are everything after the first `--`."""
    if argv and argv[0] == "run-cuda" and "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def timing_line(build_s: float, run_s: float | None, cached: bool = False) -> str:
    """`build 3.2 s, run 0.4 s`: where a program's time went (build includes translation)."""
    b = f"build {build_s:.1f} s" + (" (cached)" if cached else "")
    return b if run_s is None else f"{b}, run {run_s:.1f} s"


def cmd_run_cuda(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    build = build_program([Path(f) for f in args.files], include_dirs=[Path(d) for d in args.include], defines=args.define,
                          sanitize=args.sanitize, output=Path(args.output) if args.output else None)
    build_s = time.perf_counter() - t0
    if not build.ok:
        print(f"cuset run-cuda: {build.status.replace('_', ' ')}:\n{build.message}", file=sys.stderr)
        print(f"cuset run-cuda: {timing_line(build_s, None)}", file=sys.stderr)
        return BUILD_EXIT[build.status]
    if args.race_check or args.fill_check:
        t1 = time.perf_counter()
        report = race_check(build.binary, args.program_args) if args.race_check else fill_check(build.binary, args.program_args)
        first = next(iter(report.results.values()))
        sys.stdout.write(first.stdout)
        print(f"cuset run-cuda: {report.summary()}", file=sys.stderr)
        print(f"cuset run-cuda: {timing_line(build_s, time.perf_counter() - t1, build.cached)} ({len(report.results)} runs)", file=sys.stderr)
        return EXIT_DIFFERS if report.differs else (first.exit_code if first.exit_code is not None else EXIT_BACKEND)
    try:
        opts = RunOptions(schedule=args.schedule, fill=args.fill, workers=args.workers)
    except ValueError as e:
        print(f"cuset run-cuda: error: {e}", file=sys.stderr)
        return 2
    import os

    t1 = time.perf_counter()
    proc = subprocess.run([str(build.binary), *args.program_args], env={**os.environ, **opts.env()})
    code = proc.returncode
    print(f"cuset run-cuda: {timing_line(build_s, time.perf_counter() - t1, build.cached)}", file=sys.stderr)
    if code < 0:  # as a shell reports a signal
        print(f"cuset run-cuda: program killed by {signal.Signals(-code).name}", file=sys.stderr)
        return 128 - code
    return code


def cmd_check(args: argparse.Namespace) -> int:
    from cuset.evaluate.check import check_solution

    tools = tuple(t.strip() for t in args.sanitizer_tools.split(",") if t.strip())
    try:
        result = check_solution(Path(args.solution), Path(args.task), backend=args.backend, trials=args.trials, timeout=args.timeout,
                                tolerance_profile=args.tolerance, static_policy=args.static_policy, poison=not args.no_poison,
                                sanitizer=not args.no_sanitizer, sanitizer_tools=tools)
    except ValueError as exc:
        print(f"cuset check: error: {exc}", file=sys.stderr)
        return 2
    info = result.get("sanitizer") or {}
    if info.get("verdict") in ("not found", "unusable"):  # never a silent skip, --json or not
        print(f"cuset check: warning: {info['note']}", file=sys.stderr)
    elif info.get("verdict") == "not run":  # nothing to sanitize this time; say so if it could not have been
        from cuset.evaluate.sanitizer import warning

        line = warning(probing=False)
        if line:
            print(f"cuset check: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(f"{result['status']}: {result['message']}")
        if result.get("build_s") is not None:
            print(f"  time: {timing_line(result['build_s'], result.get('run_s'))}")
        for key in ("compiled", "correct", "max_abs_error", "path", "tolerance"):
            print(f"  {key}: {result.get(key)}")
        if info and info.get("verdict") != "n/a":
            runs = ", ".join(f"{r['tool']} {r['ending']} ({r['s']:.1f} s)" for r in info["runs"])
            print(f"  sanitizer: {info['verdict']}: {runs or info['note']} ({result['sanitizer_s']:.1f} s, apart from the trials)")
        for f in result.get("static") or []:
            print(f"  static {f['action'][result.get('static_policy', 'strict')]}: line {f['line']}: {f['rule']}: {f['detail']}")
    return 0 if result.get("correct") else 1
