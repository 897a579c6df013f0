"""cuset.jobs.kinds: each kind's module fills in what the generic runner asks of it (its
resume, the follow-ups to a completed job), and the runner finds it by name alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cuset.jobs import JobError, kinds
from cuset.train import TrainConfig

REPO = Path(__file__).resolve().parents[2]


def test_an_unknown_kind_is_refused_with_the_known_ones():
    with pytest.raises(JobError, match="unknown job kind 'nope'; known kinds: train, eval, figures"):
        kinds.get("nope")
    with pytest.raises(JobError, match="unknown job kind"):
        kinds.register(kinds.JobKind("nope"))


def test_a_fine_tune_resumes_from_its_last_checkpoint_and_an_evaluation_runs_again(tmp_path):
    TrainConfig.from_preset("tiny").save(tmp_path / "config.yaml")
    assert kinds.get("train").resume_phase(tmp_path) == "queued to start over (no checkpoint)"
    for step in (2, 4):
        (tmp_path / "checkpoints" / f"checkpoint-{step}").mkdir(parents=True)
        (tmp_path / "checkpoints" / f"checkpoint-{step}" / "trainer_state.json").write_text(f'{{"global_step": {step}}}')
    assert kinds.get("train").resume_phase(tmp_path) == "queued to resume from checkpoint-4"
    assert kinds.get("eval").resume_phase(tmp_path) == "queued to run again"
    assert kinds.entry_point("figures") == "cuset.figures.job"


def test_a_completed_fine_tune_queues_the_evaluations_its_config_asks_for(tmp_path, monkeypatch):
    from cuset.evaluate import evaluation

    asked = []

    def submit_after_training(train_job, config, folder):
        asked.append((train_job, config.evaluate, folder))
        return [type("Job", (), {"id": 8, "model": f"job:{train_job}"})()]

    monkeypatch.setattr(evaluation, "submit_after_training", submit_after_training)
    assert kinds.completed("train", 7, tmp_path, TrainConfig.from_preset("tiny", evaluate=False)) == []
    lines = kinds.completed("train", 7, tmp_path, TrainConfig.from_preset("tiny", evaluate={"levels": [1]}))
    assert lines == ["evaluation job 8 queued for job:7"] and asked == [(7, {"levels": [1]}, tmp_path)]


def test_the_runner_imports_no_stage_and_finds_the_follow_ups_by_name():
    """In a fresh process: importing cuset.jobs loads nothing of cuset.train or cuset.evaluate,
    and asking for a fine-tune's follow-ups imports the module that registers them."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from cuset.jobs import kinds\n"
        "stages = sorted(m for m in sys.modules if m.startswith(('cuset.train', 'cuset.evaluate')))\n"
        "assert not stages, stages\n"
        "config = type('Config', (), {'evaluate': False})()\n"
        "assert kinds.completed('train', 1, Path('.'), config) == []\n"
        "assert 'cuset.evaluate.job' in sys.modules and 'cuset.train' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True, timeout=120)
