"""The CPU backend on CUDA graphs, stream capture and asynchronous copies into shared memory,
with programs written for the project (tests/evaluate/cuda/graph_capture.cu, graph_memory.cu,
async_copy.cu): replayed graphs give hand-computed arrays, exec updates change a kernel's
parameter, CUDA's capture errors come back with CUDA's codes, graph allocations exist only
between their alloc and free, and memcpy_async / cuda::barrier / cuda::pipeline order a
block's fibers (under several thread orders). No NVIDIA code here."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuset.evaluate.cpu.build import build_program
from cuset.evaluate.cpu.run import RunOptions, execute, run_program
from cuset.evaluate.cpu.translate import analyse, translate

CUDA = Path(__file__).parent / "cuda"


def test_captured_and_explicit_graphs_replay_updates_and_capture_errors():
    r = run_program([CUDA / "graph_capture.cu"])
    assert r.status == "ok", r.message
    assert r.stdout.splitlines() == [
        # 5 nodes (copy in, add, scale on a forked stream, copy out, host fn); nothing ran while capturing
        "capture cudaSuccess status=1 nodes=5 ran=0",
        # x = (i + 1) * 2 after each of the 3 replays; the host node ran 3 times
        "replayed 2 4 6 8 10 12 14 16 host=3",
        # sum of 2..16 step 2 = 72; with n updated to 4 in the executable: 2+4+6+8 = 20; the
        # graph's own node keeps n = 8; its clone sums 72 again; one root (the memset)
        "explicit sum=72 updated=20 graph-keeps=8 clone=72 roots=1",
        "null-exec cudaErrorInvalidValue",
        # a synchronous cudaMemcpy while a blocking stream captures; the capture is invalidated
        "sync-memcpy cudaErrorStreamCaptureImplicit status=2 end=cudaErrorStreamCaptureInvalidated graph=null",
        "sync-stream cudaErrorStreamCaptureUnsupported end=cudaErrorStreamCaptureInvalidated",
        "unjoined cudaErrorStreamCaptureUnjoined",
        "no error",
    ]


def test_graph_memory_nodes_live_only_between_alloc_and_free():
    build = build_program([CUDA / "graph_memory.cu"])
    assert build.ok, build.message
    r = execute(build.binary)
    assert r.status == "ok", r.message
    # captured: alloc, kernel, copy, free (4 nodes), launched twice; h[i] = 5 + i
    # explicit: h[3] = 100 + 3; relaunch before the free is refused; cudaFree frees it once
    assert r.stdout.splitlines() == [
        "captured nodes=4 cudaSuccess cudaSuccess 260 5",
        "explicit 103 cudaErrorInvalidValue cudaSuccess cudaErrorInvalidValue cudaSuccess",
    ]
    after_free = execute(build.binary, ["use-after-free"])
    assert after_free.status == "device_fault"
    assert "argument 1 is a host pointer, not device memory" in after_free.message


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:3"])
def test_memcpy_async_barriers_and_pipelines(schedule):
    r = run_program([CUDA / "async_copy.cu"], options=RunOptions(schedule=schedule, workers=1))
    assert r.status == "ok", r.message
    assert r.stdout.splitlines() == [
        "tile_sum 32640 98176",  # sum of 0..255 and of 256..511 through a two-stage pipeline
        # a barrier of 48 of 64 threads, twice: thread i reads s[47 - i] = 10 * (47 - i); the
        # other 16 never arrive; a cg::memcpy_async of 64 ints read back reversed
        "partial 470 0 -1 -1 copy 63 0",
        # 6 stages through a 2-slot ring: lane 0 sees 0+32+...+160 = 480, lane 31 480 + 6*31
        "pipeline 480 666",
        "primitives 0 126 no error",  # 8-byte copies with the last 4 bytes zero-filled
    ]


def test_a_barrier_that_cannot_complete_is_a_reported_deadlock():
    r = run_program([CUDA / "async_copy.cu"], args=["deadlock"])
    assert r.status == "device_fault"
    assert "deadlock in kernel never_completes" in r.message and "waiting at a barrier or pipeline" in r.message


def test_graphs_and_async_copies_are_no_longer_refused_but_tma_and_conditionals_are():
    ok = "cudaGraph_t g; cudaGraphCreate(&g, 0); cudaStream_t s; cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
    ok += "__global__ void k(float* a) { __shared__ cuda::barrier<cuda::thread_scope_block> b; b.arrive_and_wait(); }\n"
    assert translate(ok, "ok.cu").unsupported == []
    refused = "cudaGraphConditionalHandle h;\nCUtensorMap m;\n"
    assert [(u.feature.split(" (")[0], u.line) for u in translate(refused, "no.cu").unsupported] == [
        ("TMA bulk copies", 2),
        ("CUDA graph conditional nodes", 1),
    ]


def test_barrier_and_pipeline_waits_make_a_kernel_run_as_fibers():
    src = (
        "__device__ void step(cuda::barrier<cuda::thread_scope_block>& b) { b.arrive_and_wait(); }\n"
        "__global__ void uses_barrier(int* x) { __shared__ cuda::barrier<cuda::thread_scope_block> b; step(b); }\n"
        "__global__ void uses_pipeline(int* x) { auto p = cuda::make_pipeline(); p.consumer_wait(); }\n"
        "__global__ void plain(int* x) { x[0] = 1; }\n"
    )
    program = analyse([src])
    assert {"step", "uses_barrier", "uses_pipeline"} <= program.needs_sync
    assert "plain" not in program.needs_sync


def test_members_named_like_the_builtins_are_reached_through_helpers():
    src = "void f(cudaKernelNodeParams p, cudaKernelNodeParams* q) { p.gridDim = dim3(2); q->blockDim = p.gridDim; }\n"
    text = translate(src, "f.cu").text
    assert "::cuset::field_gridDim(p) = dim3(2)" in text
    assert "::cuset::field_blockDim(*q) = ::cuset::field_gridDim(p)" in text
