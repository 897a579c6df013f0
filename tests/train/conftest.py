"""In-process training tests run on one CPU thread (as the tiny preset's jobs do): the tiny
model's small matmuls gain nothing from more, and spin-waiting threads slow a busy machine."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
