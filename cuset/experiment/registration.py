"""Pre-registration: what an experiment will test, stated in its YAML before it runs, and the
registered copy that holds it to that.

    registration:
      primary: pass@1              # pass@1 (share of candidates correct) or compile_rate
      mode: sampled                # the pass it is read from: greedy or sampled
      comparisons: [cuset - sft, dft - sft]   # "A - B", paired by task; A, B methods of the experiment
      n_samples: 8                 # must equal evaluation.n_samples
      tasks: 49                    # must match the suite / levels / split / limit where that can be counted
      alpha: 0.05                  # of the sign test, Holm-adjusted over the registered comparisons
      registered: 2026-12-05       # the day it was fixed; required unless draft
      draft: false                 # true: the runner refuses to start it

    register(config, out_dir)      # at start: copy the YAML byte for byte, or refuse if it changed
    check_registration(config, out_dir)   # the same refusal, writing nothing (dry run, the app)
    table_registration(config, out_dir)   # (Registration, notes) the results table marks rows by

Why a byte-for-byte copy: the registration is only worth something if nobody (the author
included) can move it after seeing results. The results folder keeps `registration.yaml`, the
source file as it was when the experiment first started, and `registration.json` (its sha256,
where it came from, when, and every forced change). A later start whose source file differs in
any byte is refused, naming what changed; `--force-reregister` goes on, keeping the old copy as
`registration.N.yaml` and recording the change, which the results table then shows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cuset.config import ConfigFile

if TYPE_CHECKING:
    from cuset.experiment.config import ExperimentConfig

# registration.primary -> the paired table's metric it is read from (cuset.experiment.results.PAIRED_METRICS):
# pass@1 from n samples is the mean share of a task's candidates correct (from one greedy candidate: correct or not)
PRIMARY_METRICS = {"pass@1": "correct", "compile_rate": "compiled"}
REGISTRATION_MODES = ("greedy", "sampled")
REGISTERED_COPY = "registration.yaml"
REGISTRATION_RECORD = "registration.json"
REPO = Path(__file__).resolve().parents[2]  # the checkout, as cuset.experiment.config.REPO (which imports this module)


class RegistrationError(ValueError):
    """The experiment may not start as it is: a draft, or its file changed since it was registered."""


def parse_comparison(text: str) -> tuple[str, str]:
    """'cuset - sft' -> ('cuset', 'sft'). The minus needs spaces around it: method names have hyphens."""
    parts = [p.strip() for p in str(text).split(" - ")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"comparison {text!r}: write it as 'A - B' with spaces around the minus (e.g. 'cuset - sft').")
    if parts[0] == parts[1]:
        raise ValueError(f"comparison {text!r}: a method against itself compares nothing.")
    return parts[0], parts[1]


@dataclass
class Registration(ConfigFile):
    """What the experiment commits to before it runs (see the module docstring)."""

    KIND: ClassVar[str] = "registration"

    primary: str = field(default="pass@1", metadata={"help": f"The primary metric, one of {tuple(PRIMARY_METRICS)}."})
    mode: str = field(default="", metadata={"help": f"The pass the primary metric is read from, one of {REGISTRATION_MODES}."})
    comparisons: list[str] = field(default_factory=list, metadata={"help": "'A - B' per comparison, paired by task; A and B are methods (or variants) of the experiment."})
    n_samples: int | None = field(default=None, metadata={"help": "The sampled candidates per task it commits to: evaluation.n_samples."})
    tasks: int | None = field(default=None, metadata={"help": "The tasks it commits to: checked against the suite's selection where it can be counted (bundled, corpus, a local folder)."})
    alpha: float = field(default=0.05, metadata={"help": "Level of the sign test, Holm-adjusted over the registered comparisons."})
    registered: str = field(default="", metadata={"help": "The date it was fixed (YYYY-MM-DD); required unless draft."})
    draft: bool = field(default=False, metadata={"help": "Not fixed yet: the runner refuses to start a draft."})

    def __post_init__(self) -> None:
        if isinstance(self.registered, (dt.date, dt.datetime)):
            self.registered = self.registered.isoformat()[:10]
        self.registered = str(self.registered or "")
        checks = [
            (self.primary in PRIMARY_METRICS, f"primary={self.primary!r}: use one of {', '.join(PRIMARY_METRICS)} (what the results compute)."),
            (self.mode in REGISTRATION_MODES, f"mode={self.mode!r}: use one of {', '.join(REGISTRATION_MODES)} (the pass the primary metric is read from)."),
            (bool(self.comparisons), "comparisons is empty: name at least one, e.g. [cuset - sft]."),
            (self.n_samples is not None, "n_samples is missing: state the sampled candidates per task it commits to (evaluation.n_samples)."),
            (self.tasks is not None, "tasks is missing: state how many tasks it commits to (e.g. 49, the bundled suite)."),
            (0.0 < self.alpha < 1.0, f"alpha={self.alpha}: use a level in (0, 1), e.g. 0.05."),
            (bool(self.registered) or self.draft, "registered is missing: give the date it was fixed (registered: 2026-12-05), or mark it draft: true."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        if self.n_samples < 0 or self.tasks < 1:
            raise ValueError(f"n_samples={self.n_samples}, tasks={self.tasks}: need n_samples >= 0 and tasks >= 1.")
        if self.registered:
            try:
                dt.date.fromisoformat(self.registered)
            except ValueError:
                raise ValueError(f"registered={self.registered!r}: write the date as YYYY-MM-DD.") from None
        self.comparisons = [str(c).strip() for c in self.comparisons]
        pairs = [parse_comparison(c) for c in self.comparisons]
        if len(set(pairs)) != len(pairs):
            raise ValueError(f"comparisons {self.comparisons}: each may appear once.")

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The comparisons as (A, B)."""
        return [parse_comparison(c) for c in self.comparisons]

    @property
    def metric(self) -> str:
        """The paired table's metric of the primary ('correct' or 'compiled')."""
        return PRIMARY_METRICS[self.primary]

    def check(self, config: ExperimentConfig) -> None:
        """Against the experiment it belongs to: methods, mode, sample size; ValueError otherwise."""
        unknown = sorted({m for pair in self.pairs for m in pair} - set(config.methods))
        if unknown:
            raise ValueError(f"comparisons name {unknown}, not methods of the experiment; its methods: {', '.join(config.methods)}.")
        if self.mode not in config.evaluation.modes:
            raise ValueError(f"mode={self.mode!r}, but the experiment evaluates {', '.join(config.evaluation.modes)} only"
                             + (" (set evaluation.n_samples >= 1)" if self.mode == "sampled" else " (set evaluation.greedy: true)") + ".")
        if self.n_samples != config.evaluation.n_samples:
            raise ValueError(f"n_samples={self.n_samples}, but evaluation.n_samples is {config.evaluation.n_samples}: the registered sample size is the one evaluated.")
        known = known_tasks(config)
        if known is not None and known != self.tasks:
            raise ValueError(f"tasks={self.tasks}, but the evaluation selects {known} (suite {config.evaluation.suite}, levels "
                             f"{config.evaluation.levels or 'all'}, split {config.evaluation.split or 'both'}, limit {config.evaluation.limit or 'none'}).")


def known_tasks(config: ExperimentConfig) -> int | None:
    """How many tasks the evaluation selects, where that can be known here without a download:
    the bundled suite, the corpus or a local KernelBench folder; None otherwise (hf:NAME)."""
    from cuset.evaluate.evaluation import select_tasks

    suite = config.evaluation.suite
    if suite not in ("bundled", "corpus") and not Path(suite).expanduser().is_dir():
        return None
    return len(select_tasks(config.evaluation.eval_values(config.evaluation.modes[0], "tiny", 0)))


# --- the registered copy --------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(path: Path, data: bytes) -> None:
    from cuset.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tmp.write_bytes(data))


def _record(out: Path) -> dict[str, Any] | None:
    path = out / REGISTRATION_RECORD
    return json.loads(path.read_text()) if path.is_file() else None


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def describe_changes(old: bytes, new: bytes) -> list[str]:
    """What differs between two versions of an experiment YAML, as lines: each registration
    field, then each other top-level key; 'comments or formatting only' when they parse the same."""
    import yaml

    before, after = yaml.safe_load(old) or {}, yaml.safe_load(new) or {}
    lines = []
    was, now = before.get("registration"), after.get("registration")
    if was != now:
        if not isinstance(was, dict) or not isinstance(now, dict):
            lines.append("registration: added" if was is None else "registration: removed" if now is None else "registration: replaced")
        else:
            lines += [f"registration.{k}: {_short(was.get(k))} -> {_short(now.get(k))}" for k in [*was, *(k for k in now if k not in was)]
                      if was.get(k) != now.get(k)]
    keys = [k for k in [*before, *(k for k in after if k not in before)] if k != "registration"]
    lines += [f"{k}: {_short(before.get(k))} -> {_short(after.get(k))}" for k in keys if before.get(k) != after.get(k)]
    return lines or ["comments or formatting only (the parsed YAML is the same)"]


def _started(out: Path) -> tuple[int, int]:
    """(units submitted or done, units done) in the results folder's state.json."""
    path = out / "state.json"
    if not path.is_file():
        return 0, 0
    units = json.loads(path.read_text()).get("units", {}).values()
    return sum(u.get("job") is not None or u.get("status") == "done" for u in units), sum(u.get("status") == "done" for u in units)


def _plan(config: ExperimentConfig, out: Path, today: dt.date | None = None) -> tuple[str, bytes, dict[str, Any] | None]:
    """What register would do: ('ok' | 'copy' | 'replace' | 'after-start', source bytes, record),
    or RegistrationError when it must refuse without --force-reregister ('replace'/'after-start'
    are only returned to a forced caller, see register)."""
    registration = config.registration
    source = getattr(config, "source", None)
    copy, record = out / REGISTERED_COPY, _record(out)
    if copy.is_file():
        held = copy.read_bytes()
        if record is not None and record.get("sha256") != _sha256(held):
            raise RegistrationError(f"{config.name}: {copy} is not the copy {out / REGISTRATION_RECORD} registered (sha256 "
                                    f"{_sha256(held)[:12]} vs {str(record.get('sha256'))[:12]}): the registered copy was edited. Restore "
                                    "it (git checkout), or start a new experiment name.")
        data = Path(source).read_bytes() if source is not None and Path(source).is_file() else b""
        if held == data:
            return "ok", data, record
        return "replace", data, {"changes": describe_changes(held, data) if data else [f"no source file ({source})"]}
    if registration is None:
        return "ok", b"", None
    if registration.draft:
        raise RegistrationError(f"{config.name}: its registration is a draft (draft: true), and a draft does not run. Settle what it "
                                "leaves open (see the file's comments), set registered: YYYY-MM-DD and remove draft: true.")
    if source is None or not Path(source).is_file():
        raise RegistrationError(f"{config.name}: a registered experiment starts from its YAML file (load_experiment), which is copied "
                                "byte for byte into the results folder; this config has no file.")
    today = today or dt.date.today()
    if dt.date.fromisoformat(registration.registered) > today:
        raise RegistrationError(f"{config.name}: registered: {registration.registered} is after today ({today.isoformat()}); "
                                "the date is the day the registration was fixed, before the run.")
    submitted, done = _started(out)
    if submitted:
        return "after-start", Path(source).read_bytes(), {"submitted": submitted, "done": done}
    return "copy", Path(source).read_bytes(), None


def _refusal(config: ExperimentConfig, out: Path, action: str, info: dict[str, Any]) -> RegistrationError:
    source = getattr(config, "source", None)
    if action == "after-start":
        return RegistrationError(
            f"{config.name}: its YAML has a registration, but the experiment started without one ({info['submitted']} unit(s) submitted, "
            f"{info['done']} done, {out / 'state.json'}): registered now, it would not be a pre-registration. Start it under a new "
            "experiment name (a new YAML), or rerun with --force-reregister, which registers it and marks the results as registered "
            "after the start.")
    return RegistrationError(
        f"{config.name}: {source} changed since it was registered ({out / REGISTERED_COPY}): {'; '.join(info['changes'])}. "
        f"A registered experiment runs as registered: put the file back (`cp {out / REGISTERED_COPY} {source}`), or start a new "
        "experiment name for the changed design, or rerun with --force-reregister, which keeps the old copy as registration.N.yaml, "
        "records the change in registration.json and shows it in the results table.")


def check_registration(config: ExperimentConfig, out_dir: str | Path) -> None:
    """Raise the RegistrationError that register(config, out_dir) would raise; writes nothing."""
    out = Path(out_dir)
    action, _, info = _plan(config, out)
    if action in ("replace", "after-start"):
        raise _refusal(config, out, action, info or {})


def register(config: ExperimentConfig, out_dir: str | Path, force: bool = False, today: dt.date | None = None) -> str:
    """At the start of a run: copy the source YAML of a registered experiment byte for byte to
    out_dir/registration.yaml with registration.json, or check it against the copy there.
    Raises RegistrationError for a draft, an edited copy, or a changed source (unless `force`:
    the old copy stays as registration.N.yaml and the change is recorded). Returns an event line
    ('' when there was nothing to do)."""
    out = Path(out_dir)
    action, data, info = _plan(config, out, today)
    if action == "ok":
        if data and _record(out) is None:  # the copy was written but not its record (a crash between the two)
            _write_record(config, out, data, [])
        return ""
    if action in ("replace", "after-start") and not force:
        raise _refusal(config, out, action, info or {})
    if action == "replace" and (config.registration is None or config.registration.draft or not data):
        raise RegistrationError(f"{config.name}: --force-reregister records a changed registration; it does not remove one or turn it "
                                f"into a draft ({getattr(config, 'source', None)} has {'a draft' if config.registration else 'no registration'}). "
                                f"Put the file back (`cp {out / REGISTERED_COPY} SOURCE`) or start a new experiment name.")
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    record = _record(out) or {}
    history = list(record.get("history", []))
    if action == "replace":
        kept = out / f"registration.{len(history) + 1}.yaml"
        old = (out / REGISTERED_COPY).read_bytes()
        _write(kept, old)
        history.append({"when": now, "kept_as": kept.name, "sha256_before": _sha256(old), "sha256_after": _sha256(data),
                        "changes": (info or {}).get("changes", [])})
    elif action == "after-start":
        history.append({"when": now, "after_start": True, **(info or {})})
    _write(out / REGISTERED_COPY, data)
    _write_record(config, out, data, history, copied=record.get("copied") or now)
    if action == "copy":
        return f"{config.name}: registration copied to {out / REGISTERED_COPY} (sha256 {_sha256(data)[:12]})"
    return f"{config.name}: RE-REGISTERED with --force-reregister ({'; '.join(history[-1].get('changes', [])) or 'after the start'}); recorded in {out / REGISTRATION_RECORD}"


def _write_record(config: ExperimentConfig, out: Path, data: bytes, history: list[dict[str, Any]], copied: str = "") -> None:
    source = Path(getattr(config, "source", "") or "").resolve()
    record = {"file": REGISTERED_COPY, "source": str(source.relative_to(REPO)) if source.is_relative_to(REPO) else str(source),
              "sha256": _sha256(data), "copied": copied or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "registration": config.registration.to_dict() if config.registration else None, "history": history}
    _write(out / REGISTRATION_RECORD, (json.dumps(record, indent=2) + "\n").encode())


def table_registration(config: ExperimentConfig, out_dir: str | Path) -> tuple[Registration | None, list[str]]:
    """The registration the results table marks rows by, and the notes it prints above them:
    the registered copy's own section where the folder has one (what was fixed, whatever the
    YAML says now), else the config's; notes name the copy and every forced change."""
    import yaml

    out = Path(out_dir)
    copy = out / REGISTERED_COPY
    if not copy.is_file():
        return config.registration, []
    section = (yaml.safe_load(copy.read_bytes()) or {}).get("registration")
    registration = Registration.from_dict(section, str(copy)) if isinstance(section, dict) else None
    record = _record(out) or {}
    notes = [f"Registered copy: {REGISTERED_COPY} (sha256 {str(record.get('sha256', _sha256(copy.read_bytes())))[:12]}), "
             f"copied at the start, {str(record.get('copied', '?'))[:10]}."]
    for entry in record.get("history", []):
        if entry.get("after_start"):
            notes.append(f"**Registered after the start** ({entry['when'][:10]}, --force-reregister; {entry.get('done', 0)} unit(s) were "
                         "done): not a pre-registration.")
        else:
            notes.append(f"**Re-registered** {entry['when'][:10]} with --force-reregister (previous copy {entry.get('kept_as')}): "
                         + "; ".join(entry.get("changes", [])) + ".")
    return registration, notes
