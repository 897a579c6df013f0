"""The generation config (`GenerateConfig`): which model, how many samples, how they are drawn.

    from cuset.generate import GenerateConfig
    config = GenerateConfig(model="job:3", n_samples=5, temperature=0.8)
    config.save("generate.yaml"); GenerateConfig.load("generate.yaml")
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import ClassVar

from cuset.config import ConfigFile

ENGINES = ("auto", "transformers", "vllm", "ctranslate2", "openvino")
DTYPES = ("auto", "float32", "bfloat16", "int8")
PROTOCOLS = ("full", "kernel-only")  # what the model is asked to write (cuset.generate.kernel_only)
INT8_ENGINES = ("ctranslate2",)  # engines that run int8 weights
# The phrasings of the corpus prompt that carry no implementation note (see prompts.py).
N_PROMPT_VARIANTS = 4


@dataclass
class GenerateConfig(ConfigFile):
    """Every choice of one generation run over a set of tasks."""

    KIND: ClassVar[str] = "generate config"

    model: str = field(default="default", metadata={"help": (
        "Model: a name or folder (see cuset.models), a fine-tune 'job:ID' (its final model), "
        "'job:ID@checkpoint-N' or 'job:ID@last' (a checkpoint), or a folder holding a LoRA adapter.")})
    n_samples: int = field(default=1, metadata={"help": "Replies per task (pass@k needs k or more; more than 1 needs temperature > 0)."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature; 0 = greedy decoding."})
    top_p: float = field(default=0.95, metadata={"help": "Nucleus sampling: keep the smallest set of tokens with this much probability (1 = off)."})
    seed: int = field(default=42, metadata={"help": "Seed of sampling; each (task, sample) gets its own seed derived from it."})
    max_new_tokens: int = field(default=2048, metadata={"help": "Longest reply in tokens (the corpus's solutions are 600-1,750 tokens)."})
    batch_size: int = field(default=48, metadata={"help": (
        "Replies generated together (vLLM: requests submitted at once). On CPU decoding reads every weight once "
        "per step whatever the batch, so wide batches pay: coder-0.5b bf16 measured 49 tok/s at 4, 261 at 48.")})
    one_shot: bool | str = field(default=True, metadata={"help": (
        "One-shot example before the task: true (a fixed corpus example), false (zero-shot), "
        "'corpus:SAMPLE_ID', or a folder holding task.py and solution.py.")})
    prompt_variant: int = field(default=0, metadata={"help": f"Which of the corpus's {N_PROMPT_VARIANTS} note-free prompt phrasings to use (0-{N_PROMPT_VARIANTS - 1}); full protocol only."})
    dtype: str = field(default="auto", metadata={"help": (
        f"Weights dtype, one of {DTYPES}; auto = the model's own (cuset.models: bfloat16 for the Qwen coders, "
        "float32 otherwise; a fine-tune takes its base model's), except under engine ctranslate2, where auto = int8 "
        "(its fast CPU path), and engine openvino, where auto = bfloat16 on a CPU with native bf16, else float32. "
        "int8 is for ctranslate2 only.")})
    engine: str = field(default="auto", metadata={"help": (
        f"One of {ENGINES}; auto = vLLM when it is installed and a GPU is present, else transformers (the reference). "
        "ctranslate2: CTranslate2's CPU runtime on a once-converted copy of the model (cuset.generate.ct2); "
        "openvino: OpenVINO GenAI's continuous batching on a once-exported copy (cuset.generate.ov; `make openvino` "
        "builds its export environment).")})
    protocol: str = field(default="full", metadata={"help": (
        f"One of {PROTOCOLS}: full = the model writes the whole solution module; kernel-only = the task's Python wrapper "
        "(from its reference solution) is given and the model writes only the CUDA source (cuset.generate.kernel_only).")})
    device: str = field(default="auto", metadata={"help": "transformers engine: 'auto' (cuda when available, else cpu), 'cpu', 'cuda' or 'cuda:N'."})

    def __post_init__(self) -> None:
        checks = [
            (bool(self.model.strip()), "model is empty: name a model ('default', 'tiny', a folder, a hub id or 'job:ID')."),
            (self.n_samples >= 1, f"n_samples={self.n_samples}: use at least 1."),
            (self.temperature >= 0, f"temperature={self.temperature}: use 0 (greedy) or a positive value such as 0.8."),
            (0 < self.top_p <= 1, f"top_p={self.top_p}: use a value in (0, 1]; 1 turns nucleus sampling off."),
            (self.temperature > 0 or self.n_samples == 1, (
                f"n_samples={self.n_samples} with temperature=0: greedy decoding gives the same reply every time. "
                "Set temperature > 0 (e.g. 0.8) to draw several samples, or n_samples=1.")),
            (self.max_new_tokens >= 1, f"max_new_tokens={self.max_new_tokens}: use at least 1."),
            (self.batch_size >= 1, f"batch_size={self.batch_size}: use at least 1."),
            (isinstance(self.one_shot, bool | str), f"one_shot={self.one_shot!r}: use true, false, 'corpus:SAMPLE_ID' or a folder path."),
            (0 <= self.prompt_variant < N_PROMPT_VARIANTS, f"prompt_variant={self.prompt_variant}: use 0 to {N_PROMPT_VARIANTS - 1}."),
            (self.dtype in DTYPES, f"dtype={self.dtype!r}: use one of {', '.join(DTYPES)}."),
            (self.engine in ENGINES, f"engine={self.engine!r}: use one of {', '.join(ENGINES)}."),
            (self.dtype != "int8" or self.engine in INT8_ENGINES, (
                f"dtype='int8' with engine={self.engine!r}: int8 weights run under engine='ctranslate2' only; "
                "switch the engine, or use dtype float32 / bfloat16 / auto.")),
            (self.protocol in PROTOCOLS, f"protocol={self.protocol!r}: use one of {', '.join(PROTOCOLS)}."),
            (self.protocol == "full" or self.prompt_variant == 0, (
                f"prompt_variant={self.prompt_variant} with protocol={self.protocol!r}: the variants are phrasings of the corpus's "
                "whole-module prompt; the kernel-only prompt has one wording (use prompt_variant 0).")),
            (self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"), f"device={self.device!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        if isinstance(self.one_shot, str) and not self.one_shot.strip():
            raise ValueError("one_shot is an empty string: use true, false, 'corpus:SAMPLE_ID' or a folder path.")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def field_help() -> dict[str, str]:
    """Field name -> help text (for the CLI and the app)."""
    return {f.name: f.metadata.get("help", "") for f in fields(GenerateConfig)}
