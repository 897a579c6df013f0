"""Derived-index tracking: which variables count as thread indices, and where they are used."""

from __future__ import annotations

from cuset.sensitivity import tag


def texts(text: str, category: str) -> list[str]:
    return [s.text for s in tag(text).spans if s.category == category]


def test_derivation_is_transitive_and_order_independent_of_names() -> None:
    text = (
        "__global__ void k(float* a, int n, int w) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int row = i / w;\n"
        "    int col = row % 4;\n"
        "    int base = col * w;\n"
        "    if (base < n) a[base + 1] = 0.f;\n"
        "}\n"
    )
    assert texts(text, "index_math") == [
        "i = blockIdx.x * blockDim.x + threadIdx.x",
        "row = i / w",
        "col = row % 4",
        "base = col * w",
        "base + 1",
    ]
    assert texts(text, "bounds_guard") == ["base < n"]


def test_loaded_floats_are_data_but_loaded_ints_are_gather_indices() -> None:
    text = (
        "__global__ void k(const float* x, const int* idx, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    float v = x[i];\n"
        "    float acc = 0.f;\n"
        "    acc += v * 2.f;\n"
        "    int j = idx[i];\n"
        "    if (v > 0.f) y[j] = acc;\n"
        "}\n"
    )
    assert texts(text, "index_math") == ["i = blockIdx.x * blockDim.x + threadIdx.x", "i", "j = idx[i]", "j"]
    assert texts(text, "bounds_guard") == []  # `v > 0.f` tests data, not a thread's position


def test_dimension_values_are_index_math_but_not_guards() -> None:
    text = (
        "__global__ void k(float* s) {\n"
        "    int stride = blockDim.x * gridDim.x;\n"
        "    for (int o = blockDim.x / 2; o > 0; o >>= 1) s[o] += 1.f;\n"
        "}\n"
    )
    assert texts(text, "index_math") == ["stride = blockDim.x * gridDim.x", "o = blockDim.x / 2", "o"]
    assert texts(text, "bounds_guard") == []


def test_compound_updates_of_a_position_are_index_math() -> None:
    text = "__global__ void k(float* a, int n) {\n    int c = threadIdx.x;\n    while (c < n) { a[c] = 0.f; c += 32; }\n}\n"
    assert texts(text, "index_math") == ["c = threadIdx.x", "c", "c += 32"]
    assert texts(text, "loop_structure") == ["while (c < n)"]


def test_tracking_is_per_function_and_device_only() -> None:
    text = (
        "__device__ int lane_of(int t) { return t & 31; }\n"
        "__global__ void k(int* out) { int i = threadIdx.x; out[lane_of(i)] = i; }\n"
        "void host(int* out, int n) { int i = n * 2; out[i] = 0; if (i < n) out[0] = 1; }\n"
    )
    result = tag(text)
    assert [s.text for s in result.spans if s.category == "index_math"] == ["i = threadIdx.x", "lane_of(i)"]
    host_start = text.index("void host")
    assert not [s for s in result.spans if s.start >= host_start and s.category in ("index_math", "bounds_guard")]


def test_cooperative_groups_ranks_are_positions() -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    auto block = cg::this_thread_block();\n"
        "    auto tile = cg::tiled_partition<32>(block);\n"
        "    int r = tile.thread_rank();\n"
        "    if (r == 0) a[block.group_index().x] = tile.shfl_down(a[r], 1);\n"
        "}\n"
    )
    result = tag(text)
    by = {c: [s.text for s in spans] for c, spans in result.by_category().items()}
    assert by["thread_index"] == ["tile.thread_rank()", "block.group_index()"]
    assert by["index_math"] == ["r = tile.thread_rank()", "block.group_index().x", "r"]
    assert by["bounds_guard"] == ["r == 0"]
    assert by["warp_intrinsic"] == ["tile.shfl_down(a[r], 1)"]


def test_statements_kinds_and_depths() -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    int i = threadIdx.x;\n"
        "    for (int j = 0; j < n; ++j) {\n"
        "        if (i < j) { a[j] = 0; }\n"
        "    }\n"
        "    do { i--; } while (i > 0);\n"
        "    return;\n"
        "}\n"
        "int g = 3;\n"
        "void host(float* a) { k<<<1, 32>>>(a, 4); while (0) {} switch (1) { default: break; } }\n"
    )
    result = tag(text)
    got = [(text[s.start : s.end].split("\n")[0][:14], s.kind, s.depth) for s in result.statements]
    assert got == [
        ("int i = thread", "declaration", 0),
        ("for (int j = 0", "for", 0),
        ("if (i < j) { a", "if", 1),
        ("a[j] = 0;", "expression", 2),
        ("do { i--; } wh", "do", 0),
        ("i--;", "expression", 1),
        ("return;", "return", 0),
        ("k<<<1, 32>>>(a", "launch", 0),
        ("while (0) {}", "while", 0),
        ("switch (1) { d", "other", 0),
        ("break;", "other", 1),
    ]
