"""Shared fixtures. Each test session gets a fresh workspace (store, caches) in a temporary
folder; prepared models are shared with the repo's `workspace/models` so the embedded default
is converted once per machine, not once per run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def _workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("workspace")
    os.environ["CUSET_WORKSPACE"] = str(path)
    os.environ.setdefault("CUSET_MODELS_DIR", str(REPO / "workspace" / "models"))
    os.environ.pop("CUSET_MODEL", None)
    return path


@pytest.fixture(scope="session")
def tiny():
    """(model, tokenizer, resolved) of the tiny random model with SmolLM2's tokenizer."""
    from cuset import models

    return models.load("tiny")


KERNEL = """__global__ void scale(const float* __restrict__ x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}
"""


@pytest.fixture
def kernel_text() -> str:
    return KERNEL
