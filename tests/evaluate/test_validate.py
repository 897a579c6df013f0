"""`cuset suite validate` (cuset/evaluate/suite/validate.py): robust-kbench's task filters on
hand-made outputs, on small task modules run in the sandboxed child, and on the bundled suite."""

from __future__ import annotations

import torch

from cuset.evaluate.suite import Task
from cuset.evaluate.suite.validate import output_flags, validate_tasks

GOOD = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.randn(16, 8)]


def get_init_inputs():
    return []
"""
# output = 0 * x: constant, input- and (weightless) independent
CONSTANT = GOOD.replace("return self.lin(x)", "return torch.zeros(16, 4) + 0 * x.sum()").replace("self.lin = nn.Linear(8, 4)", "pass")
# LayerNorm's initial weights are ones and zeros under every seed
LAYERNORM = GOOD.replace("self.lin = nn.Linear(8, 4)", "self.ln = nn.LayerNorm(8)").replace("return self.lin(x)", "return self.ln(x)")


def test_filters_on_literal_outputs():
    g = torch.Generator().manual_seed(0)
    varied = [torch.randn(6, 5, generator=g)]
    other = [torch.randn(6, 5, generator=g)]
    assert output_flags(varied, other, [torch.randn(6, 5, generator=g)]) == ([], {"std_0": float(varied[0].double().std())})
    flags, _ = output_flags([torch.full((6, 5), 3.0)], other, None)
    assert [f.split(":")[0] for f in flags] == ["near_constant"]
    rows = [torch.arange(5.0).repeat(6, 1)]  # every row the same: no spread along axis 0
    flags, _ = output_flags(rows, other, None)
    assert flags == ["tiny_axis_spread: axis 0 (size 6): mean spread 0 against 1.44 overall"]
    flags, _ = output_flags(varied, [varied[0] + 1e-4], [varied[0].clone()])
    assert [f.split(":")[0] for f in flags] == ["input_independent", "weight_independent"]


def test_validate_runs_the_references_in_a_child_and_honours_documented_exceptions(tmp_path):
    folder = tmp_path / "L1-ln"
    folder.mkdir()
    (folder / "task.py").write_text(LAYERNORM)
    (folder / "meta.toml").write_text('validate_ok = ["weight_independent"]\nvalidate_why = "LayerNorm starts at ones and zeros"\n')
    tasks = [Task(id="good", level=1, task_text=GOOD), Task(id="constant", level=1, task_text=CONSTANT),
             Task(id="ln", level=1, task_text=LAYERNORM, task_path=folder / "task.py"),
             Task(id="broken", level=1, task_text="raise RuntimeError('no task here')\n")]
    rows = {r["id"]: r for r in validate_tasks(tasks)}
    assert rows["good"]["flags"] == [] and rows["good"]["error"] == ""
    assert [f.split(":")[0] for f in rows["constant"]["flags"]] == ["near_constant", "input_independent"]
    assert rows["ln"]["flags"] == [] and [a.split(":")[0] for a in rows["ln"]["accepted"]] == ["weight_independent"]
    assert rows["ln"]["why"] == "LayerNorm starts at ones and zeros"
    assert "RuntimeError: no task here" in rows["broken"]["error"]


def test_the_bundled_suite_passes_every_filter():
    from cuset.evaluate.suite import load_suite

    rows = validate_tasks(load_suite())
    assert len(rows) == 49
    assert [(r["id"], r["flags"], r["error"]) for r in rows if r["flags"] or r["error"]] == []
