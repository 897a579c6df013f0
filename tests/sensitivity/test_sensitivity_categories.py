"""Each category on literal snippets, with exact expected offsets."""

from __future__ import annotations

import pytest

from cuset.sensitivity import CATEGORIES, CATEGORY_BIT, tag


def spans(text: str, category: str) -> list[tuple[int, int, str]]:
    return [(s.start, s.end, s.text) for s in tag(text).spans if s.category == category]


def at(text: str, snippet: str, occurrence: int = 1) -> tuple[int, int, str]:
    """The exact (start, end, text) of the n-th occurrence of ``snippet`` in ``text``."""
    start = -1
    for _ in range(occurrence):
        start = text.index(snippet, start + 1)
    return start, start + len(snippet), snippet


def test_category_constants() -> None:
    assert CATEGORIES[0] == "qualifier" and len(CATEGORIES) == 12
    assert CATEGORY_BIT["qualifier"] == 1 and CATEGORY_BIT["loop_structure"] == 1 << 11


def test_qualifier() -> None:
    text = (
        "__global__ void __launch_bounds__(256, 2) k(float* __restrict__ a) {}\n"
        "__device__ __forceinline__ float f(float x) { return x; }\n"
        "__host__ __device__ int g();\n"
    )
    assert spans(text, "qualifier") == [
        (0, 10, "__global__"),
        (16, 41, "__launch_bounds__(256, 2)"),
        at(text, "__restrict__"),
        at(text, "__device__"),
        at(text, "__forceinline__"),
        at(text, "__host__"),
        at(text, "__device__", 2),
    ]


def test_memory_space() -> None:
    text = (
        "__global__ void k() { extern __shared__ float s[]; __shared__ float t[32][33]; }\n"
        "__constant__ float c[4];\n"
        "__managed__ int m;\n"
    )
    assert spans(text, "memory_space") == [
        at(text, "extern __shared__ float s[];"),
        at(text, "__shared__ float t[32][33];"),
        at(text, "__constant__ float c[4];"),
        at(text, "__managed__ int m;"),
    ]


def test_thread_index() -> None:
    text = "__global__ void k(int* a) { a[0] = threadIdx.x + blockIdx.y * blockDim.z + gridDim.x + warpSize; }"
    assert spans(text, "thread_index") == [
        at(text, "threadIdx.x"),
        at(text, "blockIdx.y"),
        at(text, "blockDim.z"),
        at(text, "gridDim.x"),
        at(text, "warpSize"),
    ]


def test_index_math() -> None:
    text = (
        "__global__ void k(float* out, int n) {\n"
        "    int i = blockIdx.x*blockDim.x+threadIdx.x;\n"
        "    int row = i / n;\n"
        "    float acc = 2.0f * n;\n"
        "    out[row * n + i % n] = acc;\n"
        "}\n"
    )
    assert spans(text, "index_math") == [
        at(text, "i = blockIdx.x*blockDim.x+threadIdx.x"),
        at(text, "row = i / n"),
        at(text, "row * n + i % n"),
    ]


def test_bounds_guard() -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (idx >= n) return;\n"
        "    if (a[idx] > 0) a[idx] = 0;\n"  # a data test, not a guard
        "    a[idx] = (idx < n - 1) ? a[idx + 1] : 0;\n"
        "    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) a[0] = 1; }\n"
        "}\n"
    )
    assert spans(text, "bounds_guard") == [
        at(text, "if (idx >= n) return;"),
        at(text, "idx < n - 1"),
        at(text, "threadIdx.x < s"),
    ]


def test_sync() -> None:
    text = (
        "__global__ void k(unsigned m, int p) {\n"
        "    cg::thread_block block = cg::this_thread_block();\n"
        "    cg::grid_group grid = cg::this_grid();\n"
        "    __syncthreads(); __syncwarp(m); __threadfence(); int c = __syncthreads_count(p);\n"
        "    block.sync(); cg::sync(grid);\n"
        "}\n"
    )
    assert [t for _, _, t in spans(text, "sync")] == [
        "__syncthreads()",
        "__syncwarp(m)",
        "__threadfence()",
        "__syncthreads_count(p)",
        "block.sync()",
        "cg::sync(grid)",
    ]
    assert spans(text, "sync")[0] == at(text, "__syncthreads()")


def test_atomic_and_warp_intrinsic() -> None:
    text = (
        "__global__ void k(int* p, float v) {\n"
        "    atomicAdd(&p[0], 1); atomicCAS(p, 0, 1);\n"
        "    v += __shfl_down_sync(0xffffffff, v, 16);\n"
        "    unsigned m = __activemask(), b = __ballot_sync(__activemask(), v > 0);\n"
        "    int r = __reduce_add_sync(0xffffffff, 1);\n"
        "}\n"
    )
    assert spans(text, "atomic") == [at(text, "atomicAdd(&p[0], 1)"), at(text, "atomicCAS(p, 0, 1)")]
    # a span inside another span of the same category (the nested __activemask()) is merged away
    assert spans(text, "warp_intrinsic") == [
        at(text, "__shfl_down_sync(0xffffffff, v, 16)"),
        at(text, "__activemask()"),
        at(text, "__ballot_sync(__activemask(), v > 0)"),
        at(text, "__reduce_add_sync(0xffffffff, 1)"),
    ]


def test_launch_config() -> None:
    text = (
        "#define BLOCK 128\n"
        "void run(float* d, int n, cudaStream_t stream) {\n"
        "    const int threads = 256;\n"
        "    int blocks = (n + threads - 1) / threads;\n"
        "    dim3 block(16, 16);\n"
        "    k<<<blocks, threads, 0, stream>>>(d, n);\n"
        "    k2<<<(n + 127) / 128, BLOCK>>>(d, n);\n"
        "    int unrelated = n / 2;\n"
        "}\n"
    )
    assert spans(text, "launch_config") == [
        at(text, "#define BLOCK 128"),
        at(text, "threads = 256"),
        at(text, "blocks = (n + threads - 1) / threads"),
        at(text, "dim3 block(16, 16);"),
        at(text, "<<<blocks, threads, 0, stream>>>"),
        at(text, "<<<(n + 127) / 128, BLOCK>>>"),
    ]


def test_memory_api() -> None:
    text = (
        "int main() {\n"
        "    float* d; cudaStream_t s;\n"
        "    CUDA_CHECK(cudaMalloc(&d, 64));\n"
        "    cudaMemcpy(d, h, 64, cudaMemcpyHostToDevice);\n"
        "    if (cudaGetLastError() != cudaSuccess) return 1;\n"
        "    cudaFree(d);\n"
        "}\n"
    )
    assert spans(text, "memory_api") == [
        at(text, "cudaStream_t"),
        at(text, "CUDA_CHECK(cudaMalloc(&d, 64))"),
        at(text, "cudaMemcpy(d, h, 64, cudaMemcpyHostToDevice)"),
        at(text, "cudaGetLastError()"),
        at(text, "cudaSuccess"),
        at(text, "cudaFree(d)"),
    ]


def test_intrinsic_math() -> None:
    text = (
        "__global__ void k(const float* x, __half* y) {\n"
        "    float v = __expf(x[0]) * rsqrtf(__ldg(&x[1])) + expf(x[2]);\n"
        "    y[0] = __float2half(__fdividef(v, 3.f));\n"
        "}\n"
    )
    assert spans(text, "intrinsic_math") == [
        at(text, "__expf"),
        at(text, "rsqrtf"),
        at(text, "__ldg"),
        at(text, "__float2half"),
        at(text, "__fdividef"),
    ]


@pytest.mark.parametrize(
    ("loop", "tagged"),
    [
        ("for (int i = idx; i < n; i += blockDim.x * gridDim.x)", True),  # grid-stride
        ("for (int i = threadIdx.x; i < n; i += blockDim.x)", True),  # block-stride
        ("for (int s = blockDim.x / 2; s > 0; s >>= 1)", True),  # tree reduction
        ("for (int t = 0; t < n; t += 16)", True),  # tiles
        ("for (int k = 0; k < n; ++k)", False),  # a plain loop
    ],
)
def test_loop_structure(loop: str, tagged: bool) -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    {loop} {{ a[0] += 1.f; }}\n"
        "}\n"
    )
    assert spans(text, "loop_structure") == ([at(text, loop)] if tagged else [])


def test_tiling_loop_is_found_by_its_syncs() -> None:
    text = "__global__ void k(float* a, int n) {\n    for (int t = 0; t < n; ++t) { a[t] = 0; __syncthreads(); }\n}\n"
    assert spans(text, "loop_structure") == [at(text, "for (int t = 0; t < n; ++t)")]


def test_by_category_and_char_mask() -> None:
    result = tag("__global__ void k() { __syncthreads(); }")
    groups = result.by_category()
    assert list(groups) == list(CATEGORIES)
    assert [s.text for s in groups["sync"]] == ["__syncthreads()"]
    mask = result.char_mask()
    assert mask[0] == CATEGORY_BIT["qualifier"] and mask[11] == 0
    assert mask[result.text.index("__sync")] == CATEGORY_BIT["sync"]
