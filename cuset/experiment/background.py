"""An experiment followed in the background, for the app: start (or resume) it as its own
process, and read where it stands from state.json and the job store.

    start("cpu-135m")          # `python -m analysis.experiment cpu-135m`, detached; log in the workspace
    following("cpu-135m")      # the follower's pid while it runs, else None
    units_table("cpu-135m")    # one row per unit: status, job, minutes; plus the Progress

The follower only submits jobs and writes the results folder (the fine-tunes and evaluations
are jobs of cuset.jobs either way), so closing the app or stopping the follower loses nothing:
starting it again picks everything up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cuset.experiment.config import REPO, RESULTS_DIR, load_experiment
from cuset.experiment.runner import following  # the pid of a live follower: start refuses a second one


def _log(name: str) -> Path:
    from cuset.workspace import workspace_dir

    folder = workspace_dir() / "experiments"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.log"


def start(name: str, allow_slow_bf16: bool = False) -> int:
    """Start following experiment `name` in a detached process; returns its pid. A ValueError
    when the experiment does not load or is already being followed; a SlowHardwareError (unless
    allow_slow_bf16) when units left compute in bfloat16 and this machine has no fast bfloat16;
    a RegistrationError (a ValueError) for a draft registration or a YAML changed since it was
    registered (the follower would refuse it in its log)."""
    from cuset.experiment.registration import check_registration
    from cuset.experiment.runner import State, check_hardware, plan

    config = load_experiment(name)  # a bad YAML fails here, with its message, not in a background log
    running = following(name)
    if running:
        raise ValueError(f"experiment {name} is already running (process {running}); its progress shows here.")
    if not allow_slow_bf16:
        check_hardware(config, plan(config), State.load(RESULTS_DIR / config.name / "state.json"))
    check_registration(config, RESULTS_DIR / config.name)
    log_file = _log(name)
    argv = [sys.executable, "-m", "analysis.experiment", name] + (["--allow-slow-bf16"] if allow_slow_bf16 else [])
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env={**os.environ})
    return proc.pid


def slow_units(name: str) -> list[str]:
    """The units left of experiment `name` that compute in bfloat16 where it is slow here
    (cuset.experiment.runner.slow_bf16_units); [] when none."""
    from cuset.experiment.runner import State, plan, slow_bf16_units

    config = load_experiment(name)
    return slow_bf16_units(config, plan(config), State.load(RESULTS_DIR / config.name / "state.json"))


def log_tail(name: str, lines: int = 20) -> str:
    """The last lines of the follower's log (tqdm's carriage returns folded)."""
    log_file = _log(name)
    if not log_file.is_file():
        return ""
    text = log_file.read_text(errors="replace").replace("\r", "\n")
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


def units_table(name: str) -> tuple[list[dict[str, Any]], Any]:
    """(one row per unit: unit, status, job, minutes, error; the experiment's Progress)."""
    from cuset.experiment.runner import State, plan, progress_of

    config = load_experiment(name)
    units = plan(config)
    state = State.load(RESULTS_DIR / config.name / "state.json")
    rows = []
    for unit in units:
        us = state.units.get(unit.key)
        minutes = round((us.finished - us.started) / 60, 1) if us and us.finished and us.started else None
        rows.append({"unit": unit.key, "status": us.status if us else "pending", "job": us.job if us else None,
                     "minutes": minutes, "error": (us.error if us else "")[:160]})
    return rows, progress_of(config, units, state)
