"""The job entry point under `torchrun --nproc_per_node 2` with the gloo backend on CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuset.train import TrainConfig, read_metrics

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_process_gloo_run_of_the_tiny_preset_finishes(tmp_path):
    TrainConfig.from_preset("tiny", method="cuset", max_steps=3, save_steps=2).resolved().save(tmp_path / "config.yaml")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "cuset.train.run", str(tmp_path)]
    done = subprocess.run(command, cwd=REPO, env=os.environ.copy(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["steps"] == 3
    rows = read_metrics(tmp_path / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3]
    # The figures are summed over both processes: 2 processes x batch 2 x 512 tokens.
    assert all(r["tokens"] == 2 * 2 * 512 for r in rows)
    assert (tmp_path / "checkpoints" / "checkpoint-2" / "trainer_state.json").is_file()
