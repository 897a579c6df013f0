"""CTranslate2 generation engine: the same requests and replies as TransformersEngine, decoded by
CTranslate2's C++ runtime (int8 or float32 weights on a CPU; bfloat16/float16 where the device has them).

    from cuset.generate.ct2 import CT2Engine
    engine = CT2Engine.load("coder-0.5b", compute_type="int8")   # converts once, then loads
    generate(tasks, GenerateConfig(engine="ctranslate2", dtype="int8"), engine=engine)

Why this engine (measured on the project's 2-core AVX2 EPYC; benchmarks/README.md has the
numbers): it installs beside the pinned transformers (one 146 MB wheel), converts a transformers
folder itself, and its int8 decoding reads a quarter of float32's bytes per step. On the AMX Xeon
it is slower than the transformers loop beyond one row; OpenVINO GenAI (cuset.generate.ov), whose
exporter runs in its own environment, is the faster CPU engine there.

Conversion: a model is converted once per (source identity, converter, compute type) into
`models_dir()/ctranslate2/<name>-<fingerprint>-<type>-ct2<version>-c<CONVERTER_VERSION>/`, next to
the converted safetensors folders. The source's fingerprint is cuset's own (an embedded model's
GGUF sha256 + converter + dtype; a folder's content hash; a LoRA adapter's hash + its base's), so
new weights get a new folder. A LoRA adapter (a fine-tune job's peft folder) is merged into its base
in float32 (`source.load_model`, as the transformers engine does) and the merged model converted,
once per adapter. The folder's `cuset-ct2.json` records what it was made from and how long it took.

Replies: the prompts are the same token ids (`run._requests` renders them with the tokenizer's chat
template), the stop tokens the same (`engines.stop_token_ids`), and a reply is cut and labelled by
the same `_completion` ("eos" at a stop token, kept; "length" at max_new_tokens). Greedy picks the
argmax (sampling_topk=1); CTranslate2 drops a row from the batch once it ends, as the
transformers loop does. Greedy float32 replies equal the transformers engine's wherever no two
tokens are within rounding of each other (its GEMMs round differently from torch's; the tests
check equality on a model with peaked distributions); int8 replies part from them where int8
rounding moves the argmax (benchmarks.generation measures where).

Sampling: CTranslate2 has one random generator per worker thread, seeded once when the thread
starts, with no per-row seed. So each sampled batch loads a fresh `Generator` after
`ctranslate2.set_random_seed(seed)`, seed derived from the batch's request seeds: a rerun of the
same config gives identical replies, but unlike the transformers engine a sample depends on
which requests share its batch (same `batch_size` and task order: same replies). Reloading a
converted folder costs a fraction of a second to a few seconds (page cache), once per batch.
Temperature and top_p are CTranslate2's (sampling_topk=0: the whole vocabulary).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cuset.generate.config import GenerateConfig
from cuset.generate.engines import Completion, EngineError, Request, _completion, stop_token_ids
from cuset.generate.source import ModelSource, model_facts, resolve_source, save_merged

CONVERTER_VERSION = 1  # bump when the conversion below changes: old folders are then not reused
COMPUTE_TYPES = ("int8", "float32", "bfloat16", "float16", "int8_float32", "int8_bfloat16")


def _ctranslate2() -> Any:
    try:
        import ctranslate2
    except ImportError:
        raise EngineError(
            "engine='ctranslate2' but CTranslate2 is not installed: `pip install ctranslate2==4.8.5` "
            "(requirements.txt pins it), or use engine='transformers'."
        ) from None
    return ctranslate2


def ct2_cache_dir() -> Path:
    from cuset.models import models_dir

    return models_dir() / "ctranslate2"


def folder_key(source: ModelSource, compute_type: str) -> str:
    """The converted folder's name: readable model name + everything that changes its bytes."""
    ct2 = _ctranslate2()
    if source.job_id is not None:
        name = f"job{source.job_id}-{source.checkpoint}"
    else:  # an embedded model's name, else the folder's
        name = source.spec if source.kind == "base" and not Path(source.spec).exists() else Path(source.path).name
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)[:60] or "model"
    return f"{safe}-{source.fingerprint}-{compute_type}-ct2{ct2.__version__}-c{CONVERTER_VERSION}"


def ct2_folder(source: ModelSource, compute_type: str = "int8", cache_dir: Path | None = None, progress: bool = True) -> Path:
    """The CTranslate2 folder of `source` at `compute_type`, converted on first use (see the
    module docstring); later calls return the cached folder without converting."""
    from tqdm import tqdm

    from cuset.models import _atomic_folder

    ct2 = _ctranslate2()
    target = (cache_dir or ct2_cache_dir()) / folder_key(source, compute_type)
    if (target / "config.json").is_file():
        return target

    def build(tmp: Path) -> None:
        from ctranslate2.converters import TransformersConverter

        steps = ["merge LoRA", "convert", "record"] if source.kind == "lora" else ["convert", "record"]
        started = time.perf_counter()
        with tqdm(total=len(steps), desc=f"ctranslate2 {compute_type} {Path(source.path).name}", unit="step",
                  disable=not progress, file=sys.stderr) as bar, tempfile.TemporaryDirectory(dir=tmp.parent) as scratch:
            path = source.path
            if source.kind == "lora":
                bar.set_postfix_str("merging the adapter into its base (float32)")
                path = str(save_merged(source, Path(scratch)))
                bar.update(1)
            bar.set_postfix_str("converting")
            TransformersConverter(path, low_cpu_mem_usage=True).convert(str(tmp), quantization=compute_type, force=True)
            bar.update(1)
            seconds = time.perf_counter() - started
            (tmp / "cuset-ct2.json").write_text(json.dumps({
                "spec": source.spec, "kind": source.kind, "source": source.path, "fingerprint": source.fingerprint,
                "compute_type": compute_type, "ctranslate2": ct2.__version__, "converter": CONVERTER_VERSION,
                "seconds": round(seconds, 2),
            }, indent=2))
            bar.update(1)
        print(f"cuset: converted {source.spec} to CTranslate2 {compute_type} in {seconds:.1f} s (once; cached at {target})", file=sys.stderr)

    return _atomic_folder(target, build)


def check_compute_type(compute_type: str, device: str = "cpu") -> None:
    """Raise EngineError when CTranslate2 cannot compute in `compute_type` on `device` (e.g.
    bfloat16 on a CPU without avx512_bf16), naming what it can."""
    supported = _ctranslate2().get_supported_compute_types(device.split(":")[0])
    if compute_type not in supported:
        raise EngineError(
            f"CTranslate2 cannot compute in {compute_type} on this {device} (it offers {', '.join(sorted(supported))}); "
            "use dtype='int8' or 'float32' with engine='ctranslate2', or engine='transformers'."
        )


def batch_seed(seeds: Sequence[int]) -> int:
    """A 32-bit seed for one sampled batch (ctranslate2.set_random_seed takes an unsigned int)."""
    digest = hashlib.sha256(",".join(map(str, seeds)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


class CT2Engine:
    """CTranslate2 `Generator` over a converted folder, behind the `Engine` interface."""

    name = "ctranslate2"
    decoding = "ctranslate2"

    def __init__(self, folder: str | Path, tokenizer: Any, source: ModelSource | None = None, compute_type: str = "int8",
                 device: str = "cpu", threads: int = 0, context: int | None = None, model: Any = None) -> None:
        ct2 = _ctranslate2()
        check_compute_type(compute_type, device)
        self.folder = str(folder)
        self.tokenizer = tokenizer
        self.source = source
        self.dtype = compute_type
        self.version = ct2.__version__
        self.device, _, index = device.partition(":")
        self.device_index = int(index or 0)
        self.threads = threads
        self.context = context
        self.stops = stop_token_ids(tokenizer, model)
        self.generator = self._generator()

    @classmethod
    def load(cls, source: ModelSource | str, compute_type: str = "int8", device: str = "cpu", threads: int = 0,
             cache_dir: Path | None = None, progress: bool = True) -> CT2Engine:
        """Convert (once) and load a model spec or source; `threads` 0 = one per core."""
        source = resolve_source(source) if isinstance(source, str) else source
        check_compute_type(compute_type, device)
        folder = ct2_folder(source, compute_type, cache_dir, progress)
        tokenizer, context, holder = model_facts(source)
        return cls(folder, tokenizer, source, compute_type, device, threads, context, holder)

    def _generator(self) -> Any:
        import os

        ct2 = _ctranslate2()
        threads = self.threads or len(os.sched_getaffinity(0))
        return ct2.Generator(self.folder, device=self.device, device_index=self.device_index, compute_type=self.dtype, intra_threads=threads)

    def context_length(self) -> int | None:
        return self.context

    def run(self, requests: Sequence[Request], config: GenerateConfig, progress: Callable[[int, int], None] | None = None) -> list[Completion]:
        ct2 = _ctranslate2()
        order = sorted(range(len(requests)), key=lambda i: len(requests[i].prompt_ids))
        results: list[Completion | None] = [None] * len(requests)
        stops = set(self.stops)
        for begin in range(0, len(order), config.batch_size):
            batch = order[begin : begin + config.batch_size]
            tokens = [self.tokenizer.convert_ids_to_tokens(requests[i].prompt_ids) for i in batch]
            options: dict[str, Any] = {"sampling_topk": 1}
            if not config.greedy:
                options = {"sampling_topk": 0, "sampling_topp": config.top_p, "sampling_temperature": config.temperature}
                ct2.set_random_seed(batch_seed([requests[i].seed for i in batch]))
                self.generator = self._generator()  # its worker thread's RNG is seeded when it starts
            ended = [0]

            def step(result: Any, begin: int = begin, ended: list[int] = ended) -> bool:
                if result.is_last:
                    ended[0] += 1
                    if progress:
                        progress(begin + ended[0], len(requests))
                return False

            started = time.perf_counter()
            out = self.generator.generate_batch(
                tokens, max_length=config.max_new_tokens, end_token=list(self.stops), return_end_token=True,
                include_prompt_in_result=False, callback=step if progress else None, **options,
            )
            share = (time.perf_counter() - started) / len(batch)
            for row, index in enumerate(batch):
                results[index] = _completion(list(out[row].sequences_ids[0]), stops, self.tokenizer, share)
            if progress:
                progress(begin + len(batch), len(requests))
        return [r for r in results if r is not None]
