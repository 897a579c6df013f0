"""The CPU backend's cooperative launches (grid.sync()), texture objects, directed-rounding
intrinsics and inline-PTX subset, on the project's own programs in tests/evaluate/cuda/
(coop_grid.cu, texture.cu, directed_rounding.cu), each result checked against a hand
computation. NVIDIA's samples that need these run in benchmarks/cuda_samples.py."""

from __future__ import annotations

from pathlib import Path

from cuset.evaluate.cpu.ptx import Operand, PtxUnsupported, translate_asm
from cuset.evaluate.cpu.run import run_program
from cuset.evaluate.cpu.translate import translate

CUDA = Path(__file__).parent / "cuda"


def test_cooperative_launch_grid_sync_too_large_grid_and_sync_without_cooperative_launch():
    r = run_program([CUDA / "coop_grid.cu"])
    lines = r.stdout.splitlines()
    # 0..999 over 4 blocks x 64 threads, grid stride 256: block b sums b*64 + t + 256k (i < 1000)
    # block 0: 64*(0+256+512+768) + 4*2016 = 106368; block 3: 64*(192+448+704) + 3*2016 + (960+...+999) = 131244
    assert lines[0] == "launch cudaSuccess total 499500 parts 106368 122752 139136 131244"
    # one block more than occupancy (blocks per SM x SMs) allows to be resident
    assert lines[1] == "too large: cudaErrorCooperativeLaunchTooLarge"
    # grid.sync() after an ordinary <<<...>>> launch: a device error naming the call, not a hang
    assert r.status == "device_fault"
    assert "grid_group::sync() at" in r.stderr and "coop_grid.cu:19" in r.stderr and "not launched with cudaLaunchCooperativeKernel" in r.stderr
    assert "unreachable" not in r.stdout


EXITED_BLOCK = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* o) {
  if (blockIdx.x == 1) return;
  cg::this_grid().sync();
  o[blockIdx.x] = 1;
}
__global__ void valid(int* o) { o[0] = cg::this_grid().is_valid(); }
int main() {
  int* o;
  cudaMalloc(&o, 16);
  int v = -1;
  valid<<<1, 1>>>(o);
  cudaMemcpy(&v, o, 4, cudaMemcpyDeviceToHost);
  printf("ordinary %d\n", v);
  void* a[] = {&o};
  cudaLaunchCooperativeKernel((void*)valid, 1, 1, a, 0, 0);
  cudaMemcpy(&v, o, 4, cudaMemcpyDeviceToHost);
  printf("cooperative %d\n", v);
  cudaLaunchCooperativeKernel((void*)k, 3, 32, a, 0, 0);
  printf("unreachable\n");
}
"""


def test_is_valid_only_in_cooperative_launches_and_an_exited_block_is_a_deadlock(tmp_path):
    src = tmp_path / "exited.cu"
    src.write_text(EXITED_BLOCK)
    r = run_program([src])
    assert r.stdout.splitlines() == ["ordinary 0", "cooperative 1"]
    # a GPU would hang: block 1 never arrives at the grid barrier the others wait at (line 7)
    assert r.status == "device_fault" and "block (1,0,0) exited while other blocks wait at grid.sync()" in r.stderr and "exited.cu:7" in r.stderr


def test_grid_sync_translates_and_kernel_addresses_are_registered():
    src = ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
           "__global__ void k(int* o) { cg::grid_group g = cg::this_grid(); o[g.thread_rank()] = 1;\n  g.sync(); }\n"
           "void host(int* o) { void* a[] = {&o};\n  cudaLaunchCooperativeKernel((void*)k, 2, 32, a, 0, 0); }\n")
    t = translate(src, "coop.cu")
    assert t.unsupported == []
    assert t.text.count("\n") == src.count("\n") + 1  # every line kept (plus the #line directive)
    assert '::cuset::kernel_ref<k>(::cuset::KernelInfo{"k", __FILE__, __LINE__, true})' in t.text.splitlines()[6]


def test_texture_fetch_point_linear_clamp_border_wrap_mirror_normalized_pitch_linear_and_surfaces():
    r = run_program([CUDA / "texture.cu"])
    out = r.stdout.splitlines()
    # texel (x, y) = x + 10 y on a 4x4 array; unnormalized coordinates, texel centres at +0.5
    assert out[0] == "point clamp: 21 0 33"  # (1.5,2.5) -> (1,2); x=-3 clamps to 0; (7.2,3.9) -> (3,3)
    # linear: xB = x - 0.5; (1.0,0.5): halfway between (0,0) and (1,0); (2.25,1.75): a=.75, b=.25 -> 1.75 + 10*1.25;
    # (0.25,0.5): both taps clamp to texel (0,0)
    assert out[1] == "linear clamp: 0.5 14.25 0"
    assert out[2] == "point border: 99 33"  # x=-0.5 is outside: borderColor[0] = 99
    # normalized: (1.125,0.375) -> texel (4.5,1.5): wrap 4 -> 0 (=10), mirror 4 -> 3 (=13); (-0.125,0.125): wrap -1 -> 3, mirror -1 -> 0
    assert out[3] == "point wrap: 10 3"
    assert out[4] == "point mirror: 13 0"
    assert out[5] == "uchar normalized: 0.2 1 0.6"  # 51/255, 255/255, and their linear midpoint
    assert out[6] == "pitch2D point: 32"
    assert out[7] == "tex1Dfetch clamp: 5 6 7"  # indices -1, 1, 3 of [5, 6, 7]
    # surf2Dwrite (x in bytes) of x + 10 y, then reads: (2,1); x=5 clamped to 2; x=-1 zero mode; a dropped write
    assert out[8] == "surface: 12 12 0 2 | 0 1 2 10 11 12"
    assert out[9] == "surface over an array without cudaArraySurfaceLoadStore: cudaErrorInvalidValue"
    assert r.status == "device_fault" and "was never created with cudaCreateTextureObject, or was destroyed" in r.stderr


SURFACE_TRAP = r"""
__global__ void k(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, 4 * 4, 0); }  // element 4 of a 4-wide array
int main() {
  cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
  cudaArray_t a;
  cudaMallocArray(&a, &d, 4, 4, cudaArraySurfaceLoadStore);
  cudaResourceDesc r = {};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  cudaSurfaceObject_t s;
  cudaCreateSurfaceObject(&s, &r);
  k<<<1, 1>>>(s);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
"""


def test_out_of_range_surface_write_in_trap_mode_is_a_device_error(tmp_path):
    src = tmp_path / "trap.cu"
    src.write_text(SURFACE_TRAP)
    r = run_program([src])
    assert r.status == "device_fault"
    assert "surf2Dwrite in kernel k" in r.stderr and "out-of-range surface access at byte 16, row 0 of a 16-byte x 4-row array" in r.stderr


def test_directed_rounding_gives_the_neighbouring_floats_of_an_inexact_result():
    r = run_program([CUDA / "directed_rounding.cu"])
    assert r.status == "ok", r.message
    assert r.stdout.split("\n")[:15] == [
        "0x1p+0", "0x1.000002p+0", "0x1p+0",  # 1 + 1e-8: down, up (the next float), nearest
        "0x1.fffffep+127",  # FLT_MAX * 2 rounded down: FLT_MAX, not infinity
        "-0x0p+0",  # x + (-x) rounded down is -0
        "0x1.555556p-2", "0x1.555554p-2",  # 1/3 up and down
        "0x1.000002p+0",  # add.rp.f32 (inline PTX)
        "-0x1.000002p+0",  # mul.rm.f32: -(1 + 2^-25) toward -infinity
        "0x1p+0", "0x1.0000000000001p+0",  # double 1 + 1e-20 down and up
        "0x1.6a09e667f3bcdp+0", "0x1.6a09e667f3bccp+0",  # sqrt(2) up and down
        "globaltimer monotonic 1",  # mov.u64 %0, %globaltimer, inside the program's own __globaltimer()
        "vabsdiff4 18 laneid 0",  # 10 + |1-4| + |2-3| + |3-2| + |4-1|; mov.u32 %0, %%laneid
    ]


def test_ptx_subset_and_precise_refusals():
    out, a, b = [Operand("=f", "r")], Operand("f", "a"), Operand("f", "b")
    assert translate_asm("add.rm.f32 %0, %1, %2;", out, [a, b]) == "(void)((r) = ::__fadd_rd((a), (b)))"
    assert translate_asm("mul.f64 %0, %1, %2;", out, [a, b]) == "(void)((r) = ::__dmul_rn((a), (b)))"
    assert translate_asm("", [], []) == "((void)0)"
    for template, named in (("prmt.b32 %0, %1, %2, 0;", "prmt.b32"), ("div.approx.f32 %0, %1, %2;", "div.approx.f32"), ("ld.global.nc.f32 %0, [%1];", "ld.global.nc.f32")):
        try:
            translate_asm(template, out, [a, b])
            raise AssertionError(f"{template} was accepted")
        except PtxUnsupported as e:
            assert f"instruction '{named}'" in str(e)
    src = ("__device__ unsigned f(unsigned x) { unsigned r;\n  asm(\"brev.b32 %0, %1;\" : \"=r\"(r) : \"r\"(x)); return r; }\n"
           "static void host_fpu() { unsigned short cw;\n  __asm__ __volatile__(\"fnstcw %0\" : \"=m\"(cw)); }\n")
    found = translate(src, "asm.cu").unsupported
    # device PTX outside the subset is refused with its instruction; host x86 asm is the host compiler's
    assert [(u.feature, u.line) for u in found] == [("inline PTX: instruction 'brev.b32'", 2)]
