"""Prompts for a KernelBench task, in the wording the training corpus uses.

The user turn is `cuset.data.corpus.kernelbench.render_instruction`, the renderer of the
corpus's instructions, so a fine-tuned model sees the format it was trained on. That renderer
picks one of 12 phrasings by sample index and adds an "Implementation note" (a hint naming the
solution's strategy) unless index % 3 == 2; a task to solve has no such hint, so only the four
note-free indices are used (`prompt_variant` 0-3). The default (index 2) ends with KernelBench's
own closing sentence.

With a one-shot example the chat is [user: example task, assistant: example solution, user:
task]: the last turn is exactly a training prompt, and the example shows the reply format (a
bare Python module, as in the corpus). Rendering uses the tokenizer's chat template with the
generation prompt, as `cuset.confidence.render` renders training samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuset.data.corpus.kernelbench import render_instruction

PROMPT_INDICES = (2, 5, 8, 11)  # render_instruction indices without an implementation note
DEFAULT_ONE_SHOT = "corpus:elementwise-relu-guarded-000"
ONE_SHOT_FILES = ("task.py", "solution.py")


@dataclass(frozen=True)
class OneShot:
    """An example task and its solution, shown before the real task. `source` names where it came from."""

    task: str
    solution: str
    source: str


def load_one_shot(value: bool | str) -> OneShot | None:
    """The example a `GenerateConfig.one_shot` value names: None for false, the default
    corpus sample for true, 'corpus:SAMPLE_ID', or a folder holding task.py and solution.py."""
    if value is False:
        return None
    spec = DEFAULT_ONE_SHOT if value is True else str(value).strip()
    if spec.startswith("corpus:"):
        from cuset.data import load

        sample_id = spec.removeprefix("corpus:")
        samples = {s.id: s for s in load("bundled")}
        if sample_id not in samples:
            near = sorted(i for i in samples if i.split("-")[0] == sample_id.split("-")[0])[:5] or sorted(samples)[:5]
            raise ValueError(f"one_shot={spec!r}: the bundled corpus has no sample {sample_id!r}; e.g. {', '.join(near)}.")
        sample = samples[sample_id]
        if not sample.task:
            raise ValueError(f"one_shot={spec!r}: sample {sample_id!r} has no task module; pick a KernelBench-format sample.")
        return OneShot(task=sample.task, solution=sample.response, source=spec)
    folder = Path(spec).expanduser()
    missing = [name for name in ONE_SHOT_FILES if not (folder / name).is_file()]
    if not folder.is_dir() or missing:
        what = "is not a folder" if not folder.is_dir() else f"lacks {', '.join(missing)}"
        raise ValueError(
            f"one_shot={spec!r}: {folder} {what}. Use true (the default example), false (zero-shot), "
            f"'corpus:SAMPLE_ID', or a folder holding {' and '.join(ONE_SHOT_FILES)} (the reference task and its ModelNew solution)."
        )
    return OneShot(task=(folder / "task.py").read_text(), solution=(folder / "solution.py").read_text(), source=str(folder))


def task_instruction(task_text: str, variant: int = 0) -> str:
    """The user turn for a task: the corpus's prompt wording with phrasing `variant` (0-3)."""
    if not 0 <= variant < len(PROMPT_INDICES):
        raise ValueError(f"prompt variant {variant}: use 0 to {len(PROMPT_INDICES) - 1}.")
    return render_instruction(task_text, "", PROMPT_INDICES[variant])


def build_prompt(task_text: str, one_shot: OneShot | bool | str | None = True, variant: int = 0) -> list[dict[str, str]]:
    """Chat messages for one task: optionally the example exchange, then the task.

    `one_shot` is an OneShot, or a value `load_one_shot` understands (None = zero-shot)."""
    if not task_text.strip():
        raise ValueError("The task text is empty: pass the KernelBench module (Model, get_inputs, get_init_inputs).")
    example = one_shot if isinstance(one_shot, OneShot) or one_shot is None else load_one_shot(one_shot)
    messages = []
    if example is not None:
        messages += [
            {"role": "user", "content": task_instruction(example.task, variant)},
            {"role": "assistant", "content": example.solution},
        ]
    messages.append({"role": "user", "content": task_instruction(task_text, variant)})
    return messages


def render_prompt(messages: list[dict[str, str]], tokenizer: Any, use_chat_template: bool = True) -> str:
    """The prompt text the model continues: the chat template with the generation prompt, or,
    for a tokenizer without one, the turns' text each followed by a newline (as
    `cuset.confidence.render` joins instruction and response)."""
    if use_chat_template and getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "".join(m["content"] + "\n" for m in messages)


def encode_prompt(text: str, tokenizer: Any) -> list[int]:
    """Token ids of a rendered prompt (the template already holds the special tokens)."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
