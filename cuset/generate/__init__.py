"""Generation: KernelBench tasks -> prompts -> replies -> the solution code in them.

    from cuset.generate import GenerateConfig, generate
    config = GenerateConfig(model="job:3", n_samples=5, temperature=0.8, max_new_tokens=1536)
    result = generate({"relu": Path("relu.py").read_text()}, config, progress=lambda done, total: print(done, total))
    result.generations["relu"][0].code       # the ModelNew module ("" + a reason when none)
    result.save("runs/gen-1")

Stages, one module each: `config` (GenerateConfig), `source` (a model spec -> base model, full
fine-tune or LoRA adapter of a job), `prompts` (the corpus's prompt wording, one-shot example,
chat template), `engines` (batched transformers generation with per-sample seeds; vLLM when
installed), `ct2` (CTranslate2 on CPU, converted once), `registry` (an engine by name), `extract` (the code block in a reply), `run` (the run and its records).
"""

from cuset.generate.config import ENGINES, GenerateConfig, field_help
from cuset.generate.ct2 import CT2Engine, ct2_folder
from cuset.generate.engines import Completion, EngineError, Request, TransformersEngine, VLLMEngine, nucleus_probs
from cuset.generate.extract import Extraction, extract_code
from cuset.generate.prompts import DEFAULT_ONE_SHOT, OneShot, build_prompt, load_one_shot, render_prompt, task_instruction
from cuset.generate.registry import ENGINE_LOADERS, make_engine, pick_engine
from cuset.generate.run import GenerateResult, Generation, generate, sample_seed
from cuset.generate.source import ModelSource, load_model, resolve_source

__all__ = [
    "CT2Engine",
    "DEFAULT_ONE_SHOT",
    "ENGINES",
    "ENGINE_LOADERS",
    "Completion",
    "EngineError",
    "Extraction",
    "GenerateConfig",
    "GenerateResult",
    "Generation",
    "ModelSource",
    "OneShot",
    "Request",
    "TransformersEngine",
    "VLLMEngine",
    "build_prompt",
    "ct2_folder",
    "extract_code",
    "field_help",
    "generate",
    "load_model",
    "load_one_shot",
    "make_engine",
    "nucleus_probs",
    "pick_engine",
    "render_prompt",
    "resolve_source",
    "sample_seed",
    "task_instruction",
]
