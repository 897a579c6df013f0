"""The workspace at a glance: what the home page and `cuset` show before any work starts, and
how the dashboard names and lists what is stored (jobs by kind, evaluation runs, times, models).

    from cuset.overview import overview, job_rows, run_names, workspace_stamp
    job_rows(jobs.JobStore().list(kinds=("train",)), "train")   # table rows with that kind's columns
    workspace_stamp()   # changes whenever a job, a scoring run or an evaluation result changes

Pages redraw when `workspace_stamp()` changes (a few cheap SQL aggregates), so whatever a
background job does shows without a reload and without recomputing anything when nothing did.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from cuset import jobs, models
from cuset.data import BUNDLED_CORPUS
from cuset.models import model_name, models_dir
from cuset.objective import list_named
from cuset.workspace import Store, workspace_dir

JOB_KINDS = {"train": "Fine-tunes", "eval": "Evaluations", "figures": "Figures and experiments"}
# What a run of the suite's own solutions evaluated, in words (the config's model is unused there).
SOLUTION_NAMES = {"reference": "reference solutions", "wrong": "planted bugs"}


def local_time(unix: float | None) -> str:
    """A Unix time as a local date and minute ('2026-05-01 14:03'); '' for none."""
    if unix is None or unix != unix or not unix:
        return ""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(float(unix)))


def duration(seconds: float | None) -> str:
    """Seconds as '45 s', '3 min 20 s' or '2 h 05 min'; '' for none."""
    if seconds is None or seconds != seconds or seconds < 0:
        return ""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def canonical_model(name: str) -> str:
    """One name per model: an embedded model's alias or hub id becomes its name ('default' ->
    'coder-0.5b'), the tiny test model's aliases 'tiny'; anything else stays as it is."""
    name = (name or "").strip()
    spec = models.embedded(name)
    if spec is not None:
        return spec.name
    if name in models.TINY_ALIASES:
        return "tiny"
    for spec in models.EMBEDDED.values():
        if name == spec.hub_id:
            return spec.name
    return name


def model_choices(current: str = "") -> list[str]:
    """What a model box offers: the embedded models and 'tiny' (models.MODEL_CHOICES), with
    `current` standing in for the choice it is an alias of, or added at the end."""
    choices = [current if current and canonical_model(m) == canonical_model(current) else m for m in models.MODEL_CHOICES]
    return choices if not current or current in choices else [*choices, current]


def preset_for_model(model: str, presets: Mapping[str, Mapping[str, Any]], fallback: str = "cpu") -> str:
    """The first training preset whose model is `model` (by canonical name), else `fallback`:
    the Fine-tunes page starts on the preset that trains the model the app shows."""
    want = canonical_model(model)
    return next((name for name, values in presets.items() if canonical_model(str(values.get("model", ""))) == want), fallback)


def job_model(job: Any) -> str:
    """The model a job used, as the user gave it; an evaluation of suite solutions says so."""
    if job.kind == "eval":
        solutions = job.preset.split("/")[-1]
        if solutions in SOLUTION_NAMES:
            return SOLUTION_NAMES[solutions]
    return job.model


def _times(job: Any) -> dict[str, Any]:
    end = job.finished or (time.time() if job.started and not job.is_final else None)
    return {"started": local_time(job.started or job.created), "took": duration(end - job.started) if end and job.started else ""}


def job_rows(listed: Sequence[Any], kind: str) -> list[dict[str, Any]]:
    """Table rows of jobs of one kind ('train', 'eval', 'figures') with the columns that kind
    has: a fine-tune's method, preset and steps; an evaluation's candidates and backend; a
    figures job's formats. Times are local dates; progress is a fraction in [0, 1]."""
    if kind not in JOB_KINDS:
        raise ValueError(f"Unknown job kind {kind!r}; valid: {', '.join(JOB_KINDS)}.")
    rows = []
    for job in (j for j in listed if j.kind == kind):
        row: dict[str, Any] = {"id": job.id}
        if kind == "train":
            row |= {"method": job.method, "model": job_model(job), "preset": job.preset}
        elif kind == "eval":
            backend, _, solutions = job.preset.partition("/")
            row |= {"method": job.method, "candidates from": job_model(job) if solutions != "generate" else f"model {job.model}", "backend": backend}
        else:
            row |= {"model": job.model, "formats": job.preset.replace(",", ", ")}
        row |= {"status": job.status, "phase": job.phase, "progress": job.progress, "step": f"{job.step}/{job.total_steps}" if job.total_steps else "",
                "ETA": duration(job.eta_s) if not job.is_final else ""}
        row |= _times(job)
        row["error"] = job.error
        rows.append(row)
    return rows


def run_model(run: Mapping[str, Any]) -> str:
    """The model of an evaluation run as the user gave it; 'reference solutions' for a run of
    the suite's own solutions (whose stored model is only the config's default)."""
    method = str(run.get("method") or "")
    if method in SOLUTION_NAMES:
        return SOLUTION_NAMES[method]
    return str(run.get("model") or "")


def run_name(run: Mapping[str, Any]) -> str:
    """How a run is named wherever one is picked: '#3 sft on job:2 (cuset cpu), 2026-05-01 14:03'.
    The label comes first when the user gave one that is not just method and model."""
    method, model = str(run.get("method") or ""), run_model(run)
    label = str(run.get("label") or "")
    what = f"{method} · {model}" if model and model != method else method or model
    if label and label not in (f"{method} {run.get('model')}", f"{method} {run.get('suite')}"):
        what = f"{label} ({what})"
    return f"#{run['id']} {what}, {local_time(run.get('created'))}".rstrip(", ")


def run_short_name(run: Mapping[str, Any]) -> str:
    """A run in a plot's legend or axis: '#3 my label' (its label, else method and model)."""
    return f"#{run['id']} {run.get('label') or ' '.join(str(x) for x in (run.get('method'), run_model(run)) if x)}"


def run_names(runs: Any, short: bool = False) -> dict[int, str]:
    """run id -> run_name (or run_short_name) for a frame of runs (ResultStore.runs())."""
    name = run_short_name if short else run_name
    return {int(r["id"]): name(r) for r in runs.to_dict("records")} if len(runs) else {}


def scoring_stamp(store: Store | None = None) -> tuple[Any, ...]:
    """Changes whenever a scoring run is recorded (by the app, the CLI or a job)."""
    with (store or Store()).connect() as db:
        return tuple(db.execute("SELECT COUNT(*), MAX(id) FROM scoring_runs").fetchone())


def workspace_stamp(store: Store | None = None) -> tuple[Any, ...]:
    """(jobs, scoring, results) stamps: changes whenever a job changes (status, phase, step,
    heartbeat), a scoring run is recorded or an evaluation result is stored; a page compares it
    with the one it last drew."""
    from cuset.evaluate.results import ResultStore

    store = store or Store()
    return (jobs.JobStore(store.path).version(), scoring_stamp(store), ResultStore(store).version())


def overview() -> dict[str, Any]:
    """Model in force, bundled corpus and its split, scoring runs, saved objective configs and
    the latest jobs (rows by kind, see job_rows)."""
    split_path = BUNDLED_CORPUS.parent / "split.json"
    split = json.loads(split_path.read_text()) if split_path.is_file() else {}
    store = Store()
    listed = jobs.list_jobs(limit=30)
    runs = store.rows("scoring_runs", limit=10)
    for run in runs:
        run["created"] = local_time(run.get("created"))
    return {
        "workspace": str(workspace_dir()),
        "model": model_name(),
        # model folders (a config.json), not the download caches beside them (gguf/, wheels/)
        "prepared_models": sorted(p.parent.name for p in models_dir().glob("*/config.json")),
        "bundled_samples": split.get("n_samples", 0),
        "train_families": split.get("train_families", []),
        "held_out_families": split.get("held_out_families", []),
        "scoring_runs": runs,
        "objective_configs": list_named(),
        "jobs": {kind: job_rows(listed, kind) for kind in JOB_KINDS},
    }
