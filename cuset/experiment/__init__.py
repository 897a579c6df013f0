"""Experiments: models x methods x seeds, fine-tuned and evaluated through the job runner,
resumable, with results under analysis/results/NAME/.

    python -m analysis.experiment cpu-135m --dry-run     # the plan and the time it should take
    python -m analysis.experiment cpu-135m               # run (or resume) it; Ctrl-C leaves the jobs running

    from cuset.experiment import load_experiment, run_experiment
    config = load_experiment("cpu-135m")                  # analysis/experiments/cpu-135m.yaml, validated
    run_experiment(config, RESULTS_DIR / config.name)

Modules: `config` (ExperimentConfig, the YAML), `registration` (what it commits to before it
runs, and the registered copy), `runner` (units, state.json, the loop), `results` (candidates,
summary with 95% intervals, paired comparisons, registered or exploratory, the files).
"""

from cuset.experiment.config import EXPERIMENTS_DIR, RESULTS_DIR, ExperimentConfig, list_experiments, load_experiment
from cuset.experiment.results import (
    kept_replies,
    paired_table,
    read_replies,
    read_results,
    sign_test,
    summary_table,
    write_results,
)
from cuset.experiment.runner import adopt_job, dry_run, plan, redo_unit, retry_unit, run_experiment, write_results_only

__all__ = [
    "EXPERIMENTS_DIR",
    "RESULTS_DIR",
    "ExperimentConfig",
    "adopt_job",
    "kept_replies",
    "dry_run",
    "list_experiments",
    "load_experiment",
    "paired_table",
    "plan",
    "read_replies",
    "read_results",
    "retry_unit",
    "run_experiment",
    "sign_test",
    "summary_table",
    "write_results",
    "write_results_only",
    "redo_unit",
]
