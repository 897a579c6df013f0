"""The CPU backend on what NVIDIA's cuda-samples lean on, with programs written for the project
(tests/evaluate/cuda/intrinsics.cu, coop_groups.cu): device intrinsics, cooperative groups,
kernel default and NULL arguments, many launches without a false fault, whole linker and
template error messages, build/run timing, and the conformance runner without a snapshot.
No NVIDIA code here: benchmarks/cuda_samples.py runs the samples themselves."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks import cuda_samples
from cuset.cli import main as cli_main
from cuset.evaluate.cpu.build import build_program
from cuset.evaluate.cpu.run import RunOptions, execute, run_program
from cuset.evaluate.cpu.translate import translate

CUDA = Path(__file__).parent / "cuda"


def test_integer_and_bit_intrinsics_match_hand_values():
    r = run_program([CUDA / "intrinsics.cu"])
    assert r.status == "ok", r.message
    # umin umax llmin ullmax | __brev(1) __brevll(1) | popc*100+popcll | clz(1),clz(0),clzll(1) | ffs(0),ffs(8),ffsll(2^40)
    # byte_perm(0x33221100, 0x77665544, 0x5140) = 0x55114400 | funnelshift l/l(40&31=8)/lc(clamped 32)/r/rc
    # sad(3,10,5)=12 usad(10,3,1)=8 | mul24(-3,1000) | umul24 keeps 24 bits | mulhi(2^30,8)=2, umulhi(max,max)=2^32-2 | rhadd(3,4)=4, fns(0b10110,0,2)=2
    assert r.stdout.split() == ["3", "5", "-5", "1099511627776", "2147483648", "9223372036854775808", "836", "313263", "441",
                                str(0x55114400), "24", "384", "2147483648", "402653184", "1", "1208", "-3000", "2", "24294967294", "402"]


def test_cooperative_groups_tiles_coalesced_labeled_reduce_and_scans():
    r = run_program([CUDA / "coop_groups.cu"])
    assert r.status == "ok", r.message
    lines = r.stdout.splitlines()
    # columns: block sum, tile16 sum (rank 0 only), tile32 plus/greater/less, inclusive scan of v, exclusive scan of 1,
    # tile64 sum, block reduce of 1, tile16 shfl_down(1), coalesced (v%4==1) sum, its rank*100+size, labeled (v%3) max,
    # binary_partition (even/odd) inclusive scan of 1, grid rank*2 (default argument), tile64 meta rank + (NULL argument)
    assert lines[0] == "t0: 8128 120 496 31 0 0 0 2016 128 1 -1 -1 30 1 0 1"
    assert lines[1] == "t5: -1 -1 496 31 0 15 5 2016 128 6 120 108 29 3 10 1"
    assert lines[2] == "t37: -1 -1 1520 63 32 207 5 2016 128 38 376 108 61 3 74 1"
    assert lines[3] == "t70: -1 -1 2544 95 64 469 6 6112 128 71 -1 -1 94 4 140 2"
    assert lines[4] == "no error"


def test_grid_sync_translates_for_cooperative_launches():
    # grid.sync() runs in a cooperative launch (tests/evaluate/test_cpu_coop_texture.py); nothing is refused
    ranks = "namespace cg = cooperative_groups;\n__global__ void k(int* o) { cg::grid_group g = cg::this_grid(); o[g.thread_rank()] = 1; }\n"
    synced = ranks.replace("o[g.thread_rank()] = 1;", "o[g.thread_rank()] = 1;\n  g.sync();")
    assert translate(ranks, "ranks.cu").unsupported == [] and translate(synced, "sync.cu").unsupported == []


MANY_LAUNCHES = r"""
#include <cstdio>
__global__ void step(float* x) {
  __shared__ float s[256];
  x += 256 * blockIdx.x;
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[255 - threadIdx.x] + 1.0f;
}
int main() {
  float* d;
  cudaMalloc(&d, 1024 * sizeof(float));
  cudaMemset(d, 0, 1024 * sizeof(float));
  for (int i = 0; i < 400; ++i) step<<<4, 256>>>(d);
  float h[1024];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%.0f %.0f %s\n", h[7], h[1000], cudaGetErrorString(cudaGetLastError()));
}
"""


def test_hundreds_of_launches_with_worker_threads_no_false_fault(tmp_path):
    # Each launch's pool threads used to keep their fiber stacks (one mapping per guard page):
    # after ~100 launches mprotect failed and kernels saw "illegal memory access".
    src = tmp_path / "many.cu"
    src.write_text(MANY_LAUNCHES)
    build = build_program([src])
    assert build.ok, build.message
    r = execute(build.binary, [], RunOptions(workers=4), timeout=60)
    assert r.status == "ok", r.message
    assert r.stdout.strip() == "400 400 no error"


def test_linker_error_names_the_undefined_symbol(tmp_path):
    src = tmp_path / "main.cu"
    src.write_text("int helper_defined_elsewhere(int);\n__global__ void k(int* o) { *o = 1; }\nint main() { return helper_defined_elsewhere(2); }\n")
    build = build_program([src])
    assert build.status == "compile_error"
    assert "undefined reference to `helper_defined_elsewhere(int)'" in build.message
    assert "ld returned 1" in build.message


def test_template_error_deep_in_a_header_names_the_users_launch_line(tmp_path):
    src = tmp_path / "main.cu"
    src.write_text("struct Opaque { int v; };\n__global__ void k(int* o, int n) { *o = n; }\nint main() {\n  int* d; Opaque op{1};\n"
                   "  k<<<1, 1>>>(d, op);\n}\n")
    build = build_program([src])
    assert build.status == "compile_error"
    assert f"{src}:5:" in build.message, build.message  # the launch, not only the header's internals


def test_run_cuda_reports_build_and_run_time(capsys):
    assert cli_main(["run-cuda", str(CUDA / "intrinsics.cu")]) == 0
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if ln.startswith("cuset run-cuda: build"))
    assert ", run " in line and line.endswith(" s")


def test_conformance_list_parses_and_covers_the_four_folders():
    specs = cuda_samples.load_specs()
    assert len(specs) >= 40
    assert {cuda_samples.category(s) for s in specs} == {"0_Introduction", "2_Concepts_and_Techniques", "3_CUDA_Features", "6_Performance"}
    assert 1 <= sum(s.small for s in specs) <= cuda_samples.SMALL_COUNT


def test_conformance_list_rejects_unknown_keys(tmp_path):
    bad = tmp_path / "list.yaml"
    bad.write_text("samples:\n- name: x\n  folder: Samples/0_Introduction/x\n  files: [x.cu]\n  expect: ok\n  argz: [1]\n")
    with pytest.raises(ValueError, match="unknown keys \\['argz'\\]"):
        cuda_samples.load_specs(bad)


def test_conformance_runner_skips_clearly_without_a_snapshot(monkeypatch, capsys):
    monkeypatch.delenv(cuda_samples.ENV_VAR, raising=False)
    assert cuda_samples.main(["--small"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("cuda_samples: skipped: no cuda-samples snapshot given")
    last = json.loads(out[-1])
    assert last["cuda_samples_passed"] is None and last["cuda_samples_chosen"] == 5 and "skipped" in last


def test_conformance_runner_exports_a_bare_snapshot(tmp_path):
    work = tmp_path / "work"
    (work / "Samples" / "0_Introduction" / "a").mkdir(parents=True)
    (work / "Common").mkdir()
    (work / "Samples" / "0_Introduction" / "a" / "a.cu").write_text("int main() { return 0; }\n")
    (work / "Common" / "helper.h").write_text("#pragma once\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    path, why = cuda_samples.locate_snapshot(str(bare))
    assert path == bare and why == ""
    dest = tmp_path / "out"
    assert cuda_samples.export_bare(bare, ["Samples/0_Introduction/a", "Common"], dest) == 0
    assert (dest / "Samples/0_Introduction/a/a.cu").read_text() == "int main() { return 0; }\n"
    assert (dest / "Common/helper.h").is_file()


def test_device_assert_fails_the_launch_with_cuda_error_assert():
    r = run_program([CUDA / "device_assert.cu"])
    assert r.status == "ok", r.message + r.stderr
    assert r.stdout.splitlines() == [
        "ok launch: cudaSuccess",
        "barrier launch: cudaErrorAssert (device-side assert triggered)",
        "sticky: cudaErrorAssert cudaErrorAssert",
        "plain launch: cudaErrorAssert",
        "done",
    ]
    lines = r.stderr.splitlines()
    # fiber mode: only thread 5 fails; loop mode: a block ends at its first failing thread, and
    # blocks not started after the failure do not run (CUDA's message format either way)
    assert "device_assert.cu:18: void barrier(int*, int): block: [0,0,0], thread: [5,0,0] Assertion `i != 5 || n > 100` failed." in lines[0]
    plain = [ln for ln in lines[1:] if "Assertion `i < n` failed." in ln]
    assert plain and all("thread: [8,0,0]" in ln or "thread: [0,0,0]" in ln for ln in plain), lines


def test_cuda_arch_is_defined_in_device_code_only():
    # kernel: 8 + 700 (arch 800 >= 700), the #else of #ifndef (6), a __host__ __device__ function's host view (0)
    r = run_program([CUDA / "cuda_arch.cu"])
    assert r.status == "ok", r.message + r.stderr
    assert r.stdout.splitlines() == ["708 6 0"]


def test_shared_array_with_align_after_a_builtin_type():
    # out[0] = s[63] = 189, out[63] = s[0] = 0, both arrays aligned (misalignment sum 0)
    r = run_program([CUDA / "shared_align.cu"])
    assert r.status == "ok", r.message + r.stderr
    assert r.stdout.split() == ["189", "0", "0"]
