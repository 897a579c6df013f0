"""KernelBench mode of the CPU backend (cuset.evaluate.cpu.kernelbench).

Solutions written for the project (tests/evaluate/kernelbench/) cover each outcome: correct on the
torch shim (elementwise, shared-memory reduction, AT_DISPATCH over half and float, a
std::vector<Tensor> return, PYBIND11_MODULE bindings, strided input, Python that puts tensors
on "cuda"), correct through the real-torch fallback (marked slow: ~40 s to build uncached), an off-by-one guard and an output left partly unwritten (wrong: garbage, not
zeros), a failing TORCH_CHECK, a compile error mapped to the solution's line, and a kernel given a
CPU tensor (a device fault). The pure pieces are tested alone, and bundled corpus solutions run on
the shim: three per family by default, all 213 with CUSET_KB_CORPUS=all.

Builds are cached under the repo's workspace/cache (as the models are), so reruns skip g++.
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from cuset.evaluate.cpu import kernelbench
from cuset.evaluate.cpu.kernelbench import MISSING_ATEN, InlineCall, KernelBenchOptions, _line_in
from cuset.evaluate.verdict import compare_outputs

REPO = Path(__file__).resolve().parents[2]
KB = Path(__file__).parent / "kernelbench"
CORPUS = REPO / "cuset" / "data" / "bundled" / "corpus.jsonl"
GARBAGE = struct.unpack("<f", b"\xcd" * 4)[0]  # a float32 the emulator's fill byte makes


@pytest.fixture(scope="module", autouse=True)
def _shared_build_cache():
    with pytest.MonkeyPatch.context() as mp:
        if not os.environ.get("CUSET_BUILD_CACHE"):
            mp.setenv("CUSET_BUILD_CACHE", str(REPO / "workspace" / "cache" / "cpu-build"))
        yield


def run_cli(solution: Path, task: Path, *extra: str) -> dict:
    """The command the sandbox runs, in a fresh process: `evaluate` forks, and a fork of this
    multi-threaded pytest process (torch, browser and job threads) can deadlock in the child."""
    proc = subprocess.run([sys.executable, "-m", "cuset.evaluate.cpu.kernelbench", str(solution), str(task), "--timeout", "600", *extra],
                          capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), proc.stderr[-2000:]
    return json.loads(lines[-1])


def check(solution: str | Path, task: str | Path = "add_task.py") -> dict:
    return run_cli(KB / solution, KB / task)


# ---------------------------------------------------------------- correct solutions


def test_elementwise_add_is_correct_on_the_shim():
    r = check("add_solution.py")
    assert (r["status"], r["path"], r["compiled"], r["correct"]) == ("correct", "shim", True, True)
    assert r["trials"] == 5 and r["ext_calls"] == 5
    assert r["max_abs_error"] == 0.0
    assert r["builds"][0]["name"] == "add_ext"


def test_shared_memory_reduction_is_correct():
    r = check("rowsum_solution.py", "rowsum_task.py")
    assert r["status"] == "correct", r["message"]
    assert r["max_abs_error"] < 1e-3


@pytest.mark.parametrize("task", ["scale_half_task.py", "scale_float_task.py", "scale_strided_task.py"])
def test_at_dispatch_over_half_and_float(task):
    r = check("scale_solution.py", task)
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]


def test_vector_of_tensors_comes_back_as_a_list():
    r = check("minmax_solution.py", "minmax_task.py")
    assert r["status"] == "correct", r["message"]


def test_pybind_module_defines_the_bindings():
    r = check("pybind_solution.py")
    assert r["status"] == "correct", r["message"]


def test_cuda_device_python_code_runs_on_the_cpu():
    # device="cuda" parameters, .cuda(), .to("cuda"), torch.cuda.synchronize(); Model's state copied in
    r = check("bias_solution.py", "bias_task.py")
    assert r["status"] == "correct", r["message"]


@pytest.mark.slow
def test_aten_beyond_the_shim_falls_back_to_real_torch():
    r = check("aten_fallback_solution.py", "matmul_relu_task.py")
    assert (r["status"], r["path"]) == ("correct", "torch"), r["message"]
    assert "'matmul' is not a member of 'torch'" in r["builds"][0]["shim_message"]


# ---------------------------------------------------------------- wrong solutions


def test_off_by_one_guard_is_a_wrong_result():
    r = check("wrong_guard_solution.py")
    assert (r["status"], r["compiled"], r["correct"]) == ("wrong_result", True, False)
    assert r["first_bad"]["index"] == [3, 999] and r["first_bad"]["n_bad"] == 1
    assert r["first_bad"]["out"] == GARBAGE


def test_unwritten_empty_output_is_garbage_not_zeros():
    r = check("partial_write_solution.py")
    assert r["status"] == "wrong_result"
    assert r["first_bad"]["out"] == GARBAGE  # torch::empty is not zeros, as on a GPU
    assert r["first_bad"]["n_bad"] == 4000 - (4000 // 256) * 256


def test_failing_torch_check_is_a_runtime_error_with_its_message():
    r = check("check_solution.py")
    assert (r["status"], r["compiled"]) == ("runtime_error", True)
    assert "add_cuda expects 3-D inputs, got 2-D" in r["message"]


def test_a_solution_that_dies_before_building_anything_did_not_compile(tmp_path):
    # coder-0.5b's base replies call APIs that do not exist (torch.cuda.load_inline): a runtime
    # error with no extension built, which used to count as compiled
    from cuset.evaluate.check import check_solution

    sol = tmp_path / "invented_api_solution.py"
    sol.write_text("import torch\n\nkernel = torch.cuda.load_inline(name='k', cpp_sources='', cuda_sources='')\n\n"
                   "class ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return kernel.add(a, b)\n")
    direct = run_cli(sol, KB / "add_task.py")
    sandboxed = check_solution(sol, KB / "add_task.py", trials=1)
    for r in (direct, sandboxed):
        assert (r["status"], r["compiled"]) == ("runtime_error", False), r["message"]
        assert "has no attribute 'load_inline'" in r["message"]


def test_compile_error_points_at_the_solution_line():
    path = KB / "compile_error_solution.py"
    line = _line_in(path.read_text(), "        out[i] = a[i] + c[i];")
    r = check(path)
    assert (r["status"], r["compiled"]) == ("compile_error", False)
    assert f"{path.name}:{line}:" in r["message"] and "'c' was not declared" in r["message"]


def test_kernel_given_a_cpu_tensor_is_a_device_fault():
    r = check("host_tensor_solution.py")
    assert (r["status"], r["compiled"], r["path"]) == ("runtime_error", True, "shim")
    assert "argument 3 is a host pointer" in r["message"]


def test_command_line_prints_the_record_last():
    cmd = [sys.executable, "-m", "cuset.evaluate.cpu.kernelbench", str(KB / "add_solution.py"), str(KB / "add_task.py"), "--trials", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=600)
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (record["status"], record["trials"], record["trials_requested"]) == ("correct", 2, 2)


# ---------------------------------------------------------------- pure pieces


def test_compare_outputs_checks_shape_then_values_then_constancy():
    ref = torch.arange(6.0).reshape(2, 3)
    assert compare_outputs([ref.clone()], [ref])[0]
    ok, err, reason, _ = compare_outputs([ref.reshape(3, 2)], [ref])
    assert not ok and math.isinf(err) and "shape (3, 2)" in reason
    bad = ref.clone()
    bad[1, 2] = 9.0
    ok, err, reason, first = compare_outputs([bad], [ref])
    assert not ok and err == 4.0 and first == {"output": 0, "index": [1, 2], "out": 9.0, "ref": 5.0, "n_bad": 1}
    ok, _, reason, _ = compare_outputs([torch.full((4,), 1.0)], [torch.tensor([1.0, 1.0, 1.0, 1.005])])
    assert not ok and "constant output" in reason
    assert compare_outputs([ref, ref], [ref, ref])[0]
    assert not compare_outputs([ref], [ref, ref])[0]


def test_bindings_come_from_functions_or_from_pybind_defs():
    call = InlineCall.from_args("x", "torch::Tensor f(torch::Tensor a);", None, ["f"], extra_cflags=["-O3", "-DTILE=16"])
    assert call.functions == {"f": "f"} and call.defines == ["TILE=16"]
    pybind = 'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def("fwd", &ns::forward, "doc");\n  m.def("g", torch::wrap_pybind_function(g));\n}'
    assert InlineCall.from_args("x", pybind).functions == {"fwd": "ns::forward", "g": "g"}


def test_source_strings_are_located_in_the_solution_file():
    text = 'import torch\nsrc = """\n__global__ void k() {}\n"""\n'
    assert _line_in(text, "\n__global__ void k() {}\n") == 2
    assert _line_in(text, "// not there") is None


def test_cuda_in_cpp_sources_is_refused_as_torch_would():
    # load_inline compiles cpp_sources with the host compiler: a kernel there never builds on a GPU
    call = InlineCall.from_args("x", "// __global__ in a comment is fine\n__global__ void k() {}", "", ["f"])
    assert "cpp_sources[0]:2: error: CUDA syntax '__global__'" in kernelbench._cpp_problem(call)
    assert kernelbench._cpp_problem(InlineCall.from_args("x", "torch::Tensor f(torch::Tensor x);", "", ["f"])) == ""
    assert "no functions to bind" in kernelbench._cpp_problem(InlineCall.from_args("x", "int f();", "", []))


def test_options_are_validated():
    with pytest.raises(ValueError, match="path must be one of"):
        KernelBenchOptions(path="gpu")
    with pytest.raises(ValueError, match="trials"):
        KernelBenchOptions(trials=0)


def test_missing_aten_is_told_apart_from_ordinary_errors():
    assert MISSING_ATEN.search("s.py:3:9: error: 'matmul' is not a member of 'torch'")
    assert MISSING_ATEN.search("s.py:3:9: error: 'class at::Tensor' has no member named 'softmax'")
    assert MISSING_ATEN.search("s.py:3:9: error: no match for 'operator+' (operand types are 'at::Tensor' and 'at::Tensor')")
    assert MISSING_ATEN.search("s.py:1:10: fatal error: ATen/native/ReduceOps.h: No such file or directory")
    assert not MISSING_ATEN.search("s.py:14:25: error: 'c' was not declared in this scope")
    assert not MISSING_ATEN.search("s.py:9:5: error: expected ';' before 'return'")


# ---------------------------------------------------------------- bundled corpus


def _corpus() -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}


def _corpus_ids() -> list[str]:
    rows = list(_corpus().values())
    if os.environ.get("CUSET_KB_CORPUS") == "all":
        return [r["id"] for r in rows]
    picked: dict[str, list[str]] = {}
    templates: set[str] = set()
    for r in rows:  # three per family, each from a different template
        fam = picked.setdefault(r["family"], [])
        if len(fam) < 3 and r["meta"]["template"] not in templates:
            templates.add(r["meta"]["template"])
            fam.append(r["id"])
    return [i for ids in picked.values() for i in ids]


@pytest.mark.parametrize("sample_id", _corpus_ids())
def test_bundled_corpus_solution_is_correct_on_the_shim(sample_id):
    rec = _corpus()[sample_id]
    folder = Path(os.environ["CUSET_BUILD_CACHE"]).parent / "kernelbench-corpus" / sample_id  # a stable path: builds stay cached
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "solution.py").write_text(rec["response"], encoding="utf-8")
    (folder / "task.py").write_text(rec["task"], encoding="utf-8")
    r = run_cli(folder / "solution.py", folder / "task.py")
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]
