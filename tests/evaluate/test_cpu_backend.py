"""The CPU backend on CUDA programs written for the project (tests/evaluate/cuda/*.cu).

Each feature program prints results that a hand computation fixes; each planted bug must be
caught and named. Builds are cached per test session, so a program compiles once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuset.cli import main as cli_main
from cuset.evaluate.cpu.build import EXIT_COMPILE_ERROR, EXIT_UNSUPPORTED, build_program
from cuset.evaluate.cpu.run import fill_check, race_check, run_program
from cuset.evaluate.cpu.translate import analyse, translate

CUDA = Path(__file__).parent / "cuda"


def run(name: str, **kw):
    return run_program([CUDA / f"{name}.cu"], **kw)


# --- features ------------------------------------------------------------------------------


def test_reductions_shared_constant_atomics_shuffles_and_cooperative_groups():
    r = run("reductions")
    assert r.status == "ok", r.message
    # 10,000 values (i % 7) * 0.5 sum to 14,997; 40 blocks of 256 each bump the counter once
    assert r.stdout.strip() == "no error want=14997.0 block=14997.0 warp=14997.0 cg=14997.0 blocks=40"
    assert r.build.kernels == {"block_sum<256>": True, "warp_sum": True, "cg_sum": True}


def test_warp_shuffles_with_width_votes_and_reductions():
    r = run("warp")
    assert r.status == "ok", r.message
    line = ("shfl=30 width8=90 up=70 down16=130 xor=80 ballot=49249249 any=1 all=0 sum=496 min=69 max=26 "
            "up0=0 down13=130 width8_13=90 xor30=310")
    assert r.stdout.splitlines() == [line, line]  # both warps of the block


def test_atomics_are_exact_across_parallel_blocks():
    r = run("atomics", options=None)
    assert r.status == "ok", r.message
    # 64 x 128 = 8192 threads; atomicInc wraps at 9 (8192 % 10 = 2); atomicDec from 0 wraps to 10^6 then counts down
    assert r.stdout.strip() == ("add=8192 sub=-16384 max=8191 min=-8191 and=-256 or=65535 xor=0 exch=7 inc=2 dec=991809 "
                                "big=70368744177664 f=4096.0 d=2048.00 cas=11 shared=8192")


def test_runtime_api_launch_validation_templates_vectors_and_half_types():
    r = run("runtime")
    assert r.status == "ok", r.message
    out = r.stdout.splitlines()
    assert out[0] == "device=CuSeT CPU emulator count=1 warp=32 maxthreads=1024 smem=49152 cc=8.0"
    assert out[1] == "scaled[34]=306 scaled[8]=72 elapsed_ok=1"  # 34 * 3 * 3: the unrolled loop scales twice
    assert out[2] == "half=6.00,1.50 bf16=7.0 intrinsics=12.00"
    assert out[3:] == [
        "ok_so_far=cudaSuccess",
        "1025 threads: cudaErrorInvalidConfiguration",
        "zero grid: cudaErrorInvalidConfiguration",
        "grid y 65536: cudaErrorInvalidConfiguration",
        "64 KiB dynamic smem: cudaErrorInvalidValue",
        "after opt-in: cudaSuccess out[0]=255",
        "peek after get: cudaSuccess",
    ]


def test_exited_threads_count_as_arrived_at_barriers():
    r = run("early_exit")
    assert (r.status, r.stdout.strip()) == ("ok", "sum=5050")


# --- planted bugs --------------------------------------------------------------------------


def test_missing_syncthreads_is_flagged_as_a_race():
    build = build_program([CUDA / "bug_race.cu"])
    report = race_check(build.binary)
    assert report.differs
    sums = {r.stdout.strip() for r in report.results.values()}
    assert "sum=8128" in sums and len(sums) > 1  # 0 + ... + 127 = 8128 only in some orders
    clean = race_check(build_program([CUDA / "reductions.cu"]).binary)
    assert not clean.differs, clean.summary()


def test_uninitialised_shared_memory_read_differs_under_two_fill_patterns():
    report = fill_check(build_program([CUDA / "bug_uninit_shared.cu"]).binary)
    assert report.differs
    assert not fill_check(build_program([CUDA / "early_exit.cu"]).binary).differs


def test_global_out_of_bounds_write_hits_the_guard_page():
    r = run("bug_global_oob")
    assert r.status == "device_fault"
    assert "illegal memory access in kernel fill" in r.message and "past the end of a 16384-byte device allocation" in r.message


@pytest.mark.slow
def test_sanitizer_catches_shared_overrun_and_global_overrun():
    r = run("bug_smem_overrun", sanitize=True)
    assert r.status == "crashed"
    assert "index 64 out of bounds for type 'float [64]'" in r.message and "bug_smem_overrun.cu:6" in r.message
    r = run("bug_global_oob", sanitize=True)
    assert r.status == "crashed"
    assert "heap-buffer-overflow" in r.message and "bug_global_oob.cu:6" in r.message
    clean = run("reductions", sanitize=True)
    assert clean.status == "ok", clean.message


def test_barriers_in_divergent_code_are_reported():
    r = run("bug_divergent_barrier")
    assert r.status == "device_fault"
    assert "__syncthreads divergence" in r.message
    assert re.search(r"bug_divergent_barrier\.cu:8.*bug_divergent_barrier\.cu:11", r.message)


def test_deadlock_is_reported_not_hung():
    r = run("bug_deadlock", timeout=30)
    assert r.status == "device_fault"
    assert r.message.startswith("deadlock in kernel k block (0,0,0)")


def test_host_dereference_of_device_pointer_is_reported():
    r = run("bug_host_deref")
    assert r.status == "device_fault"
    assert "host code dereferenced a device pointer" in r.message and "128-byte cudaMalloc allocation" in r.message


def test_host_pointer_passed_to_a_kernel_is_reported():
    r = run("bug_host_pointer_arg")
    assert r.status == "device_fault"
    assert "argument 1 is a host pointer" in r.message


def test_unsupported_constructs_are_named_with_their_lines():
    r = run("unsupported")
    assert r.status == "unsupported" and not r.ran
    found = {(u.feature, u.line) for u in r.build.unsupported}
    assert ("inline PTX: instruction 'bfind.u32'", 6) in found
    assert ("kernel launched from device code (dynamic parallelism)", 7) in found


# --- translation ---------------------------------------------------------------------------

SRC = """\
extern __shared__ float dyn[];
__device__ float helper(float v) { return __shfl_down_sync(0xffffffff, v, 1); }
__device__ float plain(float v) { return v * 2; }
__global__ void uses_helper(float* x) { x[threadIdx.x] = helper(x[threadIdx.x]); }
__global__ void elementwise(float* x, int n) {
    __shared__ float a[4][8], b[3];
    extern __shared__ __align__(16) unsigned char raw[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = plain(x[i]);
}
void host(float* x) {
    uses_helper<<<1, 32>>>(x);
    elementwise<<<
        4, 256, 0>>>(x, 1000);
}
"""


def test_translation_keeps_every_line_and_rewrites_launches_and_shared():
    t = translate(SRC, "k.cu")
    lines = t.text.splitlines()
    assert lines[0] == '#line 1 "k.cu"'
    body = lines[1:]
    assert len(body) == len(SRC.splitlines()) + 1  # the file-scope #define adds a `#line` resync
    assert "#define dyn (reinterpret_cast<float *>(::cuset::shared_dynamic()))" in t.text
    assert "float (&a)[4][8] = *reinterpret_cast<float (*)[4][8]>(::cuset::shared_static(sizeof(float[4][8]), alignof(float)" in t.text
    assert "float (&b)[3] = " in t.text
    assert "unsigned char * const raw = reinterpret_cast<unsigned char *>(::cuset::shared_dynamic());" in t.text
    assert t.kernels == {"uses_helper": True, "elementwise": False}  # a call to a syncing helper needs fibers
    assert not t.unsupported
    # the multi-line launch stays on its lines: `elementwise` still starts on line 13 of the source
    idx = next(i for i, ln in enumerate(body) if "::cuset::launch<elementwise>" in ln)
    assert body[idx + 1].strip().startswith("4, 256, 0)")


def test_sync_analysis_follows_calls_across_files():
    a = "__device__ void bar() { __syncthreads(); }"
    b = "__device__ void foo() { bar(); }\n__global__ void k() { foo(); }"
    prog = analyse([a, b])
    assert {"bar", "foo", "k"} <= prog.needs_sync
    assert "k" not in analyse([b]).needs_sync


# --- the command line ----------------------------------------------------------------------


def test_run_cuda_cli_passes_args_defines_includes_and_exit_code(tmp_path, capfd):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.cuh").write_text(
        "#pragma once\n__global__ void scale(float* d, int n, float f) {\n  __shared__ float t[32];\n"
        "  t[threadIdx.x] = threadIdx.x * f;\n  __syncthreads();\n  if (threadIdx.x < n) d[threadIdx.x] = t[threadIdx.x];\n}\n"
    )
    (tmp_path / "main.cu").write_text(
        '#include <cstdio>\n#include <cstdlib>\n#include "scale.cuh"\n'
        "int main(int argc, char** argv) {\n  int n = atoi(argv[1]);\n  float* d; cudaMalloc(&d, 32 * sizeof(float));\n"
        "  scale<<<1, 32>>>(d, n, FACTOR);\n  float h[32]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        '  printf("last=%.1f\\n", h[n - 1]);\n  return n;\n}\n'
    )
    code = cli_main(["run-cuda", str(tmp_path / "main.cu"), "-I", str(tmp_path / "inc"), "-D", "FACTOR=2.5f", "--", "5"])
    assert code == 5
    assert capfd.readouterr().out == "last=10.0\n"
    code = cli_main(["run-cuda", str(tmp_path / "main.cu"), "-I", str(tmp_path / "inc"), "--", "5"])
    assert code == EXIT_COMPILE_ERROR
    assert re.search(r"main\.cu:7:\d+: error: .FACTOR. was not declared", capfd.readouterr().err)
    assert cli_main(["run-cuda", str(CUDA / "unsupported.cu")]) == EXIT_UNSUPPORTED


def test_the_build_cache_key_covers_headers_without_a_suffix(tmp_path, monkeypatch):
    # <cuda/barrier> and <cuda/pipeline> have no .h: an edit to one must not reuse stale binaries
    from cuset.evaluate.cpu import build

    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "barrier").write_text("#include <cuset_async.h>\n")
    (tmp_path / "a.h").write_text("int a;\n")
    monkeypatch.setattr(build, "INCLUDE_DIR", tmp_path)
    before = build._header_hash()
    (tmp_path / "cuda" / "barrier").write_text("#include <cuset_async.h>\n// changed\n")
    assert build._header_hash() != before
    (tmp_path / "cuda" / "barrier").write_text("#include <cuset_async.h>\n")
    assert build._header_hash() == before


def test_an_initialised_shared_variable_is_the_programs_compile_error_not_unsupported(tmp_path):
    # nvcc: "initializer not allowed for __shared__ variable"; a model wrote exactly this
    src = tmp_path / "init.cu"
    src.write_text("__global__ void k(float* x) {\n    __shared__ float s[4];\n"
                   "    __shared__ float acc = 0.0f;\n    x[threadIdx.x] = acc + s[0];\n}\nint main() { return 0; }\n")
    b = build_program([src])
    assert b.status == "compile_error" and not b.unsupported, (b.status, b.unsupported)
    assert f"{src}:3:" in b.message and "initializer not allowed for __shared__ variable" in b.message, b.message
    from cuset.evaluate.cpu.translate import _shared_initialised

    assert _shared_initialised("__shared__ float acc = 0.0f;") and not _shared_initialised("__shared__ float s[N == 1 ? 2 : 4];")
