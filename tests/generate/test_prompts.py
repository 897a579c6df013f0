"""Prompts: the corpus's own wording, the one-shot exchange, the chat template."""

from __future__ import annotations

import types

import numpy as np
import pytest

from cuset.confidence import ScoreConfig, render
from cuset.data import Sample
from cuset.generate import DEFAULT_ONE_SHOT, OneShot, build_prompt, load_one_shot, render_prompt, task_instruction
from cuset.generate.prompts import PROMPT_INDICES, encode_prompt


@pytest.mark.parametrize("variant", range(4))
def test_the_user_turn_is_the_corpus_instruction_of_a_note_free_sample(corpus, variant):
    """Corpus sample i was rendered with index i; at the note-free indices (no hint) the
    generation prompt for its task is its instruction, character for character."""
    sample = corpus[PROMPT_INDICES[variant]]
    assert task_instruction(sample.task, variant) == sample.instruction
    assert "Implementation note" not in sample.instruction
    assert build_prompt(sample.task, None, variant) == [{"role": "user", "content": sample.instruction}]


def test_zero_shot_prompt_tokens_are_the_training_prompt_tokens(tiny, corpus):
    """Training renders (instruction, response) with cuset.confidence.render; the tokens before
    the response must be exactly what generation feeds the model."""
    _, tokenizer, resolved = tiny
    sample = corpus[2]
    rendered = render(Sample("x", sample.instruction, sample.response), tokenizer, ScoreConfig(model="tiny"), resolved.fingerprint)
    n_prompt = int(np.argmax(rendered.response_mask))
    ids = encode_prompt(render_prompt(build_prompt(sample.task, None), tokenizer), tokenizer)
    assert ids == rendered.input_ids[:n_prompt]


def test_one_shot_prompt_holds_example_then_task_in_the_chat_template(tiny, corpus):
    _, tokenizer, _ = tiny
    example = load_one_shot(True)
    task = corpus[150].task
    messages = build_prompt(task, example)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == example.solution
    text = render_prompt(messages, tokenizer)
    at_example_task, at_solution, at_task = text.index(example.task.strip()), text.index(example.solution.strip()), text.index(task.strip())
    assert at_example_task < at_solution < at_task
    assert text.count("<|im_start|>user\n") == 2 and text.count("<|im_start|>assistant\n") == 2
    assert text.endswith(f"{task.rstrip()}\n```\n\n{messages[2]['content'].split('```')[-1].strip()}\n<|im_end|>\n<|im_start|>assistant\n")
    assert "class ModelNew" in messages[1]["content"] and "class ModelNew" not in messages[2]["content"]


def test_the_default_example_is_a_fixed_corpus_sample(corpus):
    example = load_one_shot(True)
    sample = next(s for s in corpus if s.id == DEFAULT_ONE_SHOT.removeprefix("corpus:"))
    assert (example.task, example.solution, example.source) == (sample.task, sample.response, DEFAULT_ONE_SHOT)
    assert load_one_shot(False) is None
    assert build_prompt("import torch\n", False) == build_prompt("import torch\n", None)


def test_one_shot_from_a_folder_and_clear_errors(tmp_path):
    (tmp_path / "task.py").write_text("class Model: pass\n")
    (tmp_path / "solution.py").write_text("class ModelNew: pass\n")
    assert load_one_shot(str(tmp_path)) == OneShot("class Model: pass\n", "class ModelNew: pass\n", str(tmp_path))
    (tmp_path / "solution.py").unlink()
    with pytest.raises(ValueError, match="lacks solution.py"):
        load_one_shot(str(tmp_path))
    with pytest.raises(ValueError, match="no sample 'elementwise-nope'.*elementwise-"):
        load_one_shot("corpus:elementwise-nope")
    with pytest.raises(ValueError, match="task text is empty"):
        build_prompt("  \n", None)


def test_a_tokenizer_without_chat_template_gets_plain_turns():
    plain = types.SimpleNamespace(chat_template=None)
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b\n"}, {"role": "user", "content": "c"}]
    assert render_prompt(messages, plain) == "a\nb\n\nc\n"
