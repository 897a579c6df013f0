"""The kernel-only protocol: every bundled task's wrapper cut from its reference, the CUDA source
found in each reply shape, spliced back into a module the evaluator judges like any other."""

from __future__ import annotations

import ast

import pytest

from cuset.generate.kernel_only import PLACEHOLDER, build_prompt, cuda_source_of, extract, splice, wrapper_of, wrappers_of


@pytest.fixture(scope="module")
def suite():
    from cuset.evaluate.suite import load_suite

    return load_suite("bundled")


def test_every_bundled_reference_gives_a_wrapper_that_its_own_source_restores(suite):
    """The wrapper holds the placeholder instead of the CUDA string and still parses; splicing
    the reference's own source back gives the reference's syntax tree, node for node."""
    assert len(suite) == 49
    for task in suite:
        wrapper = wrapper_of(task.reference_text, task.id)
        assert PLACEHOLDER in wrapper.text and "__global__" not in wrapper.text, task.id
        ast.parse(wrapper.text)
        assert "__global__" in wrapper.source and wrapper.declarations, task.id
        assert ast.dump(ast.parse(splice(wrapper, wrapper.source))) == ast.dump(ast.parse(task.reference_text)), task.id


WRAPPER = wrapper_of('''from torch.utils.cpp_extension import load_inline
src = """
__global__ void k() {}
torch::Tensor f(torch::Tensor x) { return x; }
"""
ext = load_inline(name="e", cpp_sources="torch::Tensor f(torch::Tensor x);", cuda_sources=[src], functions=["f"])
''')
SOURCE = "__global__ void mine() {}\ntorch::Tensor f(torch::Tensor x) { return x; }"


@pytest.mark.parametrize(("reply", "method", "found"), [
    (f"Here it is:\n```cuda\n{SOURCE}\n```\nDone.", "fence", SOURCE),
    (f"```python\nprint(1)\n```\n```cpp\n{SOURCE}\n```", "fence", SOURCE),  # the C++ block, not the Python one
    (f"```cuda\n{SOURCE}\n", "open_fence", SOURCE),  # cut at max_new_tokens
    (f'import torch\nfrom torch.utils.cpp_extension import load_inline\ncuda_source = r"""\n{SOURCE}\n"""\n'
     'm = load_inline(name="m", cpp_sources="", cuda_sources=cuda_source, functions=["f"])\n', "module", SOURCE),
    (f"```\n{SOURCE}\n```", "fence", SOURCE),
    (f"#include <torch/extension.h>\n{SOURCE}", "bare", f"#include <torch/extension.h>\n{SOURCE}"),
    (f"{SOURCE}\n```", "bare", SOURCE),  # a lone closing fence (issue 31: 47/49 of coder-1.5b sft's replies)
    (f"{SOURCE}\n```\nThis kernel copies x.", "bare", SOURCE),  # the prose after that fence is not the source
    (f"__global__ void draft() {{}}\n```\n{SOURCE}\n```", "fence", SOURCE),  # a block that reads as C++ wins over the text above it
    ("I cannot help with that.", "none", ""),
    ("```python\nclass ModelNew: pass\n```", "none", ""),
    ("", "none", ""),
])
def test_the_cuda_source_is_found_in_each_reply_shape(reply, method, found):
    source, how, _ = cuda_source_of(reply)
    assert (source.strip(), how) == (found.strip(), method)
    candidate = extract(reply, WRAPPER)
    assert candidate.method == method and candidate.syntax_ok == bool(found)
    if found:  # the module binds the wrapper's name to exactly the reply's source
        tree = ast.parse(candidate.code)
        value = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "src")
        assert value.value.strip("\n") == found.strip("\n")
        assert "load_inline(name=\"e\"" in candidate.code  # the wrapper's call, not the reply's
    else:
        assert candidate.code == "" and candidate.reason


def test_a_source_with_triple_quotes_is_spliced_as_a_quoted_literal():
    source = 'const char* s = """oops""";\n__global__ void k() {}'
    tree = ast.parse(splice(WRAPPER, source))
    value = next(n.value for n in tree.body if isinstance(n, ast.Assign))
    assert value.value.strip("\n") == source


def test_a_module_without_a_cuda_string_is_refused_naming_where():
    with pytest.raises(ValueError, match="task 'x': no load_inline"):
        wrapper_of("import torch\nclass ModelNew: pass\n", "task 'x'")
    with pytest.raises(ValueError, match="task 'y'.*no reference solution"):
        wrappers_of({"y": ""})
    with pytest.raises(ValueError, match="line 1"):
        wrapper_of("def (:", "here")


def test_the_prompt_shows_the_task_the_wrapper_and_the_one_shot_answer_as_cuda(suite):
    task = suite[0]
    messages = build_prompt(task.task_text, wrapper_of(task.reference_text), True)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    last = messages[-1]["content"]
    assert "class Model(" in last and PLACEHOLDER in last and wrapper_of(task.reference_text).declarations in last
    assert "__global__" not in last  # the reference's kernels are not given away
    assert messages[1]["content"].startswith("```cuda\n") and "__global__" in messages[1]["content"]
    assert len(build_prompt(task.task_text, wrapper_of(task.reference_text), None)) == 1


def test_the_reference_source_spliced_by_the_protocol_is_judged_correct_and_a_wrong_one_is_not(suite):
    """End to end through the CPU backend: a reply holding the reference's CUDA source becomes a
    correct candidate; the same with the planted bug's edit applied is not."""
    from cuset.evaluate.harness import Candidate, evaluate_candidates

    task = next(t for t in suite if t.id == "L1-absdiff")
    wrapper = wrapper_of(task.reference_text)
    wrong = task.wrong[0].text
    bad_source = wrapper_of(wrong).source
    assert bad_source != wrapper.source
    good = extract(f"```cuda\n{wrapper.source}\n```", wrapper).code
    bad = extract(f"```cuda\n{bad_source}\n```", wrapper).code
    records = {r["sample"]: r for r in evaluate_candidates(
        [Candidate(task.id, i, code, task.task_text, level=task.level) for i, code in enumerate((good, bad))], trials=2, workers=2)}
    assert records[0]["status"] == "correct", records[0]["message"]
    assert records[1]["status"] == task.wrong[0].expect and not records[1]["correct"]


def test_generate_under_kernel_only_needs_references_and_records_its_protocol(corpus):
    from cuset.evaluate.suite import load_suite
    from cuset.generate import GenerateConfig, generate

    task = load_suite("bundled")[0]
    config = GenerateConfig(model="tiny", max_new_tokens=4, protocol="kernel-only", one_shot=False)
    with pytest.raises(ValueError, match="no reference solution"):
        generate({task.id: task.task_text}, config)
    result = generate({task.id: task.task_text}, config, references={task.id: task.reference_text})
    assert result.stats["protocol"] == "kernel-only" and result.stats["n_replies"] == 1
    (g,) = result.generations[task.id]
    assert g.n_prompt_tokens > 300  # the wrapper is in the prompt
    with pytest.raises(ValueError, match="protocol='kernel'"):
        GenerateConfig(protocol="kernel")
    with pytest.raises(ValueError, match="prompt_variant=2 with protocol='kernel-only'"):
        GenerateConfig(protocol="kernel-only", prompt_variant=2)


def test_an_evaluation_and_its_results_table_name_the_protocol(tmp_path):
    import pandas as pd

    from cuset.evaluate.evaluation import EvalConfig
    from cuset.experiment.results import write_results

    assert EvalConfig(protocol="kernel-only").protocol == "kernel-only"
    with pytest.raises(ValueError, match="protocol='kernel-only' with solutions='reference'"):
        EvalConfig(protocol="kernel-only", solutions="reference")
    with pytest.raises(ValueError, match="protocol='whole'"):
        EvalConfig(protocol="whole")
    rows = pd.DataFrame([{"model": "m", "method": "sft", "seed": 1, "mode": "greedy", "engine": "transformers", "task": "t", "level": 1,
                          "split": "", "family": "", "sample": 0, "status": "correct", "compiled": True, "correct": True,
                          "error_line": None, "error": ""}])
    write_results(tmp_path / "k", rows, protocol="kernel-only")
    write_results(tmp_path / "f", rows)
    assert (tmp_path / "k" / "table.md").read_text().startswith("Protocol: **kernel-only**")
    assert (tmp_path / "k" / "table.md").read_text().endswith((tmp_path / "f" / "table.md").read_text())
    assert '"protocol": "kernel-only"' in (tmp_path / "k" / "summary.json").read_text()
    assert "protocol" not in (tmp_path / "f" / "summary.json").read_text()
