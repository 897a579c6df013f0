"""extract_code on literal replies: fenced, unfenced, several blocks, truncated, empty."""

from __future__ import annotations

import pytest

from cuset.generate import extract_code

MODULE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
__global__ void k(float* x) { x[threadIdx.x] = 0.f; }
"""

ext = load_inline(name="ext", cpp_sources="", cuda_sources=cuda_source, functions=["k"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.k(x)
'''


def test_a_python_fence():
    reply = f"Here is the optimized model:\n\n```python\n{MODULE}```\n\nThis fuses the ops."
    found = extract_code(reply)
    assert (found.code, found.method, found.reason, found.syntax_ok, found.n_blocks) == (MODULE, "fence", "", True, 1)


@pytest.mark.parametrize("opening", ["```", "```py", "``` python", "````python"])
def test_fences_without_or_with_other_python_tags(opening):
    closing = "````" if opening.startswith("````") else "```"
    found = extract_code(f"{opening}\n{MODULE}{closing}\n")
    assert found.code == MODULE and found.method == "fence"


def test_a_bare_module_as_the_corpus_teaches_it(corpus):
    for sample in corpus[::20]:
        found = extract_code(sample.response)
        assert (found.code, found.method, found.reason, found.syntax_ok) == (sample.response, "bare", "", True)


def test_a_bare_module_loses_prose_before_and_after():
    reply = f"Sure! Below is the code.\n\n{MODULE}\nThis replaces the op with one kernel.\nuser: thanks"
    found = extract_code(reply)
    assert found.code == MODULE and found.method == "bare" and found.syntax_ok
    assert found.reason == "text before the code dropped; text after the code dropped"


def test_a_cut_second_attempt_after_a_bare_module_is_dropped_where_it_stops_parsing():
    found = extract_code(f"{MODULE}\n\nclass ModelNew(nn.Module):\n    def forward(self")
    assert found.code == MODULE and found.reason == "text after the code dropped"


def test_of_several_blocks_the_one_defining_model_new_wins():
    reply = (
        "The kernel:\n```cuda\n__global__ void k(float* x) {}\n```\n"
        "Usage:\n```python\nmodel = ModelNew()\nprint(model(x))\n```\n"
        f"Full module:\n```python\n{MODULE}```\n"
        "Checking:\n```python\nassert torch.allclose(a, b)\n```\n"
    )
    found = extract_code(reply)
    assert found.code == MODULE and found.n_blocks == 4


def test_a_closed_python_block_beats_an_unclosed_one_and_other_languages():
    other = MODULE.replace("return ext.k(x)", "return x")
    reply = f"```text\n{other}```\n```python\n{MODULE}```\nagain:\n```python\n{other}"
    assert extract_code(reply).code == MODULE


def test_a_truncated_reply_inside_its_fence():
    cut = MODULE[: MODULE.index("return ext.k(x)")] + "return ext.k("
    found = extract_code(f"```python\n{cut}")
    assert found.method == "open_fence" and found.code == cut + "\n" and not found.syntax_ok
    assert "not closed" in found.reason and "does not parse" in found.reason
    complete = extract_code(f"```python\n{MODULE}")  # cut right after the code: still usable
    assert complete.code == MODULE and complete.syntax_ok and complete.method == "open_fence"


def test_a_reply_cut_before_model_new_has_no_code():
    found = extract_code(f"```python\n{MODULE[: MODULE.index('class ModelNew')]}")
    assert found.code == "" and found.method == "none"
    assert found.reason == "1 code block(s), none defines class ModelNew (the reply may be cut short)"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "the reply is empty"),
        ("  \n\n", "the reply is empty"),
        ("I cannot help with CUDA today.", "no fenced code block and no class ModelNew in the reply"),
        ("```python\nimport torch\nprint(1)\n```", "1 code block(s), none defines class ModelNew"),
        ("Name the class ModelNew, as asked.", "no fenced code block and no class ModelNew in the reply"),
    ],
)
def test_nothing_usable_gives_empty_code_and_a_reason(reply, reason):
    found = extract_code(reply)
    assert (found.code, found.method, found.reason, found.syntax_ok) == ("", "none", reason, False)
