"""The `compile` backend (nvcc with torch's headers, nothing run) and the `cuda` backend (GPU)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuset.evaluate.check import check_solution
from cuset.evaluate.harness import Candidate, evaluate_candidates

KB = Path(__file__).parent / "kernelbench"
TASK = (KB / "add_task.py").read_text()
GOOD = (KB / "add_solution.py").read_text()
HAS_NVCC = Path("/usr/local/cuda/bin/nvcc").exists() or shutil.which("nvcc") is not None


@pytest.mark.slow
@pytest.mark.skipif(not HAS_NVCC, reason="nvcc is not installed")
def test_compile_backend_builds_good_code_and_names_the_error_line_of_bad_code():
    bad = GOOD.replace("out[i] = a[i] + b[i];", "out[i] = a[i] + c[i];")
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "a[i] + c[i]" in ln)
    cands = [Candidate("good", 0, GOOD, TASK), Candidate("bad", 0, bad, TASK)]
    records = {r["task_id"]: r for r in evaluate_candidates(cands, backend="compile", timeout=150, workers=2)}
    assert (records["good"]["status"], records["good"]["compiled"]) == ("compiled", True), records["good"]["message"]
    assert (records["bad"]["status"], records["bad"]["compiled"]) == ("compile_error", False)
    assert f"solution.py({line})" in records["bad"]["message"] or f"solution.py:{line}" in records["bad"]["message"]
    assert records["bad"]["error_line"] == line or f"({line})" in records["bad"]["message"]


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs a CUDA GPU")
def test_cuda_backend_checks_on_the_gpu_and_times_both_models(tmp_path):
    (tmp_path / "solution.py").write_text(GOOD)
    (tmp_path / "task.py").write_text(TASK)
    r = check_solution(tmp_path / "solution.py", tmp_path / "task.py", backend="cuda", timeout=600)
    assert r["status"] == "correct", r["message"]
    assert r["path"] == "cuda" and r["runtime_ms"] > 0 and r["ref_runtime_ms"] > 0
