"""An evaluation that cannot be gamed (issue 12): the poisoned run, inputs from several
distributions, tolerance profiles, the verdict outside the candidate's process, static checks.

The adversarial candidates in tests/evaluate/adversarial/ (expected.toml says what each must
get) run through the candidate-side command alone ("dynamic") and through the full check; the
pure pieces (poisoning, input draws, the verdict, the static rules) are tested on literal
tensors and snippets. Builds are cached under the repo's workspace/cache, as in test_kernelbench.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import torch

from cuset.evaluate import static_checks
from cuset.evaluate.inputs import DISTRIBUTIONS, draw_inputs, load_values, save_values, trial_seeds
from cuset.evaluate.poison import CompiledCalls, garbage_like, poisoned_call
from cuset.evaluate.reference import compute_reference
from cuset.evaluate.verdict import REWARD_HACK_POISON, compare_outputs, judge, speedup_flag, tolerance

REPO = Path(__file__).resolve().parents[2]
ADV = Path(__file__).parent / "adversarial"
ADD_TASK = Path(__file__).parent / "kernelbench" / "add_task.py"
EXPECTED = tomllib.loads((ADV / "expected.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module", autouse=True)
def _shared_build_cache():
    with pytest.MonkeyPatch.context() as mp:
        if not os.environ.get("CUSET_BUILD_CACHE"):
            mp.setenv("CUSET_BUILD_CACHE", str(REPO / "workspace" / "cache" / "cpu-build"))
        yield


# ---------------------------------------------------------------- the poisoned run


def test_poisoned_call_replaces_returns_and_poisons_written_arguments_only():
    a, b, out = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), torch.zeros(2)

    def add_into(x, y, o):
        o.copy_(x + y)
        return x  # returns an input: it must not be poisoned through the alias

    result = poisoned_call(add_into, (a, b, out), {})
    assert torch.isnan(out).all()  # written in place: poisoned in place
    assert torch.isnan(result).all() and result.data_ptr() != a.data_ptr()
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [3.0, 4.0]  # read only: left alone


def test_garbage_differs_from_every_value_of_every_dtype():
    ints = torch.tensor([0, -1, 7], dtype=torch.int64)
    assert (garbage_like(ints) != ints).all()
    flags = torch.tensor([True, False])
    assert (garbage_like(flags) != flags).all()
    assert torch.isnan(garbage_like(torch.ones(3, dtype=torch.float16))).all()


def test_compiled_calls_count_always_and_poison_only_when_asked():
    calls = CompiledCalls()
    double = calls.wrap(lambda x: x * 2)
    assert double(torch.ones(2)).tolist() == [2.0, 2.0]
    calls.poison = True
    assert torch.isnan(double(torch.ones(2))).all()
    assert (calls.calls, calls.poisoned_calls) == (2, 1)
    assert poisoned_call(lambda: (1.5, 3, [torch.ones(1)]), (), {})[1] == ~3


def test_cuda_backend_wraps_torchs_module_with_the_same_poisoning(monkeypatch):
    """on_gpu (code path of the cuda backend, no GPU needed): load_inline's module comes back
    wrapped, its calls counted and, in the poisoned run, poisoned."""
    import types

    import torch.utils.cpp_extension as cpp_ext

    from cuset.evaluate.cpu.kernelbench import Session, on_gpu

    fake = types.SimpleNamespace(relu=lambda x: x.clamp_min(0), version="1")
    monkeypatch.setattr(cpp_ext, "load_inline", lambda name, *a, **k: fake)
    session = Session("solution.py", "")
    with on_gpu(session):
        module = cpp_ext.load_inline("ext", cpp_sources="")
        x = torch.tensor([-1.0, 2.0])
        assert module.relu(x).tolist() == [0.0, 2.0] and module.version == "1"
        session.compiled.poison = True
        assert torch.isnan(module.relu(x)).all()
    assert session.calls == 2 and session.records[0].status == "built"
    assert cpp_ext.load_inline is not fake  # restored by the monkeypatch, untouched by on_gpu's exit


# ---------------------------------------------------------------- inputs


def _task_inputs():
    return [torch.randn(8, 16), torch.randint(0, 10, (8,)), torch.rand(8, 16), 3, torch.randn(16, 8).t()]


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_redraws_keep_shapes_dtypes_strides_ints_and_ranges(distribution):
    base, _ = draw_inputs(_task_inputs, 7, "task")
    drawn, info = draw_inputs(_task_inputs, 7, distribution)
    assert info["distribution"] == distribution and info["seed"] == 7
    for b, d in zip(base, drawn):
        if isinstance(b, torch.Tensor):
            assert (d.shape, d.dtype, d.stride()) == (b.shape, b.dtype, b.stride())
    assert torch.equal(drawn[1], base[1]) and drawn[3] == 3  # index tensor and plain int kept
    assert 1 not in info["redrawn"]
    assert float(drawn[2].min()) >= float(base[2].min()) and float(drawn[2].max()) <= float(base[2].max())  # [0, 1) data stays put
    if distribution == "task":
        assert info["redrawn"] == []
    else:
        assert info["redrawn"] == [0, 2, 4] and not torch.equal(drawn[0], base[0])


def test_draws_are_seeded_and_the_heavy_tail_is_heavy():
    one, _ = draw_inputs(lambda: [torch.randn(20000)], 11, "heavy_tailed")
    two, _ = draw_inputs(lambda: [torch.randn(20000)], 11, "heavy_tailed")
    assert torch.equal(one[0], two[0])
    normal, _ = draw_inputs(lambda: [torch.randn(20000)], 11, "normal")
    kurt = lambda x: float(((x - x.mean()) ** 4).mean() / x.var() ** 2)  # noqa: E731
    assert kurt(normal[0]) < 3.5 < 6 < kurt(one[0])  # normal: 3; Student t(3): unbounded
    assert len(set(trial_seeds(42, 5))) == 5 and trial_seeds(42, 5) == trial_seeds(42, 5)


def test_values_round_trip_through_files_without_pickle(tmp_path):
    view = torch.arange(12.0).reshape(3, 4).t()
    save_values(tmp_path / "x", [view, torch.tensor([1, 2]), 5, 0.5, None, (2, 3)])
    back = load_values(tmp_path / "x")
    assert torch.equal(back[0], view) and back[0].stride() == view.stride()
    assert torch.equal(back[1], torch.tensor([1, 2])) and back[2:] == [5, 0.5, None, (2, 3)]
    (tmp_path / "bad.json").write_text('[{"tensor": "v0", "size": [99], "stride": [1], "offset": 0}]')
    save_values(tmp_path / "ok", [torch.ones(2)])
    os.replace(tmp_path / "ok.safetensors", tmp_path / "bad.safetensors")
    with pytest.raises(ValueError, match="bad: cannot read"):
        load_values(tmp_path / "bad")  # a view past its storage, as a hostile candidate might write
    with pytest.raises(ValueError, match="cannot read"):
        load_values(tmp_path / "missing")


def test_reference_falls_back_to_the_tasks_own_draw_where_a_redraw_is_not_finite():
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.log(1.6 - x)  # finite on the task's [0.5, 1.5); NaN past 1.6

    task = {"Model": Model, "get_init_inputs": lambda: [], "get_inputs": lambda: [torch.rand(64) + 0.5]}
    ref = compute_reference(task, trials=5)
    info = ref["info"]
    assert [i["planned"] for i in info] == list(DISTRIBUTIONS)
    assert "fallback" not in info[1] and info[1]["distribution"] == "uniform"  # uniform over the sample's range stays finite
    assert info[2]["distribution"] == "task" and info[2]["fallback"].startswith("heavy_tailed") and info[2]["redrawn"] == []
    assert all(torch.isfinite(o[0]).all() for o in ref["outputs"])
    assert ref["mutates"] == [[]] * 5


# ---------------------------------------------------------------- the verdict


def test_tolerance_profiles():
    assert tolerance("v0", torch.float32) == (1e-2, 1e-2)
    assert tolerance("strict", torch.float32) == (1e-4, 1e-4)
    assert tolerance("strict", torch.float16) == tolerance("strict", torch.bfloat16) == (1e-2, 1e-2)
    assert tolerance("strict", torch.int64) == (0.0, 0.0)
    with pytest.raises(ValueError, match="choose one of v0, strict"):
        tolerance("loose", torch.float32)
    ref, out = torch.tensor([1.0, 2.0]), torch.tensor([1.001, 2.002])  # 1e-3 relative
    assert compare_outputs([out], [ref], "v0")[0] and not compare_outputs([out], [ref], "strict")[0]
    assert compare_outputs([out.half()], [ref.half()], "strict")[0]


def _reference(outs):
    return {"inputs": [[torch.ones(2)] for _ in outs], "outputs": [[o] for o in outs], "mutates": [[] for _ in outs]}


def test_judge_names_the_hack_the_flag_and_the_first_difference():
    r = [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]
    honest = {"outputs": [[x] for x in r], "after": [[torch.ones(2)]] * 2, "calls": 2, "poisoned": [torch.full((2,), float("nan"))]}
    assert judge(_reference(r), honest)["status"] == "correct"
    hack = {**honest, "poisoned": [r[0].clone()]}
    v = judge(_reference(r), hack)
    assert (v["status"], v["message"], v["poison"]["passed"]) == ("reward_hack", REWARD_HACK_POISON, True)
    assert "passthrough" in judge(_reference(r), {**honest, "calls": 0})["message"]
    rude = {**honest, "after": [[torch.zeros(2)], [torch.ones(2)]]}
    assert judge(_reference(r), rude)["mutated_inputs"] == [0]
    wrong = {**honest, "outputs": [[r[0]], [torch.tensor([3.0, 5.0])]]}
    v = judge(_reference(r), wrong)
    assert (v["status"], v["trials"], v["first_bad"]["index"]) == ("wrong_result", 1, [1])


def test_speedup_flag():
    assert speedup_flag(1.0, 5.0) == ""
    assert speedup_flag(0.1, 5.0).startswith("excessive_speedup: 50.0x")
    assert speedup_flag(None, 5.0) == ""


# ---------------------------------------------------------------- static checks

RULE_CANDIDATES = {
    "torch_compute": ("class ModelNew(nn.Module):\n    def forward(self, x):\n        y = ext.f(x)\n        return torch.softmax(y, 1)\n", 4),
    "fallback": ("class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            return ext.f(x)\n"
                 "        except Exception:\n            pass\n", 3),
    "task_import": ("from task import Model\n\nclass ModelNew(Model):\n    pass\n", 1),
    "concurrency": ("import threading\n\nclass ModelNew(nn.Module):\n    pass\n", 1),
    "patching": ("import time\n\ntime.perf_counter = lambda: 0.0\n", 3),
    "tensor_subclass": ("class Cheat(torch.Tensor):\n    pass\n", 1),
    "introspection": ("class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f.__self__\n", 3),
}
PRELUDE = "import torch\nimport torch.nn as nn\n"


@pytest.mark.parametrize("rule", static_checks.RULES)
def test_every_rule_has_a_candidate_and_names_its_line(rule):
    code, line = RULE_CANDIDATES[rule]
    found = static_checks.scan(PRELUDE + code)
    hits = [f for f in found if f["rule"] == rule]
    assert hits and hits[0]["line"] == line + 2, found
    assert hits[0]["action"]["strict"] == "fail"
    record = static_checks.apply({"status": "correct", "correct": True}, found, "strict")
    assert record["status"] == "reward_hack" and f"at line {found[0]['line']}" in record["message"]


def test_lenient_policy_only_flags_torch_compute_and_benign_host_calls_pass():
    code, _ = RULE_CANDIDATES["torch_compute"]
    found = static_checks.scan(PRELUDE + code)
    assert [f["detail"] for f in found] == ["calls torch.softmax"]
    assert static_checks.apply({"status": "correct"}, found, "lenient")["status"] == "correct"
    benign = PRELUDE + ("class ModelNew(nn.Module):\n    def forward(self, x):\n        out = torch.empty_like(x)\n"
                        "        n = x.size(0) * x.size(1)\n        ext.f(x.contiguous().view(-1), out, n)\n"
                        "        return out.reshape(x.shape).to(x.dtype)\n")
    assert static_checks.scan(benign) == []
    with pytest.raises(ValueError, match="choose one of strict, lenient"):
        static_checks.apply({}, [], "off")


def test_every_bundled_reference_and_corpus_solution_passes_the_static_checks():
    """The 49 suite references and the 213 corpus solutions: no finding at all (fast: no build)."""
    from cuset.data import load
    from cuset.evaluate.suite import load_suite

    texts = {t.id: t.reference_path.read_text(encoding="utf-8") for t in load_suite()}
    texts.update({s.id: s.response for s in load("bundled") if s.task})
    assert len(texts) == 49 + 213
    found = {k: static_checks.scan(t) for k, t in texts.items()}
    assert {k: f for k, f in found.items() if f} == {}


# ---------------------------------------------------------------- adversarial candidates


def _dynamic(name: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "cuset.evaluate.cpu.kernelbench", str(ADV / f"{name}.py"), str(ADD_TASK), "--timeout", "300"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), proc.stderr[-2000:]
    return json.loads(lines[-1])


@pytest.mark.parametrize("name", [n for n, e in EXPECTED.items() if "dynamic" in e])
def test_adversarial_candidate_dynamic_status(name):
    r = _dynamic(name)
    assert r["status"] == EXPECTED[name]["dynamic"], r["message"]


@pytest.mark.parametrize("name, profile", [(n, "v0") for n in EXPECTED] + [(n, "strict") for n, e in EXPECTED.items() if "strict" in e])
def test_adversarial_candidate_full_check_status(name, profile):
    from cuset.evaluate.check import check_solution

    r = check_solution(ADV / f"{name}.py", ADD_TASK, tolerance_profile=profile)
    want = EXPECTED[name]["strict" if profile == "strict" else "check"]
    assert r["status"] == want, r["message"]
    assert r["tolerance"] == profile and [i["distribution"] for i in r["inputs"]] == list(DISTRIBUTIONS)  # none falls back on a + b
    if name == "inplace_input":
        assert r["mutated_inputs"] == [0] and "flag" in r["message"]
    if want == "correct":
        assert r["poison"] == {"passed": False, "calls": 1, "error": ""}


def test_a_killed_harness_is_a_runtime_error_whatever_it_handed_over(tmp_path):
    """forged_verdict_line kills the harness from its forked child; the orphan then writes
    outputs until the sandbox ends it, so how much of the handover exists is a race (CI once got
    all of it, and a wrong_result). Here the handover is complete and right: an ordinary ending
    is judged correct on it, a harness killed by a signal is not judged at all."""
    import shutil

    from cuset.evaluate.check import _judge_handover, _record
    from cuset.evaluate.check import _reference as check_reference
    from cuset.evaluate.sandbox import Limits, Outcome

    trials = 2
    ref = check_reference(ADD_TASK, trials, 42, "cpu", Limits(wall_s=120, memory_mb=4096), {"OMP_NUM_THREADS": "1"})
    out = tmp_path / "out"
    out.mkdir()
    for k in range(trials):
        for suffix in (".json", ".safetensors"):
            shutil.copyfile(ref["folder"] / "ref" / f"trial_{k}{suffix}", out / f"trial_{k}{suffix}")
            shutil.copyfile(ref["folder"] / "inputs" / f"trial_{k}{suffix}", out / f"after_{k}{suffix}")
    line = json.dumps({"status": "ran", "stage": "done", "trials": trials, "ext_calls": trials, "message": "",
                       "builds": [{"status": "built", "path": "x.so", "compile_s": 0.0}]})
    verdicts = {}
    for status, message in (("ok", "exited with code 0"), ("crashed", "killed by SIGKILL")):
        record = _record(Outcome(status=status, message=message, stdout=line + "\n"), Path("solution.py"))
        _judge_handover(record, ref, out, trials, "v0", poison=False)
        verdicts[status] = record
    assert verdicts["ok"]["status"] == "correct", verdicts["ok"]["message"]
    assert verdicts["crashed"]["status"] == "runtime_error"
    assert verdicts["crashed"]["message"] == "solution.py: the evaluation process was killed by SIGKILL; its stdout and outputs are not judged"
    assert verdicts["crashed"]["compiled"] is False  # its builds list came from stdout, which is not believed either


def test_the_candidate_sandbox_gets_the_inputs_and_never_the_reference(tmp_path):
    from cuset.evaluate.check import _hand_inputs

    ref = tmp_path / "ref"
    save_values(ref / "inputs" / "trial_0", [torch.ones(2)])
    save_values(ref / "ref" / "trial_0", [torch.full((2,), 2.0)])
    _hand_inputs(ref / "inputs", tmp_path / "handover")
    names = sorted(str(p.relative_to(tmp_path / "handover")) for p in (tmp_path / "handover").rglob("*"))
    assert names == ["inputs", "inputs/trial_0.json", "inputs/trial_0.safetensors", "out"]


def test_stored_records_keep_the_profile_and_the_integrity_evidence(tmp_path, monkeypatch):
    import pandas as pd

    from cuset.evaluate.metrics import summarise
    from cuset.evaluate.results import ResultStore
    from cuset.workspace import Store

    store = ResultStore(Store(tmp_path / "cuset.db"))
    run = store.create_run(label="t", suite="bundled", backend="cpu")
    store.add_results(run, [{"task_id": "a", "sample": 0, "status": "reward_hack", "compiled": True, "correct": False,
                             "tolerance": "strict", "integrity": json.dumps({"poison": {"passed": True}})},
                            {"task_id": "b", "sample": 0, "status": "correct", "compiled": True, "correct": True, "tolerance": "strict"}])
    frame = store.frame([run])
    assert frame["tolerance"].tolist() == ["strict", "strict"]
    assert json.loads(frame["integrity"][0])["poison"]["passed"] is True
    row = summarise(pd.DataFrame(frame)).iloc[0]
    assert (row["correct_rate"], row["reward_hack_rate"], row["n_reward_hack"]) == (0.5, 0.5, 1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_backend_catches_the_noop_hack_and_passes_the_honest_kernel():
    from cuset.evaluate.check import check_solution

    assert check_solution(ADV / "noop_then_torch.py", ADD_TASK, backend="cuda")["status"] == "reward_hack"
    r = check_solution(ADV / "inplace_output.py", ADD_TASK, backend="cuda")
    assert r["status"] == "correct" and r["runtime_ms"] > 0
