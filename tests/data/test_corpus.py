"""Tests for the bundled corpus (`cuset/data/corpus`, `cuset/data/bundled/`).

They check the shipped files against the generator, coverage of families and styles, that the
held-out families are absent, the KernelBench structure of every task and response, and that
every task runs on the CPU. nvcc compilation of the kernels runs when nvcc is installed.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import torch

from cuset.data.corpus import build, gpu_check, verify
from cuset.data.corpus.__main__ import main as corpus_main
from cuset.data.schema import Sample

REQUIRED_STYLES = ("guarded", "grid-stride", "shared-memory", "warp-shuffle", "vectorised", "tiled")
EXPECTED_HELD_OUT = {"convolution", "pooling", "sorting", "gather_scatter"}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    lines = build.CORPUS_PATH.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def split() -> dict:
    return json.loads(build.SPLIT_PATH.read_text(encoding="utf-8"))


def test_shipped_files_equal_generator_output() -> None:
    assert build.stale_files() == [], "run `python -m cuset.data.corpus` to regenerate the bundled files"


def test_generator_is_deterministic() -> None:
    first = build.render_files()
    second = build.render_files()
    assert first == second
    assert set(first) == {build.CORPUS_PATH, build.SPLIT_PATH}


def test_check_flag_detects_stale_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "CORPUS_PATH", tmp_path / "corpus.jsonl")
    monkeypatch.setattr(build, "SPLIT_PATH", tmp_path / "split.json")
    assert corpus_main(["--check"]) == 1  # missing files are stale
    assert corpus_main([]) == 0
    assert corpus_main(["--check"]) == 0
    (tmp_path / "corpus.jsonl").write_text((tmp_path / "corpus.jsonl").read_text() + "\n")
    assert corpus_main(["--check"]) == 1


def test_size_and_unique_ids(records: list[dict]) -> None:
    assert len(records) >= 200
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-z_]+(-[a-z0-9]+)+-\d{3}", i) for i in ids), ids[:5]


def test_required_fields_are_non_empty(records: list[dict]) -> None:
    for r in records:
        for key in ("id", "instruction", "response", "family", "style", "task", "meta"):
            assert r.get(key), f"{r.get('id')}: empty {key}"
        assert isinstance(r["style"], list)
        assert r["meta"]["template"] and r["meta"]["functions"]


def test_records_round_trip_through_the_schema(records: list[dict]) -> None:
    for r in records:
        sample = Sample(**{**r, "style": tuple(r["style"])})
        assert sample.to_json() == r


def test_split_json_matches_the_corpus(records: list[dict], split: dict) -> None:
    assert split["n_samples"] == len(records)
    assert split["by_family"] == dict(Counter(r["family"] for r in records))
    assert split["by_style"] == dict(Counter(s for r in records for s in r["style"]))
    assert set(split["held_out_families"]) >= EXPECTED_HELD_OUT
    assert not set(split["train_families"]) & set(split["held_out_families"])
    assert split["generator"] == "python -m cuset.data.corpus"


def test_every_train_family_is_present_and_balanced(records: list[dict], split: dict) -> None:
    counts = Counter(r["family"] for r in records)
    assert set(counts) == set(split["train_families"])
    for family in split["train_families"]:
        assert counts[family] >= 15, (family, counts[family])
    assert max(counts.values()) <= 2 * min(counts.values())


def test_every_style_appears_often(records: list[dict]) -> None:
    counts = Counter(s for r in records for s in r["style"])
    for style in REQUIRED_STYLES:
        assert counts[style] >= 10, (style, counts[style])


def test_no_held_out_family_leaks(records: list[dict]) -> None:
    for r in records:
        assert r["family"] not in build.HELD_OUT_FAMILIES
        text = (r["task"] + r["response"] + r["instruction"]).lower()
        for family, keywords in build.HELD_OUT_FAMILIES.items():
            hits = [k for k in keywords if k in text]
            assert not hits, f"{r['id']} mentions {family} op(s) {hits}"
        kernels = re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)", r["response"])
        assert kernels, r["id"]
        assert not [k for k in kernels if re.search(r"conv|pool|sort|embed|gather|scatter", k)], (r["id"], kernels)


def test_responses_have_the_kernelbench_solution_shape(records: list[dict]) -> None:
    for r in records:
        resp = r["response"]
        for needle in ("ModelNew", "load_inline", "__global__", "from torch.utils.cpp_extension import load_inline", "<<<"):
            assert needle in resp, f"{r['id']}: no {needle!r}"
        tree = ast.parse(resp)
        classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
        assert classes == ["ModelNew"], r["id"]
        cuda, cpp = verify.extract_sources(resp)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "load_inline"]
        assert len(calls) == 1, r["id"]
        kwargs = {k.arg: k.value for k in calls[0].keywords}
        assert {"name", "cpp_sources", "cuda_sources", "functions"} <= set(kwargs), r["id"]
        functions = [e.value for e in kwargs["functions"].elts]
        assert functions == r["meta"]["functions"], r["id"]
        for fn in functions:
            assert re.search(rf"torch::Tensor {fn}\(", cuda), f"{r['id']}: {fn} not defined in cuda_source"
            assert re.search(rf"torch::Tensor {fn}\(", cpp), f"{r['id']}: {fn} not declared in cpp_source"
            assert f".{fn}(" in resp.split("class ModelNew")[1], f"{r['id']}: ModelNew never calls {fn}"
        assert "TORCH_CHECK" in cuda or "CHECK_INPUT" in cuda, r["id"]


def test_kernels_follow_basic_safety_rules(records: list[dict]) -> None:
    """Cheap static guards for classic mistakes: smem without barriers, partial shuffle masks,
    float4 paths without an alignment test."""
    for r in records:
        cuda, _ = verify.extract_sources(r["response"])
        if "__shared__" in cuda:
            assert "__syncthreads" in cuda, f"{r['id']}: shared memory without __syncthreads"
        for mask in re.findall(r"__(?:shfl_\w+|ballot)_sync\((\w+)", cuda):
            assert mask == "0xffffffffu", f"{r['id']}: shuffle mask {mask}"
        if "float4" in cuda:
            assert "% 16 == 0" in cuda, f"{r['id']}: float4 path without an alignment check"
        if "extern __shared__" in cuda:
            assert re.search(r"<<<[^>]*,[^>]*,\s*[^>]+>>>", cuda), f"{r['id']}: dynamic smem never sized at launch"


def test_samples_differ_in_more_than_names(records: list[dict]) -> None:
    def normalise(text: str) -> str:
        return re.sub(r"\b\w+_(?:ext|cuda|kernel)\b", "NAME", text)

    bodies = Counter(normalise(verify.extract_sources(r["response"])[0]) + r["task"] for r in records)
    dupes = [b[:200] for b, c in bodies.items() if c > 1]
    assert not dupes


def test_instructions_embed_the_task(records: list[dict]) -> None:
    openings = Counter()
    for r in records:
        assert f"```python\n{r['task'].rstrip()}\n```" in r["instruction"], r["id"]
        assert "ModelNew" in r["instruction"]
        openings[r["instruction"].split(".")[0]] += 1
    assert len(openings) >= 3


def test_tasks_are_kernelbench_modules(records: list[dict]) -> None:
    for r in records:
        tree = ast.parse(r["task"])
        names = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
        assert {"Model", "get_inputs", "get_init_inputs"} <= names, r["id"]


def test_tasks_run_on_cpu(records: list[dict]) -> None:
    for r in records:
        ns: dict = {}
        exec(compile(r["task"], r["id"], "exec"), ns)  # noqa: S102 - the corpus's own reference code
        torch.manual_seed(42)
        model = ns["Model"](*ns["get_init_inputs"]())
        inputs = ns["get_inputs"]()
        assert all(isinstance(x, torch.Tensor) and x.device.type == "cpu" for x in inputs), r["id"]
        assert sum(x.numel() for x in inputs) <= 65_536, f"{r['id']}: inputs too large for a quick check"
        with torch.no_grad():
            out = model(*inputs)
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float32, r["id"]
        assert torch.isfinite(out).all(), r["id"]


def test_shapes_exercise_tails(records: list[dict]) -> None:
    """Every task has an input dim that is not a multiple of 32, so partial warps/blocks/tiles run."""
    for r in records:
        ns: dict = {}
        exec(compile(r["task"], r["id"], "exec"), ns)  # noqa: S102
        assert any(s % 32 for x in ns["get_inputs"]() for s in x.shape), r["id"]


def test_verify_builds_namespaced_units(records: list[dict]) -> None:
    r = next(x for x in records if "#define CHECK_INPUT" in x["response"])
    cuda, _ = verify.extract_sources(r["response"])
    device = verify.device_part(cuda)
    assert "__global__" in device and "torch::Tensor" not in device
    unit = verify.namespaced_unit([(r["id"], device), ("other-000", device)], drop_torch=True)
    assert unit.count("namespace s_") == 2
    assert "#undef CHECK_INPUT" in unit
    assert "#include <torch/extension.h>" not in unit


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compiles_every_kernel() -> None:
    results = verify.verify(jobs=2)
    assert [r.name for r in results if not r.ok] == []
    assert sum(len(r.sample_ids) for r in results) == len(build.build_samples())


def test_gpu_check_batches_samples_into_namespaces(records: list[dict]) -> None:
    recorder = gpu_check._Recorder()
    for r in records[:2]:
        cuda, cpp = verify.extract_sources(r["response"])
        recorder("x", cpp, cuda, r["meta"]["functions"])
    cpp, cuda = recorder.sources()
    assert "namespace cuset_s0" in cuda and "namespace cuset_s1" in cuda
    fn = records[1]["meta"]["functions"][0]
    assert f'm.def("s1__{fn}", torch::wrap_pybind_function(cuset_s1::{fn})' in cpp
    assert cuda.index("#include") < cuda.index("namespace cuset_s0")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_check_passes_on_a_gpu(records: list[dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ",".join(r["id"] for r in records[::53])
    code = gpu_check.main([str(build.CORPUS_PATH), "--ids", ids, "--batch", "8", "--build-root", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 0, summary["failed_ids"]
    assert summary["correct"] == summary["n"] == len(ids.split(","))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_gpu_check_reports_every_sample_without_a_gpu(records: list[dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ",".join(r["id"] for r in records[:2])
    code = gpu_check.main([str(build.CORPUS_PATH), "--ids", ids, "--jobs", "2", "--build-root", str(tmp_path), "--timeout", "120"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    per_sample = [x for x in lines if not x.get("summary")]
    assert sorted(x["id"] for x in per_sample) == sorted(ids.split(","))
    assert all(x["stage"] == "setup" and not x["ok"] for x in per_sample)
    assert lines[-1]["summary"] and lines[-1]["correct"] == 0 and lines[-1]["n"] == 2
