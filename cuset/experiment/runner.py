"""Running an experiment: its units (fine-tunes and evaluations) through the job runner,
resumably, then its results folder.

    config = load_experiment("cpu-135m")
    units = plan(config)                          # train/... and eval/... units, in order
    run_experiment(config, out_dir)               # submit, wait, resume, write results

A unit is one fine-tune (model x method x seed) or one evaluation pass (greedy or sampled) of
a fine-tune's final model, or of the base model for method `base` (its greedy pass once, not
per seed: greedy decoding does not depend on the seed). State lives in two places, so that a
restart of the command or the machine loses nothing: the workspace's job store (the truth
about every job) and `state.json` in the results folder (which job belongs to which unit,
attempts, run ids). Each pass of the loop:

    unit done                   -> skip (a fine-tune's LoRA adapter is first kept in the results
                                   folder's models/, once: commit it with the results)
    no job yet                  -> submit it once what it needs is done (an evaluation needs its fine-tune;
                                   one whose job this workspace lacks is restored from models/ when kept
                                   there, else trained again;
                                   a fine-tune waits while another of the experiment's is queued, so the
                                   evaluations of each finished fine-tune go first)
    job queued / running        -> wait (its ETA feeds the experiment's)
    job completed               -> done (an evaluation also records its run id)
    job failed / lost / cancelled -> resume it (a fine-tune from its last checkpoint), up to
                                   max_attempts runs; then the unit is `failed` and the rest go on

Ctrl-C stops the command, not the jobs: they keep running, and the next start picks them up.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cuset.experiment.config import BASE, ExperimentConfig
from cuset.experiment.results import RunInfo

DONE, FAILED, WAITING, PENDING, ACTIVE = "done", "failed", "waiting", "pending", "active"
KEPT_MODELS = "models"  # the results folder's copies of finished adapters (see kept_model)
DEFAULT_ESTIMATE_MIN = {"train_min": 15.0, "greedy_min": 20.0, "sampled_min": 40.0}


@dataclass(frozen=True)
class Unit:
    """One fine-tune or evaluation pass of the experiment."""

    key: str
    kind: str  # "train" or "eval"
    model: str
    method: str
    seed: int
    mode: str = ""  # evaluations: greedy or sampled
    needs: str = ""  # the fine-tune an evaluation evaluates

    @property
    def estimate_key(self) -> str:
        """Its key in ExperimentConfig.estimate (and the group its measured durations pool in)."""
        return "train_min" if self.kind == "train" else f"{self.mode}_min"

    @property
    def run_info(self) -> RunInfo:
        return RunInfo(self.model, self.method, self.seed, self.mode)


def plan(config: ExperimentConfig) -> list[Unit]:
    """Every unit, fine-tunes first (in model, method, seed order), then evaluations."""
    trains, evals = [], []
    for model in config.models:
        for method in config.methods:
            for seed in config.seeds_of(method):
                needs = ""
                if method != BASE:
                    needs = f"train/{model}/{method}/s{seed}"
                    trains.append(Unit(needs, "train", model, method, seed))
                for mode in config.evaluation.modes:
                    if method == BASE and mode == "greedy" and seed != config.seeds_of(method)[0]:
                        continue
                    evals.append(Unit(f"eval/{model}/{method}/s{seed}/{mode}", "eval", model, method, seed, mode, needs))
    return trains + evals


@dataclass
class UnitState:
    """What state.json keeps per unit."""

    status: str = PENDING
    job: int | None = None
    job_created: float | None = None  # the job's creation time: tells it from another job given its id in a replaced workspace
    attempts: int = 0
    run_id: int | None = None
    error: str = ""
    started: float | None = None  # submitted; once done, when its (last) job process started
    finished: float | None = None
    generation: dict[str, Any] = field(default_factory=dict)  # evaluations: the run's generation figures (eos share, tokens/s)
    redone: list[dict[str, Any]] = field(default_factory=list)  # earlier done passes voided by --redo: job, run id, why, when


@dataclass
class State:
    """state.json of an experiment's results folder."""

    path: Path
    units: dict[str, UnitState] = field(default_factory=dict)
    workspace: str = ""

    @classmethod
    def load(cls, path: Path) -> State:
        path = Path(path)
        if not path.is_file():
            return cls(path)
        data = json.loads(path.read_text())
        return cls(path, {k: UnitState(**v) for k, v in data.get("units", {}).items()}, data.get("workspace", ""))

    def save(self) -> None:
        from cuset.files import atomic_write

        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"workspace": self.workspace, "units": {k: asdict(v) for k, v in self.units.items()}}
        atomic_write(self.path, lambda tmp: tmp.write_text(json.dumps(data, indent=2)))

    def of(self, unit: Unit) -> UnitState:
        return self.units.setdefault(unit.key, UnitState())


def unit_config(config: ExperimentConfig, unit: Unit, state: State) -> Any:
    """The TrainConfig or EvalConfig a unit submits."""
    if unit.kind == "train":
        train = config.train_config(unit.model, unit.method, unit.seed)
        if config.select:
            train = replace(train, data=selection_data(config, train, state.path.parent))
        return train
    model = unit.model if unit.method == BASE else f"job:{state.units[unit.needs].job}"
    cfg = config.evaluation.eval_values(unit.mode, model, unit.seed)
    cfg.method = unit.method
    cfg.label = unit_label(config.name, unit)
    return cfg


def unit_label(name: str, unit: Unit) -> str:
    """The label an evaluation unit's run carries in the result store (unique per experiment and unit)."""
    return f"{name}: {unit.model} {unit.method} s{unit.seed} {unit.mode}"


# TrainConfig fields that change how a fine-tune runs, not the model it makes
ADOPT_IGNORED = ("save_steps", "threads", "nproc", "report_to", "output_dir", "evaluate", "eval_every", "preset", "gradient_checkpointing")


def config_differences(path: Path, want: Any) -> list[str]:
    """The fields (apart from ADOPT_IGNORED) in which the fine-tune config saved at `path` (a
    job's config.yaml) makes another model than TrainConfig `want`, as 'field: job X vs unit Y'."""
    from dataclasses import asdict

    from cuset.train.config import TrainConfig

    have, want_values = asdict(TrainConfig.load(path).resolved()), asdict(want.resolved())
    return [f"{k}: job {have.get(k)!r} vs unit {v!r}" for k, v in want_values.items() if k not in ADOPT_IGNORED and have.get(k) != v]


def adopt(config: ExperimentConfig, units: list[Unit], state: State, unit_key: str, job_id: int) -> str:
    """Let fine-tune job `job_id`, run by hand, stand for the train unit `unit_key`: allowed only
    when the job's resolved config is the one the unit would submit (apart from ADOPT_IGNORED).
    Raises ValueError naming each differing field; returns a line saying what was recorded."""
    from cuset import jobs
    from cuset.jobs import job_folder

    unit = next((u for u in units if u.key == unit_key), None)
    if unit is None or unit.kind != "train":
        keys = ", ".join(u.key for u in units if u.kind == "train")
        raise ValueError(f"{config.name}: no fine-tune unit {unit_key!r}; its fine-tune units are {keys}.")
    us = state.of(unit)
    if us.job is not None:
        raise ValueError(f"{config.name}: {unit_key} already has job {us.job} ({us.status}); nothing adopted.")
    try:
        job = jobs.JobStore().get(job_id)
    except jobs.JobError as exc:
        raise ValueError(f"{config.name}: job {job_id}: {exc}") from exc
    path = job_folder(job_id) / "config.yaml"
    if job.kind != "train" or not path.is_file():
        raise ValueError(f"{config.name}: job {job_id} is not a fine-tune (kind {job.kind!r}, {path} {'exists' if path.is_file() else 'missing'}).")
    differ = config_differences(path, unit_config(config, unit, state))
    if differ:
        raise ValueError(f"{config.name}: job {job_id} is not {unit_key}'s fine-tune: " + "; ".join(differ))
    us.job, us.job_created, us.attempts, us.status, us.started = job_id, job.created, 1, ACTIVE, job.started or time.time()
    state.save()
    return f"{unit_key}: job {job_id} adopted ({job.status}); its config matches the unit's"


def selection_data(config: ExperimentConfig, train: Any, out_dir: Path) -> str:
    """The JSONL of `config.select` over the fine-tune's data, ranked on its model's own scores
    under its objective (cuset.selection): written once to out_dir/selections/ and reused."""
    from cuset.confidence import ScoreConfig
    from cuset.data import load
    from cuset.selection import select_samples, write_selection

    top, by = config.select["top"], config.select.get("by", "region_score")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{train.model}-{train.data}-{by}-{top}")
    path = out_dir / "selections" / f"{name}.jsonl"
    if not path.is_file():
        rows = select_samples(load(train.data), ScoreConfig(model=train.model, max_length=train.max_length), train.objective_config(), float(top), by)
        write_selection(rows, path)
    return str(path)


def _settle(unit: Unit, us: UnitState, job: Any, config: ExperimentConfig) -> str:
    """Fold a job's status into the unit's; returns an event line or ''."""
    from cuset import jobs

    if job.status == "completed":  # the job's own times: the queue wait is not the unit's duration
        us.status, us.started, us.finished, us.error = DONE, job.started or us.started, job.finished or time.time(), ""
        if unit.kind == "eval":
            us.run_id = int(job.result.get("eval_run")) if job.result.get("eval_run") is not None else None
            us.generation = _generation_of(us.run_id)
        return f"{unit.key}: done (job {job.id})"
    if job.status in ("failed", "lost", "cancelled"):
        if us.attempts >= config.max_attempts:
            us.status, us.error = FAILED, job.error or job.status
            return f"{unit.key}: FAILED after {us.attempts} runs of job {job.id}: {us.error[:200]}"
        jobs.resume(job.id)
        us.attempts += 1
        us.status = ACTIVE
        return f"{unit.key}: job {job.id} was {job.status} ({(job.error or '')[:120]}); resumed (run {us.attempts} of {config.max_attempts})"
    us.status = ACTIVE
    return ""


def advance(config: ExperimentConfig, units: list[Unit], state: State) -> list[str]:
    """One pass over the units (see the module docstring); returns what changed, as lines."""
    from cuset import jobs
    from cuset.evaluate.evaluation import submit_evaluation

    events = []
    store = jobs.JobStore()
    for unit in units:  # first what the jobs did, so that a fine-tune just finished counts below
        us = state.of(unit)
        if us.status not in (DONE, FAILED) and us.job is not None:
            job = _own_job(store, us)
            if job is None:  # the workspace was replaced: start the unit again
                events.append(f"{unit.key}: job {us.job} is not in this workspace; submitting again")
                us.job, us.job_created, us.status = None, None, PENDING
                continue
            event = _settle(unit, us, job, config)
            if event:
                events.append(event)
        # kept in the pass that sees it done: a validation experiment's last fine-tune has no
        # later pass (nothing waits on it), and the results are written from what is kept
        if unit.kind == "train" and us.status == DONE:
            event = _keep(unit, us, store, state, records_only=config.validation)
            if event:
                events.append(event)
    # Then submissions. One fine-tune is in flight (queued or running) at a time, and evaluations
    # go first, so the evaluations of a finished fine-tune join the queue (which runs in job id
    # order) before the next fine-tune does.
    train_queued = any(u.kind == "train" and state.of(u).status == ACTIVE and (job := _own_job(store, state.of(u))) is not None
                       and job.status in ("queued", "starting", "running") for u in units)
    for unit in sorted(units, key=lambda u: u.kind == "train"):
        us = state.of(unit)
        if us.status in (DONE, FAILED) or us.job is not None:
            continue
        if unit.kind == "train" and train_queued:
            us.status = WAITING
            continue
        if unit.needs:
            need = state.units.get(unit.needs)
            if need is not None and need.status == DONE and need.job is not None and _own_job(store, need) is None:
                restored, why = _restore(config, units, state, unit.needs, store)
                if restored is None:
                    events.append(f"{unit.needs}: its job {need.job} is not in this workspace (its model with it), {why}; training again")
                    need.status, need.job, need.job_created, need.attempts = PENDING, None, None, 0
                    continue
                events.append(f"{unit.needs}: its job {need.job} is not in this workspace; its kept adapter restored as job {restored.id}")
                need.job, need.job_created = restored.id, restored.created
                state.save()
            if need is None or need.status != DONE:
                us.status = FAILED if need is not None and need.status == FAILED else WAITING
                if us.status == FAILED:
                    us.error = f"its fine-tune {unit.needs} failed"
                continue
        cfg = unit_config(config, unit, state)
        job = jobs.submit(cfg) if unit.kind == "train" else submit_evaluation(cfg)
        train_queued = train_queued or unit.kind == "train"
        us.job, us.job_created, us.attempts, us.status, us.started = job.id, job.created, 1, ACTIVE, time.time()
        events.append(f"{unit.key}: submitted as job {job.id}")
        state.save()
    state.save()
    return events


def kept_model(state: State, unit_key: str) -> Path:
    """Where a train unit's finished LoRA adapter is kept beside its results (commit it with
    them): models/<model>-<method>-s<seed>/ of the results folder."""
    return state.path.parent / KEPT_MODELS / unit_key.removeprefix("train/").replace("/", "-")


def _keep(unit: Unit, us: UnitState, store: Any, state: State, records_only: bool = False) -> str:
    """A done fine-tune whose job is in this workspace and whose adapter is not kept yet: keep it
    (cuset.train.keep.keep_finished; its records only with `records_only`, as a validation
    experiment does: nothing evaluates its model later); an event line, or '' when nothing was done."""
    from cuset.train import keep

    dest = kept_model(state, unit.key)
    told = (str(dest), us.job)
    if told in _KEEP_TOLD or us.job is None or _own_job(store, us) is None:
        return ""
    _KEEP_TOLD.add(told)  # once per process: the adapter is hashed, and a full fine-tune's "not kept" said once
    line = keep.keep_finished(us.job, dest, store=store, records_only=records_only)
    return f"{unit.key}: {line}" if line else ""


def _restore(config: ExperimentConfig, units: list[Unit], state: State, unit_key: str, store: Any) -> tuple[Any, str]:
    """The train unit's kept adapter restored as a job of this workspace: (job, '') or (None,
    why not): none kept, the copy unusable, or kept from another config than the unit's."""
    from cuset.jobs import JobError
    from cuset.train import keep

    kept = kept_model(state, unit_key)
    if not (kept / keep.KEPT_MARKER).is_file():
        if (kept / "result.json").is_file():
            return None, f"and {kept} keeps its records only (a full fine-tune's weights are not kept)"
        return None, f"nor kept in {kept}"
    unit = next(u for u in units if u.key == unit_key)
    try:
        differ = config_differences(kept / "config.yaml", unit_config(config, unit, state))
        if differ:
            return None, f"and the adapter kept in {kept} is of another config ({'; '.join(differ)})"
        return keep.restore_finished(kept, store), ""
    except (JobError, OSError, ValueError) as exc:
        return None, f"and the adapter kept in {kept} cannot be used ({exc})"


_KEEP_TOLD: set[tuple[str, int]] = set()


def _generation_of(run_id: int | None) -> dict[str, Any]:
    """The generation figures an evaluation run recorded in its summary ({} for none)."""
    from cuset.evaluate.results import ResultStore

    try:
        summary = ResultStore().get_run(run_id)["summary"] if run_id is not None else {}
    except ValueError:  # not in this workspace's store
        return {}
    return summary.get("generation", {}) if isinstance(summary, dict) else {}


def _own_job(store: Any, us: UnitState) -> Any:
    """The unit's job from this workspace's store, or None when the store has no job of that id,
    or has one that is not the unit's: a replaced workspace numbers its jobs from 1 again, so an
    id alone can name another experiment's job. The unit's own job has the creation time the
    state recorded; a state written before job_created was kept is checked by time instead (the
    unit's job was created before the unit's recorded start, a job of a later workspace after
    it), and the creation time is then recorded."""
    from cuset import jobs

    if us.job is None:
        return None
    try:
        job = store.get(us.job)
    except jobs.JobError:
        return None
    if us.job_created is None:
        if us.started is None or job.created > us.started + 1.0:
            return None
        us.job_created = job.created
    elif abs(job.created - us.job_created) > 1e-3:
        return None
    return job


@dataclass
class Progress:
    """Where the experiment stands: units done / failed / total and an estimate of the time left."""

    done: int
    failed: int
    total: int
    eta_s: float
    active: list[str]

    @property
    def finished(self) -> bool:
        return self.done + self.failed == self.total


def progress_of(config: ExperimentConfig, units: list[Unit], state: State) -> Progress:
    """Units done and the time left: each active job's own ETA (or the unit estimate), plus for
    every unit not started the mean duration of the finished units of its kind, or, before any
    finished, the experiment's `estimate` (minutes)."""
    from cuset import jobs

    durations: dict[str, list[float]] = {k: [] for k in DEFAULT_ESTIMATE_MIN}
    for unit in units:
        us = state.units.get(unit.key)
        if us and us.status == DONE and us.started and us.finished and us.finished > us.started:
            durations[unit.estimate_key].append(us.finished - us.started)
    prior = {**DEFAULT_ESTIMATE_MIN, **config.estimate}
    per_unit = {k: (sum(v) / len(v) if v else 60.0 * prior[k]) for k, v in durations.items()}
    done = failed = 0
    eta = 0.0
    active = []
    store = jobs.JobStore()
    for unit in units:
        us = state.units.get(unit.key) or UnitState()
        if us.status == DONE:
            done += 1
        elif us.status == FAILED:
            failed += 1
        elif (job := _own_job(store, us)) is not None:
            active.append(f"{unit.key} (job {job.id}: {job.status}, {job.phase})")
            eta += job.eta_s if job.status == "running" and job.eta_s is not None else per_unit[unit.estimate_key]
        else:
            eta += per_unit[unit.estimate_key]
    return Progress(done, failed, len(units), eta, active)


def stored_runs(units: list[Unit], state: State, name: str = "") -> tuple[Any, dict[int, Any]]:
    """(ResultStore frame, {run id: RunInfo}) of the finished evaluation units whose runs are in
    this workspace's store. With the experiment's `name`, a stored run counts only if it carries
    the unit's label: a replaced workspace numbers its runs from 1 again, so an id alone can
    name another unit's run."""
    import pandas as pd

    from cuset.evaluate.results import ResultStore

    done = [u for u in units if u.kind == "eval" and u.key in state.units and state.units[u.key].status == DONE]
    runs = {state.units[u.key].run_id: u.run_info for u in done if state.units[u.key].run_id is not None}
    frame = ResultStore().frame(list(runs)) if runs else pd.DataFrame()
    if name and not frame.empty:
        labels = {state.units[u.key].run_id: unit_label(name, u) for u in done}
        frame = frame[frame["run_id"].map(labels) == frame["label"]]
    return frame, runs


def collect(units: list[Unit], state: State, committed: Any = None, name: str = "", stored: Any = None) -> Any:
    """The candidates table of every finished evaluation unit: from the result store, or, for a
    unit whose run is not in this workspace's store (a fresh clone, a replaced machine), from
    the rows the results folder already holds (`committed`, its candidates.csv). `stored` is
    stored_runs(units, state, name), when the caller has it already."""
    import pandas as pd

    from cuset.experiment.results import CANDIDATE_COLUMNS, candidate_rows, sort_candidates

    done = [u for u in units if u.kind == "eval" and u.key in state.units and state.units[u.key].status == DONE]
    frame, runs = stored if stored is not None else stored_runs(units, state, name)
    engines = {us.run_id: us.generation.get("engine", "") for u in done if (us := state.units[u.key]).run_id is not None}
    fresh = candidate_rows(frame, runs, engines)
    if committed is None or committed.empty:
        return fresh
    have = set(fresh[["model", "method", "seed", "mode"]].astype(str).itertuples(index=False, name=None)) if len(fresh) else set()
    wanted = {(u.model, u.method, str(u.seed), u.mode) for u in done}
    keys = committed[["model", "method", "seed", "mode"]].astype(str).apply(tuple, axis=1)
    kept = committed[keys.isin(wanted - have)]
    if kept.empty:
        return fresh
    merged = pd.concat([fresh, kept[list(CANDIDATE_COLUMNS)]], ignore_index=True) if len(fresh) else kept[list(CANDIDATE_COLUMNS)]
    return sort_candidates(merged)


def committed_candidates(out: Path) -> Any:
    """The results folder's candidates.csv as a frame (None when there is none yet)."""
    from cuset.experiment.results import read_table

    path = Path(out) / "candidates.csv"
    frame = read_table(path) if path.is_file() else None
    return None if frame is None or frame.empty and not len(frame.columns) else frame


def write_configs(config: ExperimentConfig, units: list[Unit], state: State, out_dir: Path) -> list[Path]:
    """experiment.yaml (the validated config) and configs/<unit>.yaml: the resolved config
    each job ran (copied from its job folder), the committed one of a unit done in another
    workspace, or, before it ran, the one it will submit."""
    from cuset import jobs
    from cuset.jobs import job_folder

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [config.save(out_dir / "experiment.yaml")]
    store = jobs.JobStore()
    for unit in units:
        us = state.units.get(unit.key)
        target = out_dir / "configs" / (unit.key.replace("/", "_") + ".yaml")
        target.parent.mkdir(parents=True, exist_ok=True)
        source = job_folder(us.job) / "config.yaml" if us and _own_job(store, us) is not None else None
        if source is not None and source.is_file():
            target.write_text(source.read_text())
        elif us and us.status == DONE and target.is_file():
            pass  # done in a workspace not here: what its job ran stays as committed
        elif unit.kind == "train":
            unit_config(config, unit, state).resolved().save(target)
        elif unit.method == BASE:
            unit_config(config, unit, state).save(target)
        else:
            continue  # an evaluation of a fine-tune not yet submitted names no job yet
        paths.append(target)
    return paths


class SlowHardwareError(RuntimeError):
    """The experiment's recipe computes in bfloat16 and this machine has no fast bfloat16."""


def slow_bf16_units(config: ExperimentConfig, units: list[Unit], state: State) -> list[str]:
    """The units still to run whose recipe computes in bfloat16 (a fine-tune under bf16 autocast,
    generation in bfloat16) on a machine without fast bfloat16, as 'unit: what'; [] where
    bfloat16 is fast on the device jobs use (cuset.models.slow_bf16_note) or nothing of it is left. The dtypes are part
    of the recipe and stay as the experiment says (its finished units ran in them), so a
    machine where they crawl is reported before anything is submitted, not silently swapped.
    Not counted: units whose job is already queued or running (following them again costs
    nothing), and everything when jobs go to a Ray cluster ($CUSET_RAY_ADDRESS: its machines,
    not this one, compute). Scoring is not checked: a cuset fine-tune reads the shipped scores
    of the bundled corpus (a `select:` or another data set scores in the model's default dtype)."""
    from cuset import jobs
    from cuset.generate.source import pick_device
    from cuset.models import default_score_dtype, slow_bf16_note

    if os.environ.get("CUSET_RAY_ADDRESS") or not slow_bf16_note("bfloat16", pick_device("auto")):
        return []
    store = jobs.JobStore()
    slow = []
    for unit in units:
        us = state.units.get(unit.key)
        if us is not None and us.status in (DONE, FAILED):
            continue
        if us is not None and (job := _own_job(store, us)) is not None and job.status in ("queued", "starting", "running"):
            continue
        if unit.kind == "train":
            if config.train_config(unit.model, unit.method, unit.seed).resolved().bf16:
                slow.append(f"{unit.key}: trains under bf16 autocast")
            continue
        dtype = config.evaluation.eval_values(unit.mode, unit.model, unit.seed).dtype
        if (default_score_dtype(unit.model) if dtype == "auto" else dtype) == "bfloat16":
            slow.append(f"{unit.key}: generates in bfloat16")
    return slow


def check_hardware(config: ExperimentConfig, units: list[Unit], state: State) -> None:
    """Raise SlowHardwareError naming the units slow_bf16_units finds (see there)."""
    from cuset.models import BF16_SLOW_NOTE

    slow = slow_bf16_units(config, units, state)
    if slow:
        raise SlowHardwareError(
            f"{config.name}: {len(slow)} unit(s) left compute in bfloat16 ({'; '.join(slow[:4])}{'; ...' if len(slow) > 4 else ''}), "
            f"but {BF16_SLOW_NOTE}. Run it on a machine with AMX/avx512_bf16 or a GPU, or start it anyway with --allow-slow-bf16 "
            "(the dtypes stay the recipe's; a unit may then take many times its estimate).")


def run_experiment(config: ExperimentConfig, out_dir: str | Path, poll_s: float = 10.0,
                   on_progress: Callable[[Progress, list[str]], None] | None = None, wait: bool = True,
                   allow_slow_bf16: bool = False, force_reregister: bool = False) -> Progress:
    """Advance the experiment until every unit is done or failed (or once, with wait=False),
    then write its results folder; returns the final progress. Raises SlowHardwareError before
    submitting anything where units left compute in bfloat16 and it is slow here (check_hardware),
    unless allow_slow_bf16; and RegistrationError for a draft registration or a source YAML
    changed since it was registered (cuset.experiment.registration.register), unless
    force_reregister (which records the change)."""
    from cuset import jobs
    from cuset.experiment.registration import register
    from cuset.workspace import workspace_dir

    out = Path(out_dir)
    units = plan(config)
    state = State.load(out / "state.json")
    if not allow_slow_bf16:
        check_hardware(config, units, state)
    registered = [line for line in [register(config, out, force_reregister)] if line]
    state.workspace = str(workspace_dir().resolve())
    write_configs(config, units, state, out)
    while True:
        jobs.reconcile()
        events, registered = registered + advance(config, units, state), []
        progress = progress_of(config, units, state)
        if on_progress is not None:
            on_progress(progress, events)
        if progress.finished or not wait:
            break
        if any((e.startswith("eval/") or config.validation) and ": done" in e for e in events):  # commit-able after every evaluation
            write_results_of(config, units, state, out, progress)
        time.sleep(poll_s)
    write_results_of(config, units, state, out, progress)
    return progress


def write_results_of(config: ExperimentConfig, units: list[Unit], state: State, out: Path, progress: Progress) -> list[Path]:
    """The results folder from the units finished so far: configs, candidates.csv, summary.csv,
    paired.csv, table.md, summary.json (unit counts, failures, minutes per unit) and replies/
    (each unit's replies whose run is in this workspace's store)."""
    from cuset.experiment.registration import table_registration
    from cuset.experiment.results import write_replies, write_results

    write_configs(config, units, state, out)
    failed = {k: v.error for k, v in state.units.items() if v.status == FAILED}
    minutes = {u.key: round((state.units[u.key].finished - state.units[u.key].started) / 60, 1) for u in units
               if u.key in state.units and state.units[u.key].finished and state.units[u.key].started}
    if config.validation:  # no evaluation: the fine-tunes' held-out NLL (cuset.experiment.validation)
        from cuset.experiment.validation import validation_rows, write_validation

        done = [u for u in units if state.units.get(u.key) is not None and state.units[u.key].status == DONE]
        return write_validation(out, validation_rows(done, lambda key: kept_model(state, key)),
                                {"experiment": config.name, "units": len(units), "done": progress.done, "failed": failed, "unit_minutes": minutes})
    generation = {u.key: state.units[u.key].generation for u in units if u.key in state.units and state.units[u.key].generation}
    stored = stored_runs(units, state, config.name)
    candidates = collect(units, state, committed_candidates(out), config.name, stored)
    write_replies(out, *stored)
    missing = missing_rows(units, state, candidates)
    for unit in missing:
        print(f"{config.name}: {unit.key} is done, but neither this workspace's result store (a run labelled "
              f"{unit_label(config.name, unit)!r}) nor {out / 'candidates.csv'} holds its rows; it is left out of the results",
              file=sys.stderr)
    return write_results(out, candidates, {"experiment": config.name, "units": len(units), "done": progress.done, "failed": failed,
                                           "unit_minutes": minutes, "generation": generation,
                                           "done_without_rows": [u.key for u in missing]},
                         *table_registration(config, out), protocol=str(config.evaluation.options.get("protocol", "full")))


def missing_rows(units: list[Unit], state: State, candidates: Any) -> list[Unit]:
    """The done evaluation units of which `candidates` has no row."""
    have = set(candidates[["model", "method", "seed", "mode"]].astype(str).itertuples(index=False, name=None)) if len(candidates) else set()
    return [u for u in units if u.kind == "eval" and u.key in state.units and state.units[u.key].status == DONE
            and (u.model, u.method, str(u.seed), u.mode) not in have]


def following(name: str) -> int | None:
    """The pid of a live `python -m analysis.experiment NAME` process (started here or by hand
    in a shell) other than this one, else None: two followers of one experiment would race on its
    state.json. This process is left out, so that `--adopt` does not find itself."""
    import os

    for entry in Path("/proc").glob("[0-9]*"):
        if entry.name == str(os.getpid()):
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        if "analysis.experiment" in words and name in words[words.index("analysis.experiment") + 1:]:
            return int(entry.name)
    return None


def _unfollowed(config: ExperimentConfig, verb: str) -> None:
    """Refuse a change of state.json while a follower of the experiment runs (it owns the file
    and would write over the change)."""
    pid = following(config.name)
    if pid:
        raise ValueError(f"{config.name}: its follower (process {pid}) is running and owns state.json; stop it first (kill {pid}), {verb}, then start it again.")


def adopt_job(config: ExperimentConfig, out_dir: str | Path, unit_key: str, job_id: int) -> str:
    """`adopt` on the experiment's state.json in out_dir (see `adopt`); refused while a
    follower of the experiment runs (it holds state.json and would write over the change)."""
    _unfollowed(config, "adopt")
    out = Path(out_dir)
    units = plan(config)
    state = State.load(out / "state.json")
    from cuset.workspace import workspace_dir

    state.workspace = state.workspace or str(workspace_dir().resolve())
    return adopt(config, units, state, unit_key, job_id)


def retry_unit(config: ExperimentConfig, out_dir: str | Path, unit_key: str) -> list[str]:
    """A failed unit (one that used up max_attempts runs, after a fix, say) back to pending: the
    next run submits it as a new job. The units that failed only because it had (an evaluation of
    a failed fine-tune) go back with it. Refused for a unit that is not failed, and while a
    follower of the experiment runs (it owns state.json)."""
    _unfollowed(config, "retry")
    out = Path(out_dir)
    units = plan(config)
    keys = [u.key for u in units]
    if unit_key not in keys:
        raise ValueError(f"{config.name}: no unit {unit_key!r}; its units: {', '.join(keys)}")
    state = State.load(out / "state.json")
    us = state.units.get(unit_key)
    if us is None or us.status != FAILED:
        raise ValueError(f"{config.name}: {unit_key} is {us.status if us else PENDING}, not failed; nothing to retry.")
    lines = []
    for unit in units:
        them = state.units.get(unit.key)
        if them is None or them.status != FAILED or (unit.key != unit_key and unit.needs != unit_key):
            continue
        was = f"job {them.job}, {them.attempts} run(s): {them.error[:120]}" if them.job is not None else them.error[:120]
        state.units[unit.key] = UnitState()
        lines.append(f"{unit.key}: failed ({was}) -> pending; the next run submits it again")
    state.save()
    return lines


def redo_unit(config: ExperimentConfig, out_dir: str | Path, unit_key: str, why: str) -> str:
    """A done evaluation unit back to pending, for verdicts that are void (e.g. its pass ran
    before a fix of the loader): the next run submits it as a new job, and until that pass is
    done the unit has no rows in the results. The old pass (job, run id, finished) is kept in the
    unit's `redone` list with `why`. Refused without a reason, for a unit that is not a done
    evaluation (a fine-tune's rerun is another model: give it another seed), and while a
    follower of the experiment runs."""
    import time

    if not why.strip():
        raise ValueError("say why the unit's verdicts are void (--why TEXT): it is kept in state.json beside the old pass")
    _unfollowed(config, "redo")
    units = {u.key: u for u in plan(config)}
    if unit_key not in units:
        raise ValueError(f"{config.name}: no unit {unit_key!r}; its units: {', '.join(units)}")
    if units[unit_key].kind != "eval":
        raise ValueError(f"{config.name}: {unit_key} is a fine-tune; only an evaluation pass is redone (a new fine-tune is a new seed)")
    state = State.load(Path(out_dir) / "state.json")
    us = state.units.get(unit_key)
    if us is None or us.status != DONE:
        raise ValueError(f"{config.name}: {unit_key} is {us.status if us else PENDING}, not done; nothing to redo "
                         f"(a failed unit goes back with --retry)")
    old = {"job": us.job, "run_id": us.run_id, "finished": us.finished, "why": why.strip(), "when": time.time()}
    state.units[unit_key] = UnitState(redone=[*us.redone, old])
    state.save()
    return f"{unit_key}: done (job {us.job}, run {us.run_id}) -> pending, because: {why.strip()}; the next run submits it again"


def write_results_only(config: ExperimentConfig, out_dir: str | Path) -> list[Path]:
    """Rewrite the results folder from state.json and the result store, submitting nothing."""
    out = Path(out_dir)
    units = plan(config)
    state = State.load(out / "state.json")
    return write_results_of(config, units, state, out, progress_of(config, units, state))


def dry_run(config: ExperimentConfig, out_dir: str | Path) -> list[str]:
    """What `run_experiment` would do now, as lines; submits nothing and writes nothing."""
    out = Path(out_dir)
    units = plan(config)
    state = State.load(out / "state.json")
    prior = {**DEFAULT_ESTIMATE_MIN, **config.estimate}
    seeds = f"{len(config.seeds)} seed(s)" if not config.method_seeds else "seeds " + ", ".join(
        f"{m} {config.seeds_of(m)}" for m in config.methods)
    lines = [f"experiment {config.name}: {len(config.models)} model(s) x {len(config.methods)} method(s) x {seeds} "
             f"-> {sum(u.kind == 'train' for u in units)} fine-tunes, {sum(u.kind == 'eval' for u in units)} evaluation passes "
             f"({', '.join(config.evaluation.modes) or 'a validation experiment: their held-out NLL'}); results in {out}"]
    todo_min = 0.0
    for unit in units:
        us = state.units.get(unit.key)
        if us is not None and us.status == DONE:
            lines.append(f"  {unit.key:48} done (job {us.job})")
            continue
        todo_min += prior[unit.estimate_key]
        what = f"job {us.job}, {us.status}" if us is not None and us.job is not None else "to submit"
        if unit.kind == "train":
            c = config.train_config(unit.model, unit.method, unit.seed)
            detail = f"{c.preset}: {c.max_samples or 'all'} samples <= {c.max_length} tokens ({c.overlength}), {c.max_steps or c.epochs} {'steps' if c.max_steps else 'epochs'} of {c.batch_size}x{c.grad_accum}, lora_r {c.lora_r}" + (f", {c.holdout} held out" if c.holdout else "")
        else:
            e = config.evaluation
            detail = f"{e.suite} levels {e.levels or 'all'}{' ' + e.split if e.split else ''}, " + (
                "1 greedy candidate per task" if unit.mode == "greedy" else f"{e.n_samples} sample{'s' * (e.n_samples != 1)} at T={e.temperature}")
            detail += f" (after {unit.needs})" if unit.needs else " (the base model)"
        lines.append(f"  {unit.key:48} {what}: {detail}")
    lines.append(f"estimate: {todo_min / 60:.1f} h left ({prior['train_min']:g} min per fine-tune, {prior['greedy_min']:g} per greedy and "
                 f"{prior['sampled_min']:g} per sampled evaluation pass; the run replaces these with measured times as units finish)")
    if os.environ.get("CUSET_MAX_JOBS", "1") != "1":
        lines.append(f"note: CUSET_MAX_JOBS={os.environ['CUSET_MAX_JOBS']}: jobs run side by side and share the cores")
    from cuset.experiment.registration import RegistrationError, check_registration

    try:
        check_registration(config, out)
        if config.registration is not None:
            lines.append(f"registration: {config.registration.primary} of the {config.registration.mode} pass, comparisons "
                         f"{', '.join(config.registration.comparisons)}; registered {config.registration.registered}")
    except RegistrationError as exc:
        lines.append(f"refused: {exc}")
    slow = slow_bf16_units(config, units, state)
    if slow:
        from cuset.models import BF16_SLOW_NOTE

        lines.append(f"refused here unless --allow-slow-bf16: {len(slow)} unit(s) left compute in bfloat16 and {BF16_SLOW_NOTE}")
    return lines
