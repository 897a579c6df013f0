"""The OpenVINO GenAI engine on tiny models: the export cached and keyed, greedy tokens, stop tokens
and finish reasons equal to the transformers engine's in float32, seeded sampling reproducible and
independent of the batch, a LoRA adapter merged once, the registry and its errors. Each export
runs optimum-intel in the export environment (`make openvino`), ~10 s on the tiny model."""

from __future__ import annotations

import pytest
import torch

from cuset.generate import EngineError, GenerateConfig, TransformersEngine, generate, make_engine, ov
from cuset.generate.engines import Request
from cuset.generate.ov import OVEngine, ov_folder
from cuset.generate.source import resolve_source
from tests.generate.conftest import prompt_rows, stops_and_finishes


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ov-cache")


@pytest.fixture(scope="module")
def exports(monkeypatch_module):
    """The weight formats each call of the exporter was asked for, in order."""
    calls: list[str] = []
    real = ov._export
    monkeypatch_module.setattr(ov, "_export", lambda path, weights, into: calls.append(weights) or real(path, weights, into))
    return calls


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def engines(sharp_folder, cache, exports):
    """(openvino float32, transformers float32) on the sharp model."""
    source = resolve_source(str(sharp_folder))
    return OVEngine.load(source, "float32", threads=1, cache_dir=cache, progress=False), TransformersEngine.load(source, "float32", "cpu")


def test_the_export_is_cached_and_keyed_by_source_and_dtype(engines, sharp_folder, cache, exports):
    source = resolve_source(str(sharp_folder))
    first = ov_folder(source, "float32", cache, progress=False)
    assert exports == ["fp32"]  # the engines fixture exported; this call found the folder
    record = (first / "cuset-openvino.json").read_text()
    assert source.fingerprint in first.name and '"weights": "fp32"' in record and '"export_s"' in record
    half = ov_folder(source, "bfloat16", cache, progress=False)
    assert half != first and exports == ["fp32", "fp16"]
    assert {p.name for p in cache.iterdir()} >= {first.name, half.name}
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no temporary folders left


def test_greedy_tokens_equal_the_transformers_engine_in_float32(engines, tasks):
    """Exact on the sharp model (its top two logits are far apart compared with float32 rounding);
    the continuous-batching scheduler runs 2 at a time, so rows join as others end."""
    engine, reference = engines
    rows = prompt_rows(reference.tokenizer, tasks)
    requests = [Request(r, i) for i, r in enumerate(rows)]
    ours = engine.run(requests, GenerateConfig(max_new_tokens=16, batch_size=2))
    theirs = [reference.run([r], GenerateConfig(max_new_tokens=16, batch_size=1))[0] for r in requests]
    assert [c.token_ids for c in ours] == [c.token_ids for c in theirs]
    assert len({tuple(c.token_ids) for c in ours}) == len(rows)  # replies depend on the prompt


def test_stop_tokens_and_finish_reasons_are_the_transformers_engines(engines, tasks):
    """Stop tokens picked from the free-running replies end the rows at different steps (one row
    runs to the cap): same kept tokens (the stop token included), texts and finish reasons."""
    ours, theirs, stops, seen = stops_and_finishes(*engines, tasks)
    rows = prompt_rows(engines[1].tokenizer, tasks)
    assert [(c.token_ids, c.text, c.finish_reason) for c in ours] == [(c.token_ids, c.text, c.finish_reason) for c in theirs]
    assert {c.finish_reason for c in ours} == {"eos", "length"} and ours[-1].finish_reason == "length"
    assert seen[-1] == (len(rows), len(rows)) and len(seen) == len(rows)


def test_seeded_sampling_is_reproducible_per_request_whatever_the_batch(engines, tasks):
    engine, _ = engines
    config = GenerateConfig(temperature=0.8, top_p=0.95, n_samples=2, seed=1, batch_size=3, max_new_tokens=10, one_shot=False)
    first = generate(tasks, config, engine=engine)
    narrow = generate(tasks, GenerateConfig(**{**config.to_dict(), "batch_size": 1}), engine=engine)
    other = generate(tasks, GenerateConfig(**{**config.to_dict(), "seed": 2}), engine=engine)
    greedy = generate(tasks, GenerateConfig(max_new_tokens=10, one_shot=False), engine=engine)

    def replies(result):
        return [g.reply for samples in result.generations.values() for g in samples]

    assert replies(first) == replies(narrow)  # a request's seed, not its batch, draws its reply
    assert replies(first) != replies(other)
    assert replies(first)[::2] != replies(greedy)
    assert len(set(replies(first))) == len(replies(first))
    stats = first.stats
    assert (stats["engine"], stats["dtype"], stats["weights"], stats["decoding"]) == ("openvino", "float32", "fp32", "openvino-continuous-batching")
    import openvino_genai

    assert stats["engine_version"] == openvino_genai.get_version()


def test_a_lora_adapter_is_merged_then_exported_once(sharp_folder, tmp_path, tasks):
    """A peft adapter with random B (the merge changes the model): the engine's replies are the
    transformers engine's on the adapter, and differ from the base model's."""
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
    engine = OVEngine.load(source, "float32", threads=1, cache_dir=cache, progress=False)
    reference = TransformersEngine.load(source, "float32", "cpu")
    rows = prompt_rows(reference.tokenizer, tasks)[:3]
    requests = [Request(r, i) for i, r in enumerate(rows)]
    merged = [c.token_ids for c in engine.run(requests, GenerateConfig(max_new_tokens=12, batch_size=3))]
    assert merged == [reference.run([r], GenerateConfig(max_new_tokens=12, batch_size=1))[0].token_ids for r in requests]
    plain = TransformersEngine.load(resolve_source(str(sharp_folder)), "float32", "cpu")
    assert merged != [c.token_ids for c in plain.run(requests, GenerateConfig(max_new_tokens=12, batch_size=3))]
    folders = sorted(p.name for p in cache.iterdir())
    assert len(folders) == 1 and source.fingerprint in folders[0]
    record = (cache / folders[0] / "cuset-openvino.json").read_text()
    assert '"kind": "lora"' in record and '"merge_s"' in record
    OVEngine.load(source, "float32", threads=1, cache_dir=cache, progress=False)  # no second export
    assert sorted(p.name for p in cache.iterdir()) == folders


def test_the_registry_loads_it_and_its_errors_say_what_to_do(monkeypatch, cache, engines):
    monkeypatch.setattr(ov, "ov_cache_dir", lambda: cache)
    with pytest.raises(ValueError, match=r"dtype='int8' with engine='openvino'"):
        GenerateConfig(engine="openvino", dtype="int8")
    with pytest.raises(EngineError, match=r"runs dtype bfloat16 or float32"):
        ov.check_dtype("float16")
    engine = make_engine(GenerateConfig(model="tiny", engine="openvino", dtype="float32", device="cpu"))
    assert isinstance(engine, OVEngine) and engine.dtype == "float32"
    monkeypatch.setenv("CUSET_OPENVINO_PYTHON", "/nonexistent/python")
    source = resolve_source("tiny")
    with pytest.raises(EngineError, match=r"/nonexistent/python does not exist: run `make openvino`"):
        ov_folder(source, "bfloat16", cache / "elsewhere", progress=False)
    assert not (cache / "elsewhere").exists() or not list((cache / "elsewhere").iterdir())
