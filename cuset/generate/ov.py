"""OpenVINO GenAI generation engine: the same requests and replies as TransformersEngine, decoded by
OpenVINO's continuous-batching pipeline on the CPU.

    from cuset.generate.ov import OVEngine
    engine = OVEngine.load("coder-0.5b", "bfloat16")     # exports once, then loads
    generate(tasks, GenerateConfig(engine="openvino", dtype="bfloat16"), engine=engine)

Why this engine (issue 32; measured on a 2-core AMX Xeon, benchmarks/README.md has the numbers):
on coder-0.5b its decoding ran 1.8-1.9x the transformers loop's tokens/s at batch 8 and 0.85 of
the memory-bandwidth limit at batch 1, where CTranslate2 int8 ran ~0.6x the loop on that CPU.

Two environments. The runtime (`openvino-genai`, with `openvino` and `openvino-tokenizers`) installs
beside the pinned transformers; the exporter (optimum-intel) needs transformers < 5.6, so the export
runs in its own virtual environment, `.venv-openvino` at the repository root (`make openvino`
builds it: the same torch 2.13.0 CPU wheel, transformers 5.5.4, optimum-intel 2.2.0), or the Python
named by CUSET_OPENVINO_PYTHON. Only the export runs there, as a subprocess
(`optimum-cli export openvino --task text-generation-with-past`); nothing of it is imported here.

Conversion: a model is exported once per (source identity, weight format, OpenVINO version,
CONVERTER_VERSION) into `models_dir()/openvino/<name>-<fingerprint>-<weights>-ov<version>-c<N>/`,
beside the CTranslate2 and converted safetensors folders; the source's fingerprint is cuset's own
(an embedded model's GGUF sha256 + converter + dtype; a folder's content hash; a LoRA adapter's hash
+ its base's). A LoRA fine-tune is merged into its base in float32 (`source.save_merged`, as for
CTranslate2) and the merged folder exported, once per adapter. `cuset-openvino.json` in the folder
records what it was made from and how long each part took.

Weights and compute (`dtype`): bfloat16 exports float16 weights (every bfloat16 value of the
embedded models is exactly a float16 one) and computes in bfloat16 (INFERENCE_PRECISION_HINT bf16),
the transformers engine's bf16; float32 exports float32 weights and computes in float32. auto is
bfloat16 where the CPU has native bf16 (cuset.bf16), else float32.

Replies: the prompts are the same token ids (`run._requests`), the stop tokens the same
(`engines.stop_token_ids`, given to the pipeline as stop_token_ids), and a reply is cut and
labelled by the same `_completion`: the pipeline's ids include the stop token that ended a reply.
At most `batch_size` requests are in the pipeline at once, and the next is added as
one ends (continuous batching), so a finished row costs nothing; the pipeline is compiled once, at load. Greedy is the
argmax. A sampled request carries its own seed (rng_seed = the request's seed): its reply does not
depend on which requests share the batch, as with the transformers engine, though OpenVINO's
sampler is not torch's, so a seed draws a different reply than it does there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cuset.generate.config import GenerateConfig
from cuset.generate.engines import Completion, EngineError, Request, _completion, stop_token_ids
from cuset.generate.source import ModelSource, model_facts, resolve_source, save_merged

CONVERTER_VERSION = 1  # bump when the export below changes: old folders are then not reused
DTYPES = ("bfloat16", "float32")
# dtype -> (exported weight format, the CPU plugin's inference precision)
_FORMATS = {"bfloat16": ("fp16", "bf16"), "float32": ("fp32", "f32")}
EXPORT_TIMEOUT_S = 3600
REPO = Path(__file__).resolve().parents[2]


def _genai() -> tuple[Any, Any]:
    try:
        import openvino
        import openvino_genai
    except ImportError:
        raise EngineError(
            "engine='openvino' but OpenVINO GenAI is not installed: `pip install openvino-genai==2026.4.1.0` "
            "(requirements.txt pins it), or use engine='transformers'."
        ) from None
    return openvino, openvino_genai


def export_python() -> Path:
    """The Python of the export environment (CUSET_OPENVINO_PYTHON, else .venv-openvino's)."""
    named = os.environ.get("CUSET_OPENVINO_PYTHON")
    return Path(named) if named else REPO / ".venv-openvino" / "bin" / "python"


def _exporter() -> list[str]:
    python = export_python()
    if not python.is_file():
        raise EngineError(
            f"engine='openvino' exports a model with optimum-intel, which runs in its own environment, and {python} "
            "does not exist: run `make openvino` (builds .venv-openvino: optimum-intel needs transformers < 5.6), "
            "or set CUSET_OPENVINO_PYTHON to a Python that has optimum-intel 2.2.0 and openvino 2026.4.1."
        )
    return [str(python), "-m", "optimum.commands.optimum_cli"]


def ov_cache_dir() -> Path:
    from cuset.models import models_dir

    return models_dir() / "openvino"


def check_dtype(dtype: str) -> str:
    """The engine's dtype for a config's (auto resolved); EngineError for one it does not offer."""
    if dtype == "auto":
        from cuset.bf16 import cpu_bf16_fast

        return "bfloat16" if cpu_bf16_fast() else "float32"
    if dtype not in _FORMATS:
        raise EngineError(f"engine='openvino' runs dtype {' or '.join(DTYPES)} (or auto), not {dtype!r}.")
    return dtype


def folder_key(source: ModelSource, dtype: str) -> str:
    """The exported folder's name: readable model name + everything that changes its bytes."""
    openvino, _ = _genai()
    if source.job_id is not None:
        name = f"job{source.job_id}-{source.checkpoint}"
    else:  # an embedded model's name, else the folder's
        name = source.spec if source.kind == "base" and not Path(source.spec).exists() else Path(source.path).name
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)[:60] or "model"
    version = openvino.__version__.split("-")[0]
    return f"{safe}-{source.fingerprint}-{_FORMATS[dtype][0]}-ov{version}-c{CONVERTER_VERSION}"


def _export(model_folder: str, weights: str, into: Path) -> None:
    command = [*_exporter(), "export", "openvino", "--model", model_folder, "--task", "text-generation-with-past",
               "--weight-format", weights, str(into)]
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)  # the export environment's own packages, not this one's
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise EngineError(f"OpenVINO export of {model_folder} ran over {EXPORT_TIMEOUT_S} s and was stopped.") from None
    if done.returncode != 0 or not (into / "openvino_model.xml").is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
        raise EngineError(f"OpenVINO export of {model_folder} failed (exit {done.returncode}; {' '.join(command)}):\n{tail}")


def ov_folder(source: ModelSource, dtype: str = "bfloat16", cache_dir: Path | None = None, progress: bool = True) -> Path:
    """The OpenVINO folder of `source` for `dtype`, exported on first use (see the module
    docstring); later calls return the cached folder without exporting."""
    from tqdm import tqdm

    from cuset.models import _atomic_folder

    openvino, _ = _genai()
    dtype = check_dtype(dtype)
    weights = _FORMATS[dtype][0]
    target = (cache_dir or ov_cache_dir()) / folder_key(source, dtype)
    if (target / "config.json").is_file():
        return target
    _exporter()  # a clear error before any merging

    def build(tmp: Path) -> None:
        steps = ["merge LoRA", "export", "record"] if source.kind == "lora" else ["export", "record"]
        times: dict[str, float] = {}
        started = time.perf_counter()
        with tqdm(total=len(steps), desc=f"openvino {weights} {Path(source.path).name}", unit="step",
                  disable=not progress, file=sys.stderr) as bar, tempfile.TemporaryDirectory(dir=tmp.parent) as scratch:
            path = source.path
            if source.kind == "lora":
                bar.set_postfix_str("merging the adapter into its base (float32)")
                path = str(save_merged(source, Path(scratch)))
                times["merge_s"] = round(time.perf_counter() - started, 2)
                bar.update(1)
            bar.set_postfix_str("exporting with optimum-intel")
            begun = time.perf_counter()
            _export(path, weights, tmp)
            times["export_s"] = round(time.perf_counter() - begun, 2)
            bar.update(1)
            seconds = time.perf_counter() - started
            (tmp / "cuset-openvino.json").write_text(json.dumps({
                "spec": source.spec, "kind": source.kind, "source": source.path, "fingerprint": source.fingerprint,
                "weights": weights, "openvino": openvino.__version__, "converter": CONVERTER_VERSION,
                "seconds": round(seconds, 2), **times,
            }, indent=2))
            bar.update(1)
        print(f"cuset: exported {source.spec} to OpenVINO {weights} in {seconds:.1f} s (once; cached at {target})", file=sys.stderr)

    return _atomic_folder(target, build)


class OVEngine:
    """OpenVINO GenAI `ContinuousBatchingPipeline` over an exported folder, behind the `Engine` interface."""

    name = "openvino"
    decoding = "openvino-continuous-batching"

    def __init__(self, folder: str | Path, tokenizer: Any, source: ModelSource | None = None, dtype: str = "bfloat16",
                 threads: int = 0, context: int | None = None, model: Any = None) -> None:
        _, genai = _genai()
        self.folder = str(folder)
        self.tokenizer = tokenizer
        self.source = source
        self.dtype = check_dtype(dtype)
        self.weights = _FORMATS[self.dtype][0]  # what the exported folder stores (the compute dtype is self.dtype)
        self.version = genai.get_version()
        self.threads = threads or len(os.sched_getaffinity(0))
        self.context = context
        self.stops = stop_token_ids(tokenizer, model)
        self._pipeline: Any = None
        self.pipeline()

    @classmethod
    def load(cls, source: ModelSource | str, dtype: str = "bfloat16", threads: int = 0, cache_dir: Path | None = None,
             progress: bool = True) -> OVEngine:
        """Export (once) and load a model spec or source; `threads` 0 = one per core."""
        source = resolve_source(source) if isinstance(source, str) else source
        dtype = check_dtype(dtype)
        folder = ov_folder(source, dtype, cache_dir, progress)
        tokenizer, context, holder = model_facts(source)
        return cls(folder, tokenizer, source, dtype, threads, context, holder)

    def context_length(self) -> int | None:
        return self.context

    def pipeline(self) -> Any:
        """The continuous-batching pipeline (compiled once, on first use)."""
        if self._pipeline is None:
            _, genai = _genai()
            scheduler = genai.SchedulerConfig()
            scheduler.max_num_batched_tokens = max(scheduler.max_num_batched_tokens, 2048)  # prefill in wider chunks
            properties = {"INFERENCE_PRECISION_HINT": _FORMATS[self.dtype][1], "INFERENCE_NUM_THREADS": self.threads}
            self._pipeline = genai.ContinuousBatchingPipeline(self.folder, scheduler, "CPU", properties)
        return self._pipeline

    def _options(self, request: Request, config: GenerateConfig) -> Any:
        _, genai = _genai()
        options = genai.GenerationConfig()
        options.max_new_tokens = config.max_new_tokens
        eos = self.tokenizer.eos_token_id
        options.eos_token_id = eos if eos in self.stops else self.stops[0]  # OpenVINO wants it among the stops
        options.stop_token_ids = set(self.stops)
        if not config.greedy:
            options.do_sample = True
            options.temperature = config.temperature
            options.top_p = config.top_p
            options.top_k = 0  # the whole vocabulary, as the transformers engine's nucleus
            options.rng_seed = request.seed % 2**32
        return options

    def run(self, requests: Sequence[Request], config: GenerateConfig, progress: Callable[[int, int], None] | None = None) -> list[Completion]:
        """All requests, at most `config.batch_size` in flight: the next is added as one ends."""
        import numpy as np

        openvino, genai = _genai()
        pipe = self.pipeline()
        ids: list[list[int] | None] = [None] * len(requests)
        running: dict[int, Any] = {}
        waiting = list(range(len(requests)))[::-1]
        done = 0
        started = time.perf_counter()
        while waiting or running:
            while waiting and len(running) < config.batch_size:
                i = waiting.pop()
                prompt = openvino.Tensor(np.array([requests[i].prompt_ids], dtype=np.int64))
                running[i] = pipe.add_request(i, prompt, self._options(requests[i], config))
            pipe.step()
            for i, handle in list(running.items()):
                status = handle.get_status()
                if status == genai.GenerationStatus.FINISHED:
                    ids[i] = [int(t) for t in handle.read_all()[0].generated_ids]
                    del running[i]
                    done += 1
                    if progress:
                        progress(done, len(requests))
                elif status != genai.GenerationStatus.RUNNING:
                    raise EngineError(f"OpenVINO did not run request {i} (status {status}; prompt {len(requests[i].prompt_ids)} tokens): "
                                      "its prompt may not fit the pipeline's cache.")
        share = (time.perf_counter() - started) / max(1, len(requests))
        stops = set(self.stops)
        return [_completion(x or [], stops, self.tokenizer, share) for x in ids]
