"""Which generation engine a config names, and loading it: the registry above the engines.

    from cuset.generate.registry import make_engine
    engine = make_engine(GenerateConfig(model="tiny", engine="ctranslate2"))

ENGINE_LOADERS maps a name to its loader (source, resolved dtype, config) -> Engine;
"transformers" is the reference every other engine is compared with. The engines themselves
(cuset.generate.engines, cuset.generate.ct2, cuset.generate.ov) do not import this module.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable

from cuset.generate.config import GenerateConfig
from cuset.generate.ct2 import CT2Engine
from cuset.generate.engines import Engine, EngineError, TransformersEngine, VLLMEngine
from cuset.generate.ov import OVEngine
from cuset.generate.source import ModelSource, pick_device, resolve_source


def pick_engine(name: str) -> str:
    """The engine a config's `engine` names ('auto': vLLM when installed and a GPU is visible, else
    transformers); an unknown name raises EngineError listing the valid ones."""
    if name != "auto":
        if name not in ENGINE_LOADERS:
            raise EngineError(f"Unknown generation engine {name!r}: use one of auto, {', '.join(ENGINE_LOADERS)}.")
        return name
    if importlib.util.find_spec("vllm") is None:
        return "transformers"
    import torch

    return "vllm" if torch.cuda.is_available() else "transformers"


def resolve_dtype(dtype: str, source: ModelSource, engine: str = "transformers") -> str:
    """A config's dtype with 'auto' replaced by the model's own (a fine-tune's base model's);
    under ctranslate2, auto is int8 (its fast CPU path); under openvino, bfloat16 where the CPU has
    native bf16, else float32 (cuset.generate.ov.check_dtype)."""
    if dtype != "auto":
        return dtype
    if engine == "ctranslate2":
        return "int8"
    if engine == "openvino":
        from cuset.generate.ov import check_dtype

        return check_dtype("auto")
    from cuset.models import default_score_dtype

    return default_score_dtype(source.base or source.spec)


def _load_transformers(source: ModelSource, dtype: str, config: GenerateConfig) -> Engine:
    from cuset.models import slow_bf16_note

    if dtype == "int8":
        raise EngineError("dtype='int8' needs engine='ctranslate2'; the transformers engine runs float32 or bfloat16.")
    device = pick_device(config.device)
    slow = slow_bf16_note(dtype, device)
    if slow:
        print(f"cuset: generating in bfloat16 (dtype {config.dtype}), but {slow}; dtype float32 is faster here", file=sys.stderr)
    return TransformersEngine.load(source, dtype, device)


def _load_vllm(source: ModelSource, dtype: str, config: GenerateConfig) -> Engine:
    return VLLMEngine(source, dtype)


def _load_ctranslate2(source: ModelSource, dtype: str, config: GenerateConfig) -> Engine:
    return CT2Engine.load(source, dtype, pick_device(config.device))


def _load_openvino(source: ModelSource, dtype: str, config: GenerateConfig) -> Engine:
    if pick_device(config.device) != "cpu":
        raise EngineError("engine='openvino' runs on the CPU here (device='cpu' or 'auto' without a GPU); use engine='vllm' on a GPU.")
    return OVEngine.load(source, dtype)


# name -> loader(source, resolved dtype, config); "transformers" is the reference every other engine is compared with.
ENGINE_LOADERS: dict[str, Callable[[ModelSource, str, GenerateConfig], Engine]] = {
    "transformers": _load_transformers,
    "vllm": _load_vllm,
    "ctranslate2": _load_ctranslate2,
    "openvino": _load_openvino,
}


def make_engine(config: GenerateConfig, source: ModelSource | None = None) -> Engine:
    """Load `config.model` into the engine `config.engine` picks, in its resolved dtype."""
    source = source or resolve_source(config.model)
    name = pick_engine(config.engine)
    return ENGINE_LOADERS[name](source, resolve_dtype(config.dtype, source, name), config)
