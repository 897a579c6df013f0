"""Broken, truncated, empty and binary inputs: partial spans plus notes, never an exception."""

from __future__ import annotations

import random

import pytest

from cuset.sensitivity import CATEGORIES, tag
from cuset.sensitivity.scoring import DEFAULT_FOLDER, labelled_samples


def categories(text: str) -> set[str]:
    return {s.category for s in tag(text).spans}


def test_syntax_error_keeps_spans_and_names_the_line() -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) { a[i] = ; }\n"
        "    __syncthreads();\n"
        "}\n"
    )
    result = tag(text)
    got = {(s.category, s.text) for s in result.spans}
    assert {
        ("qualifier", "__global__"),
        ("thread_index", "threadIdx.x"),
        ("bounds_guard", "i < n"),
        ("sync", "__syncthreads()"),
        ("index_math", "i = blockIdx.x * blockDim.x + threadIdx.x"),
    } <= got
    assert result.notes and result.notes[0].startswith("line 3, column ")


def test_truncated_kernel_is_closed_for_parsing() -> None:
    text = (
        "__global__ void k(float* a, int n) {\n"
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) {\n"
        "        a[i] *= 2.f;\n"
        "        __syncthreads();\n"
    )
    result = tag(text)
    by = {c: [s.text for s in v] for c, v in result.by_category().items()}
    assert by["loop_structure"] == ["for (int i = threadIdx.x; i < n; i += blockDim.x)"]
    assert by["bounds_guard"] == ["i < n"]
    assert result.notes == ["line 4, column 25: the code ends with 2 unclosed '{' (closed at the end to parse the rest)"]
    assert all(s.end <= len(text) for s in result.spans)
    assert all(st.end <= len(text) for st in result.statements)


def test_extra_closing_brace_and_garbage_in_a_kernel() -> None:
    text = "__global__ void k(int* a) {\n    a[threadIdx.x] = 1; }\n}\n@@ ?? <<< >>> __shared__ int s[4];\n"
    result = tag(text)
    assert {"qualifier", "thread_index", "index_math", "memory_space"} <= categories(text)
    assert any(n.startswith("line 3, column 1: syntax error") for n in result.notes)


def test_error_region_gets_lexical_spans() -> None:
    # The parser cannot build calls or field expressions here; a regex pass over the ERROR
    # region still finds the keywords (and leaves comments alone).
    text = "__global__ __shared__ float ) ( __syncthreads ( threadIdx . x // threadIdx.y\n"
    got = [(s.category, s.text) for s in tag(text).spans]
    assert ("sync", "__syncthreads") in got and ("thread_index", "threadIdx . x") in got
    assert ("qualifier", "__global__") in got and ("memory_space", "__shared__") in got
    assert "threadIdx.y" not in [t for _, t in got]


@pytest.mark.parametrize("text", ["", "   \n\t\n"])
def test_empty_input(text: str) -> None:
    result = tag(text)
    assert result.spans == [] and result.blocks == [] and result.notes == ["empty input: nothing to tag"]


def test_binary_input() -> None:
    data = bytes(range(256)).decode("latin-1") * 4
    result = tag(data)
    assert result.spans == [] and "binary-looking" in result.notes[0]
    assert "binary-looking" in tag("ELF\x00\x01\x02 __global__").notes[0]


def test_odd_text_never_raises() -> None:
    for text in [
        "\ud800 __global__ void k() {}",
        "}}}}{{{{",
        "```",
        "```cuda",
        "<<<>>>",
        "'''",
        "r'''",
        "import x\n'''",
        "#define X(",
        "/* unterminated",
        '"\\',
        "\x0c\x0b",
        "é" * 500,
    ]:
        result = tag(text)
        for span in result.spans:
            assert 0 <= span.start < span.end <= len(text) and span.category in CATEGORIES


def test_non_str_is_a_programmer_error() -> None:
    with pytest.raises(TypeError, match="decode bytes first"):
        tag(b"__global__")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="choose one of"):
        tag("x", fmt="rust")


def test_random_truncations_and_corruptions_of_real_kernels() -> None:
    rng = random.Random(0)
    samples = [text for _, text, _ in labelled_samples(DEFAULT_FOLDER)]
    for _ in range(120):
        text = rng.choice(samples)
        cut = rng.randrange(len(text))
        text = text[:cut] if rng.random() < 0.5 else text[:cut] + rng.choice("{}()[];<>\"'`#\\é\x00") + text[cut:]
        result = tag(text)
        for span in result.spans:
            assert 0 <= span.start < span.end <= len(text)
            assert span.text == text[span.start : span.end]
        for st in result.statements:
            assert 0 <= st.start <= st.end <= len(text)
        assert not any("tagging this" in n for n in result.notes), result.notes
