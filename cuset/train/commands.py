"""The `cuset train` and `cuset jobs` verbs (registered by cuset.cli through `add_training_commands`).

    cuset train --method cuset --preset cpu              # submit a job and follow it (tqdm bar; Ctrl-C cancels it)
    cuset train --method sft --preset tiny --detach      # print the job id and return
    cuset train --method cuset --config q30 --max-steps 50 --model ./my-model
    cuset train --preset cpu --dry-run                   # print the resolved config, start nothing
    cuset train --preset tiny --ray http://127.0.0.1:8265   # run on a Ray cluster (default $CUSET_RAY_ADDRESS)
    cuset jobs list [--json]                             # id, method, status, step/total, ETA, pid, heartbeat
    cuset jobs show 3 [--json]                           # one job: config, progress, last metrics, result
    cuset jobs logs 3 [--follow] [--tail 50]
    cuset jobs cancel 3
    cuset jobs resume 3 [--detach]

Every verb first reconciles the store: jobs whose process is gone are marked `lost`, and
queued jobs start when a slot is free (`$CUSET_MAX_JOBS`, default 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from cuset.objective import METHODS
from cuset.train.config import OVERLENGTH, PRESETS, TrainConfig, field_help

FLAG_FIELDS = (
    ("model", str), ("data", str), ("max_samples", int), ("max_length", int), ("epochs", float),
    ("max_steps", int), ("batch_size", int), ("grad_accum", int), ("lr", float), ("warmup_steps", float),
    ("lora_r", int), ("lora_alpha", int), ("save_steps", int), ("seed", int), ("output_dir", str), ("nproc", int),
    ("eval_every", int), ("profit_threshold", float), ("slm_fraction", float),
)


def add_training_commands(sub: Any) -> None:
    """Add `train` and `jobs` to the `cuset` parser's subcommands."""
    _add_train(sub)
    _add_jobs(sub)


def _add_train(sub: Any) -> None:
    helps = {name: text.replace("%", "%%") for name, text in field_help().items()}  # argparse formats help with %
    p = sub.add_parser("train", help=f"fine-tune a model ({', '.join(METHODS)}) as a background job")
    p.add_argument("--method", choices=METHODS, help=helps["method"] + " Default: cuset.")
    p.add_argument("--preset", choices=tuple(PRESETS), help="tiny (seconds, tests), cpu (smollm2-135m, minutes here; the default), cpu-coder (coder-0.5b, LoRA), gpu (coder-1.5b, one GPU)")
    p.add_argument("--config", dest="objective", metavar="NAME|FILE", help="objective config: a saved name or a YAML/JSON file")
    p.add_argument("--train-config", metavar="FILE", help="a TrainConfig YAML/JSON; the preset fills what it leaves out, flags override it")
    for name, kind in FLAG_FIELDS:
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, help=helps[name])
    p.add_argument("--overlength", choices=OVERLENGTH, help=helps["overlength"] + " Default: drop.")
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None, help=helps["bf16"])
    p.add_argument("--report-to", dest="report_to", help="comma-separated: " + helps["report_to"])
    p.add_argument("--evaluate", action="store_const", const=True, default=None,
                   help="when the fine-tune completes, evaluate its final model on the bundled suite (a background job; results on the Results page)")
    p.add_argument(
        "--ray", metavar="ADDRESS", default=None,
        help="submit the job to this Ray cluster's job server (http://HOST:8265) instead of running it here; "
        "default $CUSET_RAY_ADDRESS, '' = here. The cluster must see this workspace at the same path.",
    )
    p.add_argument("--detach", action="store_true", help="print the job id and return instead of following the job")
    p.add_argument("--dry-run", action="store_true", help="print the resolved config and start nothing")
    p.add_argument("--json", action="store_true", help="with --detach: print the job as JSON")
    p.set_defaults(func=cmd_train)


def _add_jobs(sub: Any) -> None:
    p = sub.add_parser("jobs", help="list, follow, cancel and resume background jobs")
    verbs = p.add_subparsers(dest="jobs_command", required=True)
    q = verbs.add_parser("list", help="jobs, newest first")
    q.add_argument("--limit", type=int, default=50)
    _json_flags(q)
    q.set_defaults(func=cmd_jobs_list)
    q = verbs.add_parser("show", help="one job in full")
    q.add_argument("job_id", type=int)
    _json_flags(q)
    q.set_defaults(func=cmd_jobs_show)
    q = verbs.add_parser("logs", help="a job's log.txt")
    q.add_argument("job_id", type=int)
    q.add_argument("--tail", type=int, default=100, help="last N lines (0 = all)")
    q.add_argument("--follow", "-f", action="store_true", help="keep printing until the job ends")
    q.set_defaults(func=cmd_jobs_logs)
    q = verbs.add_parser("cancel", help="end a queued or running job and all its processes")
    q.add_argument("job_id", type=int)
    q.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL")
    q.set_defaults(func=cmd_jobs_cancel)
    q = verbs.add_parser("resume", help="queue a lost, failed or cancelled job again (from its last checkpoint)")
    q.add_argument("job_id", type=int)
    q.add_argument("--detach", action="store_true", help="return at once instead of following the job")
    q.set_defaults(func=cmd_jobs_resume)


def _json_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--compact", action="store_true", help="with --json: one line")


# --- train ----------------------------------------------------------------------------------


def train_config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Preset, then the --train-config file, then explicit flags."""
    base: dict[str, Any] = {}
    if args.train_config:
        base = TrainConfig.load(args.train_config).to_dict()
    preset = args.preset or base.get("preset") or "cpu"
    flags = {name: getattr(args, name) for name, _ in FLAG_FIELDS}
    flags |= {"method": args.method, "objective": args.objective, "bf16": args.bf16, "report_to": args.report_to, "evaluate": args.evaluate,
              "overlength": args.overlength}
    explicit = {k: v for k, v in flags.items() if v is not None}
    if args.train_config and args.preset:
        base = {k: v for k, v in base.items() if k not in PRESETS[preset]}  # the named preset wins over the file's preset values
    base.pop("preset", None)
    return TrainConfig.from_preset(preset, **{**base, **explicit})


def cmd_train(args: argparse.Namespace) -> int:
    import yaml

    from cuset import jobs

    config = train_config_from_args(args)
    if args.dry_run:
        print(yaml.safe_dump(config.resolved().to_dict(), sort_keys=False), end="")
        return 0
    jobs.reconcile()
    job = jobs.submit(config, ray_address=args.ray)
    if args.detach:
        print(json.dumps(job.to_dict(), default=float) if args.json else job.id)
        return 0
    if job.on_ray:
        where = f"submitted to Ray at {job.ray_address} as {job.ray_job_id or '(not yet: ' + job.phase + ')'}"
    elif job.status != "queued":
        where = "started"
    else:
        where = f"queued ({jobs.max_running()} may run at once; see `cuset jobs list`)"
    print(f"job {job.id} {where}; folder {job.folder}", file=sys.stderr)
    return follow(job.id)


def _last_metrics(path: Path) -> dict[str, Any]:
    """The last complete line of a metrics.jsonl (reads only its tail)."""
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 8192))
        lines = handle.read().decode(errors="replace").splitlines()
    for line in reversed(lines):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return {}


def follow(job_id: int) -> int:
    """A tqdm bar over the job's steps until it ends; Ctrl-C cancels the job. Exit status 0
    when it completed."""
    from tqdm import tqdm

    from cuset import jobs

    store = jobs.JobStore()
    bar = tqdm(total=0, desc=f"job {job_id}", unit="step", file=sys.stderr, dynamic_ncols=True)
    last_reconcile = 0.0
    try:
        while True:
            if time.monotonic() - last_reconcile > 5.0:
                jobs.reconcile(store)
                last_reconcile = time.monotonic()
            job = store.get(job_id)
            _update_bar(bar, job)
            if job.is_final:
                break
            time.sleep(1.0)
    except KeyboardInterrupt:
        bar.close()
        print(f"\ncancelling job {job_id}...", file=sys.stderr)
        jobs.cancel(job_id)
        return 130
    bar.close()
    print(_summary(job))
    return 0 if job.status == "completed" else 1


def _update_bar(bar: Any, job: Any) -> None:
    if job.total_steps and bar.total != job.total_steps:
        bar.total = job.total_steps
    bar.n = job.step
    row = _last_metrics(job.folder / "metrics.jsonl")
    loss = f" loss {row['loss']:.4f}" if isinstance(row.get("loss"), int | float) else ""
    bar.set_postfix_str(f"{job.status}: {job.phase}{loss}", refresh=False)
    bar.refresh()


def _summary(job: Any) -> str:
    r = job.result or {}
    if job.status == "completed":
        return (
            f"job {job.id} completed: {r.get('steps')} steps, final loss {r.get('final_loss')}, nll {r.get('final_nll')}, "
            f"{r.get('tokens_per_s') or 0:.0f} tok/s, {r.get('total_s')} s; model in {r.get('final_model')}"
        )
    return f"job {job.id} {job.status}: {job.error or job.phase}; log: cuset jobs logs {job.id}"


# --- jobs -----------------------------------------------------------------------------------


def _ago(when: float | None) -> str:
    if not when:
        return "-"
    seconds = max(0.0, time.time() - when)
    return f"{seconds:.0f}s ago" if seconds < 120 else f"{seconds / 60:.0f}m ago" if seconds < 7200 else f"{seconds / 3600:.0f}h ago"


def _eta(seconds: float | None) -> str:
    return "-" if seconds is None else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def _print_json(args: argparse.Namespace, payload: Any) -> None:
    print(json.dumps(payload, indent=None if args.compact else 2, default=float))


def cmd_jobs_list(args: argparse.Namespace) -> int:
    from cuset import jobs

    jobs.reconcile()
    found = jobs.list_jobs(args.limit)
    if args.json:
        _print_json(args, [j.to_dict() for j in found])
        return 0
    print(f"{'id':>4}  {'method':<13} {'preset':<6} {'status':<10} {'step':>9}  {'eta':>7}  {'pid':>7}  {'heartbeat':<9}  phase")
    for j in found:
        print(
            f"{j.id:>4}  {j.method:<13} {j.preset:<6} {j.status:<10} {f'{j.step}/{j.total_steps}':>9}  {_eta(j.eta_s):>7}  "
            f"{j.pid or '-':>7}  {_ago(j.last_heartbeat):<9}  {(j.error or j.phase)[:60]}"
        )
    if not found:
        print("no jobs yet: start one with `cuset train --preset tiny --detach`")
    return 0


def cmd_jobs_show(args: argparse.Namespace) -> int:
    import yaml

    from cuset import jobs

    jobs.reconcile()
    job = jobs.get(args.job_id)
    config = yaml.safe_load((job.folder / "config.yaml").read_text()) if (job.folder / "config.yaml").is_file() else {}
    last = _last_metrics(job.folder / "metrics.jsonl")
    if args.json:
        _print_json(args, {**job.to_dict(), "config": config, "last_metrics": last})
        return 0
    print(f"job {job.id}: {job.method} ({job.preset}) on {job.model}, {job.status}, attempt {job.attempts}")
    print(f"  progress   {job.step}/{job.total_steps} ({job.progress:.0%}), eta {_eta(job.eta_s)}, phase {job.phase}")
    print(f"  process    pid {job.pid or '-'}, last heartbeat {_ago(job.last_heartbeat)}")
    if job.on_ray:
        print(f"  ray        {job.ray_job_id or 'not submitted yet'} at {job.ray_address}")
    print(f"  folder     {job.folder}")
    if job.error:
        print(f"  error      {job.error}")
    if last:
        print(f"  last step  loss {last.get('loss')}, nll {last.get('nll')}, masked {last.get('masked_fraction')}, {last.get('tokens_per_s')} tok/s")
    if job.result:
        print(f"  result     final loss {job.result.get('final_loss')}, {job.result.get('total_s')} s, model {job.result.get('final_model')}")
    return 0


def cmd_jobs_logs(args: argparse.Namespace) -> int:
    from cuset import jobs

    jobs.reconcile()
    job = jobs.get(args.job_id)
    path = job.folder / "log.txt"
    if job.on_ray and not path.is_file():
        return _ray_logs(job, args.tail, args.follow)
    text = jobs.read_log(job.id, args.tail)
    if text:
        print(text)
    if not args.follow:
        return 0
    position = path.stat().st_size if path.is_file() else 0
    try:
        while True:
            if path.is_file() and path.stat().st_size > position:
                with path.open("rb") as handle:
                    handle.seek(position)
                    chunk = handle.read()
                position += len(chunk)
                sys.stdout.write(chunk.decode(errors="replace"))
                sys.stdout.flush()
            if job.is_final:
                return 0
            time.sleep(1.0)
            jobs.reconcile()
            job = jobs.get(job.id)
    except KeyboardInterrupt:
        return 0


def _ray_logs(job: Any, tail: int, follow: bool) -> int:
    """A Ray job's log, kept by Ray: the last `tail` lines, then (with `follow`) what Ray adds
    until the job ends."""
    from cuset import jobs
    from cuset.jobs import ray_jobs

    text = ray_jobs.logs(job) if job.ray_job_id else ""
    lines = text.splitlines()
    if lines:
        print("\n".join(lines[-tail:] if tail > 0 else lines))
    shown, submission = len(text), job.ray_job_id
    try:
        while follow and not job.is_final:
            time.sleep(1.0)
            jobs.reconcile()
            job = jobs.get(job.id)
            if job.ray_job_id != submission:  # resumed: a new submission, a new log
                shown, submission = 0, job.ray_job_id
            text = ray_jobs.logs(job) if job.ray_job_id else ""
            sys.stdout.write(text[shown:])
            sys.stdout.flush()
            shown = len(text)
    except KeyboardInterrupt:
        pass
    return 0


def cmd_jobs_cancel(args: argparse.Namespace) -> int:
    from cuset import jobs

    jobs.reconcile()
    job = jobs.cancel(args.job_id, grace=args.grace)
    print(f"job {job.id} {job.status}")
    return 0


def cmd_jobs_resume(args: argparse.Namespace) -> int:
    from cuset import jobs

    jobs.reconcile()
    job = jobs.resume(args.job_id)
    print(f"job {job.id} {job.status}: {job.phase}", file=sys.stderr)
    return 0 if args.detach else follow(job.id)
