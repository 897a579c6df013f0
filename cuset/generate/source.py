"""Which weights generate: a base model, a full fine-tune, or a LoRA adapter on its base.

A model spec is one string:

    NAME | FOLDER | HUB_ID       a base model, through cuset.models ('default', 'tiny', ...)
    job:ID                      fine-tune job ID's final model (final/ in its run folder)
    job:ID@checkpoint-N         one of its checkpoints (checkpoints/checkpoint-N/)
    job:ID@last                 its newest complete checkpoint
    FOLDER with adapter_config.json   a peft LoRA adapter (its base from the adapter config)

A fine-tune's folder holds either full weights (config.json + safetensors; `lora_r: 0`) or a
peft adapter (adapter_config.json + adapter_model.safetensors), depending on the run's
TrainConfig; checkpoints carry no tokenizer, so it comes from the base model the job's
config.yaml names. A LoRA adapter is loaded on a fresh copy of the base in float32, merged
into it (one set of weights: no adapter overhead per token, and merged in full precision),
then its weights cast to the requested dtype. Only the weights: a whole-module `.to(bfloat16)`
also rounds the float32 buffers that `from_pretrained` keeps in float32, RoPE's inv_freq among
them, which turns every position's rotation (coder-1.5b at position 1,400: up to 1.6 rad,
13 of its 64 frequencies off by over 0.1 rad).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cuset import models
from cuset.models import ModelError

_JOB_SPEC = re.compile(r"^job:(?P<id>[^@]*)(?:@(?P<which>.*))?$")


@dataclass(frozen=True)
class ModelSource:
    """A model spec resolved to files, before any weights are loaded.

    kind       "base" (cuset.models), "full" (a fine-tuned model folder) or "lora" (an adapter)
    path       the base model's source (base), the model folder (full) or the adapter folder (lora)
    base       the base model's name for lora and for a job's tokenizer ("" for a plain base)
    tokenizer  where the tokenizer loads from
    fingerprint  changes when the weights change (keys caches, names results)
    job_id, checkpoint  for job specs: the job and "final" or "checkpoint-N"
    """

    spec: str
    kind: str
    path: str
    base: str
    tokenizer: str
    fingerprint: str
    job_id: int | None = None
    checkpoint: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _has_tokenizer(folder: Path) -> bool:
    return (folder / "tokenizer_config.json").is_file() or (folder / "tokenizer.json").is_file()


def _hash_folder(folder: Path, base_fingerprint: str = "") -> str:
    """JSON files by content, weights by size and mtime (as cuset.models fingerprints folders)."""
    digest = hashlib.sha256(base_fingerprint.encode())
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        if path.suffix == ".json":
            digest.update(path.name.encode() + path.read_bytes())
        else:
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def _folder_source(spec: str, folder: Path, base: str, job_id: int | None = None, checkpoint: str = "") -> ModelSource:
    """A fine-tuned model folder: full weights, or an adapter on `base` ('' = the adapter config's)."""
    where = f"job {job_id} ({checkpoint})" if job_id is not None else "model folder"
    if (folder / "adapter_config.json").is_file():
        try:
            adapter = json.loads((folder / "adapter_config.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ModelError(f"{where}: cannot read {folder / 'adapter_config.json'} ({exc}).") from None
        base = base or str(adapter.get("base_model_name_or_path") or "")
        if not base:
            raise ModelError(f"{where}: the LoRA adapter in {folder} does not name its base model; load it through its job ('job:ID').")
        resolved = models.resolve(base)
        tokenizer = str(folder) if _has_tokenizer(folder) else resolved.source
        return ModelSource(spec, "lora", str(folder), base, tokenizer, _hash_folder(folder, resolved.fingerprint), job_id, checkpoint)
    if (folder / "config.json").is_file():
        tokenizer = str(folder) if _has_tokenizer(folder) or not base else models.resolve(base).source
        return ModelSource(spec, "full", str(folder), base, tokenizer, _hash_folder(folder), job_id, checkpoint)
    raise ModelError(
        f"{where}: {folder} holds neither config.json (full fine-tuned weights) nor adapter_config.json "
        "(a LoRA adapter); it is not a saved model."
    )


def _checkpoints(folder: Path) -> list[str]:
    names = [p.name for p in folder.glob("checkpoint-*") if p.name.removeprefix("checkpoint-").isdigit()]
    return sorted(names, key=lambda n: int(n.removeprefix("checkpoint-")))


def _job_source(spec: str, job_text: str, which: str | None) -> ModelSource:
    from cuset.jobs import job_folder
    from cuset.jobs.store import jobs_dir

    if not job_text.strip().isdigit():
        raise ModelError(f"model={spec!r}: a job is named 'job:ID' with a numeric id, e.g. 'job:3' or 'job:3@checkpoint-8'.")
    job_id = int(job_text)
    folder = job_folder(job_id)
    if not folder.is_dir():
        known = sorted(int(p.name) for p in jobs_dir().glob("*") if p.name.isdigit()) if jobs_dir().is_dir() else []
        listed = f"jobs here: {', '.join(map(str, known[-10:]))}" if known else "there are no jobs in this workspace"
        raise ModelError(f"model={spec!r}: job {job_id} has no folder ({folder}); {listed}. See `cuset jobs list`.")
    base, run_dir = "", folder
    if (folder / "config.yaml").is_file():
        from cuset.train.config import TrainConfig

        try:
            config = TrainConfig.load(folder / "config.yaml")
        except ValueError as exc:
            raise ModelError(f"model={spec!r}: job {job_id}'s config.yaml cannot be read: {exc}") from None
        base = config.model
        run_dir = Path(config.output_dir) if config.output_dir else folder
    checkpoints = run_dir / "checkpoints"
    available = _checkpoints(checkpoints)
    offer = f"its checkpoints: {', '.join(available)} (use 'job:{job_id}@{available[-1]}')" if available else "it has no checkpoints yet"
    which = (which or "final").strip()
    if which == "final":
        target = run_dir / "final"
        if not target.is_dir():
            raise ModelError(f"model={spec!r}: job {job_id} has no final model ({target} is missing: the job has not finished, or failed); {offer}.")
    elif which == "last":
        from cuset.train.recipe import last_checkpoint

        newest = last_checkpoint(checkpoints)  # complete ones only: trainer_state.json is written last
        if newest is None:
            raise ModelError(f"model={spec!r}: job {job_id} has no complete checkpoint in {checkpoints} yet.")
        which, target = newest.name, newest
    else:
        target = checkpoints / which
        if not re.fullmatch(r"checkpoint-\d+", which) or not target.is_dir():
            raise ModelError(f"model={spec!r}: job {job_id} has no checkpoint {which!r} in {checkpoints}; {offer}, or 'job:{job_id}' for the final model.")
    return _folder_source(spec, target, base, job_id, which)


def resolve_source(spec: str) -> ModelSource:
    """Turn a model spec (see the module docstring) into files; raises ModelError naming what is missing."""
    spec = models.model_name(spec)
    match = _JOB_SPEC.match(spec)
    if match:
        return _job_source(spec, match["id"], match["which"])
    folder = Path(spec).expanduser()
    if folder.is_dir() and not (folder / "config.json").is_file():
        return _folder_source(spec, folder.resolve(), "")
    resolved = models.resolve(spec)
    return ModelSource(spec, "base", resolved.source, "", resolved.source, resolved.fingerprint)


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"device={device!r} but no CUDA GPU is visible; use device='cpu' or 'auto'.")
    return device


def _from_pretrained(path: str, torch_dtype: Any, what: str) -> Any:
    from transformers import AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype)
    except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear message
        raise ModelError(f"Could not load {what} from {path}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc


def load_model(source: ModelSource | str, dtype: str = "float32", device: str = "auto") -> tuple[Any, Any]:
    """(model in eval mode on `device`, tokenizer) for a source or spec.

    A base model on the CPU is `cuset.models.load`'s shared, cached copy: use it read-only.
    Everything else is a fresh copy (a LoRA merge rewrites the base's weights)."""
    import torch
    from transformers import AutoTokenizer

    source = resolve_source(source) if isinstance(source, str) else source
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(dtype)
    if torch_dtype is None:
        raise ModelError(f"dtype={dtype!r}: use 'float32' or 'bfloat16'.")
    device = pick_device(device)
    if source.kind == "base" and device == "cpu":
        model, tokenizer, _ = models.load(source.spec, dtype)
        return model, tokenizer
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.tokenizer)
    except Exception as exc:  # noqa: BLE001
        raise ModelError(f"Could not load the tokenizer for {source.spec!r} from {source.tokenizer}: {exc}") from exc
    if source.kind == "lora":
        from peft import PeftModel

        base = _from_pretrained(models.resolve(source.base).source, torch.float32, f"base model {source.base!r} of {source.spec!r}")
        try:
            model = PeftModel.from_pretrained(base, source.path).merge_and_unload()
        except Exception as exc:  # noqa: BLE001
            raise ModelError(f"Could not apply the LoRA adapter {source.path} to {source.base!r}: {type(exc).__name__}: {exc}") from exc
        cast_weights(model, torch_dtype)
    else:
        model = _from_pretrained(source.path, torch_dtype, f"model {source.spec!r}")
    return model.to(device).eval(), tokenizer


def cast_weights(model: Any, dtype: Any) -> Any:
    """`model`'s parameters cast to `dtype` in place, its buffers left as they are (as
    `from_pretrained(dtype=...)` leaves them), and its config saying the new dtype."""
    for parameter in model.parameters():
        parameter.data = parameter.data.to(dtype)
    model.config.dtype = dtype
    return model


def save_merged(source: ModelSource, into: Path) -> Path:
    """A LoRA source merged into its base in float32 and saved as a transformers folder (what the
    engines that convert a model folder, CTranslate2 and OpenVINO, convert)."""
    model, tokenizer = load_model(source, "float32", "cpu")
    model.save_pretrained(into)
    tokenizer.save_pretrained(into)
    return into


def model_facts(source: ModelSource) -> tuple[Any, int | None, Any]:
    """What an engine that runs a converted copy needs of the original, without its weights:
    (tokenizer, context length, a holder whose generation_config gives the model's eos to
    engines.stop_token_ids). A LoRA source's config is its base model's."""
    from types import SimpleNamespace

    from transformers import AutoConfig, AutoTokenizer, GenerationConfig

    weights = models.resolve(source.base).source if source.kind == "lora" else source.path
    config = AutoConfig.from_pretrained(weights)
    try:
        generation = GenerationConfig.from_pretrained(weights)
    except OSError:
        generation = None
    tokenizer = AutoTokenizer.from_pretrained(source.tokenizer)
    return tokenizer, getattr(config, "max_position_embeddings", None), SimpleNamespace(generation_config=generation)
