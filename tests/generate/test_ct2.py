"""The CTranslate2 engine on tiny models: conversion cached, greedy tokens and finish reasons equal
to the transformers engine's in float32, seeded sampling reproducible, a LoRA adapter merged, the
engine registry."""

from __future__ import annotations

import pytest
import torch

from cuset.generate import (
    CT2Engine,
    EngineError,
    GenerateConfig,
    TransformersEngine,
    ct2_folder,
    generate,
    make_engine,
    pick_engine,
)
from cuset.generate.engines import Request
from cuset.generate.source import resolve_source
from tests.generate.conftest import prompt_rows, stops_and_finishes


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ct2-cache")


@pytest.fixture(scope="module")
def engines(sharp_folder, cache):
    """(ctranslate2 float32, transformers float32) on the sharp model."""
    source = resolve_source(str(sharp_folder))
    return CT2Engine.load(source, "float32", "cpu", threads=1, cache_dir=cache, progress=False), TransformersEngine.load(source, "float32", "cpu")


def test_conversion_is_cached_and_keyed_by_source_and_compute_type(sharp_folder, tmp_path, monkeypatch):
    from ctranslate2.converters import TransformersConverter

    calls = []
    real = TransformersConverter.convert
    monkeypatch.setattr(TransformersConverter, "convert", lambda self, *a, **k: calls.append(k["quantization"]) or real(self, *a, **k))
    source = resolve_source(str(sharp_folder))
    first = ct2_folder(source, "float32", tmp_path, progress=False)
    again = ct2_folder(source, "float32", tmp_path, progress=False)
    assert first == again and calls == ["float32"]
    record = (first / "cuset-ct2.json").read_text()
    assert source.fingerprint in first.name and '"compute_type": "float32"' in record and '"seconds"' in record
    int8 = ct2_folder(source, "int8", tmp_path, progress=False)
    assert int8 != first and calls == ["float32", "int8"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, int8.name])  # no temporary folders left


def test_greedy_tokens_equal_the_transformers_engine_in_float32(engines, tasks):
    """Exact: the sharp model's top two logits are far apart compared with float32 rounding, so
    CTranslate2's and torch's different GEMMs pick the same argmax (on near-uniform logits, e.g.
    the stock tiny model, a tie could flip a token; that would be rounding, not a bug)."""
    ct2, reference = engines
    rows = prompt_rows(reference.tokenizer, tasks)
    requests = [Request(r, i) for i, r in enumerate(rows)]
    config = GenerateConfig(max_new_tokens=16, batch_size=len(rows))
    ours = ct2.run(requests, config)
    theirs = [reference.run([r], GenerateConfig(max_new_tokens=16, batch_size=1))[0] for r in requests]
    assert [c.token_ids for c in ours] == [c.token_ids for c in theirs]
    assert len({tuple(c.token_ids) for c in ours}) == len(rows)  # replies depend on the prompt
    batched_one_by_one = [ct2.run([r], GenerateConfig(max_new_tokens=16, batch_size=1))[0].token_ids for r in requests]
    assert batched_one_by_one == [c.token_ids for c in ours]


def test_stop_tokens_and_finish_reasons_are_the_transformers_engines(engines, tasks):
    """Stop tokens picked from the free-running replies end the rows at different steps (one row
    runs to the cap): same kept tokens (the stop token included), texts and finish reasons."""
    ours, theirs, stops, seen = stops_and_finishes(*engines, tasks)
    rows = prompt_rows(engines[1].tokenizer, tasks)
    assert [(c.token_ids, c.text, c.finish_reason) for c in ours] == [(c.token_ids, c.text, c.finish_reason) for c in theirs]
    assert {c.finish_reason for c in ours} == {"eos", "length"} and ours[-1].finish_reason == "length"
    assert all(c.token_ids[-1] in stops for c in ours if c.finish_reason == "eos")
    assert seen[-1] == (len(rows), len(rows)) and len(seen) > 1


def test_seeded_sampling_is_reproducible_and_depends_on_the_seed(engines, tasks):
    ct2, _ = engines
    config = GenerateConfig(temperature=0.8, top_p=0.95, n_samples=2, seed=1, batch_size=3, max_new_tokens=10, one_shot=False)
    first = generate(tasks, config, engine=ct2)
    second = generate(tasks, config, engine=ct2)
    other = generate(tasks, GenerateConfig(**{**config.to_dict(), "seed": 2}), engine=ct2)
    greedy = generate(tasks, GenerateConfig(max_new_tokens=10, one_shot=False), engine=ct2)

    def replies(result):
        return [g.reply for samples in result.generations.values() for g in samples]

    assert replies(first) == replies(second)
    assert replies(first) != replies(other)
    assert replies(first)[::2] != replies(greedy)
    assert len(set(replies(first))) == len(replies(first))  # the two samples of a task differ
    stats = first.stats
    assert (stats["engine"], stats["dtype"], stats["decoding"]) == ("ctranslate2", "float32", "ctranslate2")
    import ctranslate2

    assert stats["engine_version"] == ctranslate2.__version__


def test_a_lora_adapter_is_merged_then_converted_once(sharp_folder, tmp_path, tasks):
    """A peft adapter made here (random B, so the merge changes the model): the engine's replies
    are the transformers engine's on the merged weights, and differ from the base model's."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(sharp_folder, dtype=torch.float32)
    peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"], init_lora_weights=False))
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=torch.Generator().manual_seed(1)) * 0.5)
    adapter = tmp_path / "adapter"
    peft_model.save_pretrained(adapter)
    source = resolve_source(str(adapter))
    assert source.kind == "lora"
    cache = tmp_path / "cache"
    ct2 = CT2Engine.load(source, "float32", "cpu", threads=1, cache_dir=cache, progress=False)
    reference = TransformersEngine.load(source, "float32", "cpu")
    rows = prompt_rows(reference.tokenizer, tasks)[:3]
    requests = [Request(r, i) for i, r in enumerate(rows)]
    config = GenerateConfig(max_new_tokens=12, batch_size=3)
    merged = [c.token_ids for c in ct2.run(requests, config)]
    assert merged == [reference.run([r], GenerateConfig(max_new_tokens=12, batch_size=1))[0].token_ids for r in requests]
    plain = CT2Engine.load(resolve_source(str(sharp_folder)), "float32", "cpu", threads=1, cache_dir=cache, progress=False)
    assert merged != [c.token_ids for c in plain.run(requests, config)]
    folders = sorted(p.name for p in cache.iterdir())
    assert len(folders) == 2 and any(source.fingerprint in f for f in folders)
    CT2Engine.load(source, "float32", "cpu", threads=1, cache_dir=cache, progress=False)  # no second conversion
    assert sorted(p.name for p in cache.iterdir()) == folders


def test_the_registry_names_its_engines_and_refuses_unknown_ones(monkeypatch, tmp_path):
    with pytest.raises(EngineError, match=r"Unknown generation engine 'llamacpp': use one of auto, transformers, vllm, ctranslate2"):
        pick_engine("llamacpp")
    with pytest.raises(ValueError, match=r"engine='llamacpp': use one of auto, transformers, vllm, ctranslate2"):
        GenerateConfig(engine="llamacpp")
    with pytest.raises(ValueError, match=r"dtype='int8' with engine='transformers'"):
        GenerateConfig(engine="transformers", dtype="int8")
    from cuset.generate import ct2

    monkeypatch.setattr(ct2, "ct2_cache_dir", lambda: tmp_path)
    engine = make_engine(GenerateConfig(model="tiny", engine="ctranslate2", device="cpu"))
    assert isinstance(engine, CT2Engine) and engine.dtype == "int8"  # auto under ctranslate2
    assert isinstance(make_engine(GenerateConfig(model="tiny", device="cpu")), TransformersEngine)
    import ctranslate2

    if "bfloat16" not in ctranslate2.get_supported_compute_types("cpu"):
        with pytest.raises(EngineError, match=r"cannot compute in bfloat16 on this cpu"):
            make_engine(GenerateConfig(model="tiny", engine="ctranslate2", dtype="bfloat16", device="cpu"))
