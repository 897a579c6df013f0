"""GenerateConfig: defaults, validation messages that say how to fix, YAML/JSON round trip."""

from __future__ import annotations

import re

import pytest

from cuset.generate import GenerateConfig, field_help


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("one_shot", [True, False, "corpus:elementwise-relu-guarded-000"])
def test_round_trip(tmp_path, suffix, one_shot):
    config = GenerateConfig(model="job:3@checkpoint-8", n_samples=5, temperature=0.8, top_p=0.9, seed=7, one_shot=one_shot, dtype="bfloat16")
    assert GenerateConfig.load(config.save(tmp_path / f"g{suffix}")) == config


def test_defaults_are_greedy_one_shot_and_every_field_has_help():
    config = GenerateConfig()
    assert config.greedy and config.n_samples == 1 and config.one_shot is True and config.engine == "auto"
    assert all(field_help().values())


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"n_samples": 4}, "Set temperature > 0"),
        ({"n_samples": 0}, "n_samples=0"),
        ({"temperature": -1.0}, "use 0 (greedy)"),
        ({"top_p": 0.0}, "top_p=0.0"),
        ({"max_new_tokens": 0}, "max_new_tokens=0"),
        ({"batch_size": 0}, "batch_size=0"),
        ({"engine": "tgi"}, "auto, transformers, vllm"),
        ({"dtype": "float16"}, "float32, bfloat16"),
        ({"device": "tpu"}, "'cpu', 'cuda'"),
        ({"one_shot": " "}, "empty string"),
        ({"prompt_variant": 4}, "use 0 to 3"),
        ({"model": ""}, "model is empty"),
    ],
)
def test_invalid_values_say_how_to_fix(values, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        GenerateConfig(**values)


def test_unknown_fields_are_named(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("model: tiny\nsamples: 3\n")
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['samples'\].*n_samples"):
        GenerateConfig.load(path)
