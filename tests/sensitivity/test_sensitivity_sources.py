"""Finding CUDA in Python strings and markdown fences, and mapping offsets back to the sample."""

from __future__ import annotations

from cuset.sensitivity import tag
from cuset.sensitivity.sources import decode_string_body, detect_format

KERNEL = "__global__ void k(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] = __expf(a[i]); }"


def first(text: str, category: str) -> tuple[int, int, str]:
    span = next(s for s in tag(text).spans if s.category == category)
    return span.start, span.end, span.text


def test_python_raw_string_after_non_ascii_comment() -> None:
    text = (
        "import torch\n"
        "from torch.utils.cpp_extension import load_inline\n"
        "# café — ≈ 2× faster, 🚀\n"
        f'src = r"""\n{KERNEL}\n"""\n'
        'mod = load_inline(name="m", cpp_sources="void f();", cuda_sources=src)\n'
    )
    result = tag(text)
    assert [b.origin for b in result.blocks] == ["load_inline", "load_inline"]
    block = result.blocks[0]
    assert text[block.start : block.end] == f"\n{KERNEL}\n"
    start = text.index("threadIdx.x")
    assert first(text, "thread_index") == (start, start + len("threadIdx.x"), "threadIdx.x")
    assert first(text, "intrinsic_math") == (text.index("__expf"), text.index("__expf") + 6, "__expf")
    for span in result.spans:
        assert text[span.start : span.end] == span.text


def test_python_escapes_are_decoded_and_mapped_back() -> None:
    # In the sample (Python source) the CUDA has \n and \" escapes; the parser sees real ones.
    text = 'import torch\ncuda_src = "__global__ void k(int* a) {\\n  printf(\\"%d\\\\n\\", 1);\\n  a[threadIdx.x] = 0;\\n}\\n"\n'
    result = tag(text)
    assert not result.notes
    start = text.index("threadIdx.x")
    assert first(text, "thread_index") == (start, start + 11, "threadIdx.x")
    assert first(text, "index_math") == (start, start + 11, "threadIdx.x")


def test_decode_string_body_positions() -> None:
    code, pos = decode_string_body("a\\tb\\x41\\u00e9\\N{BULLET}\\q", 100)
    assert code == "a\tbAé•\\q"
    assert pos == [100, 101, 103, 104, 108, 114, 124, 125, 126]
    code, pos = decode_string_body("x{{y}}\\n", 0, raw=True, fstring=True)
    assert code == "x{y}\\n" and pos[:5] == [0, 1, 3, 4, 6]


def test_python_ignores_strings_that_are_not_cuda() -> None:
    text = 'import torch\n"""A docstring mentioning threadIdx in prose only."""\nname = "bias_gelu"\n'
    result = tag(text)
    assert result.blocks == [] and result.spans == []
    assert any("no string literal" in n for n in result.notes)


def test_python_tokenize_failure_keeps_earlier_strings_and_names_the_line() -> None:
    text = f'import torch\nsrc = r"""{KERNEL}"""\n\nbroken = """never closed\n{KERNEL}\n'
    result = tag(text)
    assert [s.text for s in result.spans if s.category == "thread_index"] == ["threadIdx.x"]
    assert any(n.startswith("python: tokenize stopped at line 4") for n in result.notes)


def test_markdown_fences_map_offsets_and_skip_prose() -> None:
    text = (
        "Use `threadIdx.x` for the index — é.\n\n"
        "```cuda\n" + KERNEL + "\n```\n\n"
        "Then launch:\n\n"
        "```c++\nvoid run(float* a, int n) { k<<<(n + 255) / 256, 256>>>(a, n); }\n```\n"
        "```bash\nnvcc -O3 k.cu\n```\n"
    )
    result = tag(text)
    assert [b.origin for b in result.blocks] == ["markdown", "markdown"]
    prose = text.index("threadIdx.x")
    ti = [s for s in result.spans if s.category == "thread_index"]
    assert len(ti) == 1 and ti[0].start == text.index("threadIdx.x", prose + 1)
    launch = text.index("<<<")
    assert first(text, "launch_config") == (launch, text.index(">>>") + 3, "<<<(n + 255) / 256, 256>>>")


def test_markdown_python_fence_and_unclosed_fence() -> None:
    text = (
        "Answer:\n"
        "```python\nimport torch\nsrc = '''\n" + KERNEL + "\n'''\n```\n"
        "And again, unfinished:\n"
        "```cuda\n__global__ void g() { __syncthreads(); }\n"
    )
    result = tag(text)
    assert [b.origin for b in result.blocks] == ["load_inline", "markdown"]
    assert first(text, "sync") == (text.index("__syncthreads()"), text.index("__syncthreads()") + 15, "__syncthreads()")
    assert any("fence opened at line 9 is not closed" in n for n in result.notes)


def test_detect_format() -> None:
    assert detect_format(KERNEL) == "cuda"
    assert detect_format("import torch\nx = 1\n") == "python"
    assert detect_format("text\n```cuda\nint x;\n```\n") == "markdown"
    assert detect_format("class Foo {\n int x;\n};\n") == "cuda"  # C++ class, not Python
    assert tag("int x = threadIdx.x;", fmt="python").blocks == []


def test_crlf_markdown() -> None:
    text = "Text\r\n```cuda\r\n__global__ void k(int* a) {\r\n  a[threadIdx.x] = 0;\r\n}\r\n```\r\nmore\r\n"
    result = tag(text)
    assert result.notes == [] and len(result.blocks) == 1
    assert first(text, "thread_index") == (text.index("threadIdx.x"), text.index("threadIdx.x") + 11, "threadIdx.x")
