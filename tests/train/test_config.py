"""TrainConfig: presets, validation, YAML/JSON round trip, and the CLI's precedence rules."""

from __future__ import annotations

import pytest
import yaml

from cuset import models
from cuset.cli import build_parser, main
from cuset.confidence import ScoreConfig, render
from cuset.data import load
from cuset.objective import ObjectiveConfig, save_named
from cuset.train import PRESETS, TrainConfig
from cuset.train.commands import train_config_from_args


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_loads_and_round_trips(preset, tmp_path):
    config = TrainConfig.from_preset(preset, method="sft")
    for suffix in (".yaml", ".json"):
        path = config.save(tmp_path / f"c{suffix}")
        assert TrainConfig.load(path) == config
    assert config.preset == preset


def test_resolved_inlines_the_objective_and_decides_bf16():
    save_named("q40", ObjectiveConfig(quantile=0.4))
    resolved = TrainConfig.from_preset("tiny", objective="q40", bf16=None).resolved()
    assert resolved.objective["quantile"] == 0.4
    assert isinstance(resolved.bf16, bool)
    assert TrainConfig.from_dict(yaml.safe_load(yaml.safe_dump(resolved.to_dict()))) == resolved


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"method": "ppo"}, "use one of sft"),
        ({"batch_size": 0}, "batch_size and grad_accum"),
        ({"max_steps": 0, "epochs": 0}, "nothing to do"),
        ({"report_to": ["neptune"]}, "unknown logger"),
        ({"lora_rank": 8}, "unknown field"),
        ({"objective": {"quantile": 2.0}}, "quantile=2.0"),
        ({"overlength": "truncate"}, "use one of drop, cut"),
        ({"profit_threshold": 1.0}, "profit_threshold=1.0"),
        ({"slm_fraction": 0.0}, "slm_fraction=0.0"),
    ],
)
def test_bad_values_say_how_to_fix_them(values, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict({**TrainConfig().to_dict(), **values})


def test_unknown_objective_name_lists_the_saved_ones():
    with pytest.raises(ValueError, match="No saved objective config 'nope'"):
        TrainConfig.from_preset("tiny", objective="nope").resolved()


def test_cli_precedence_preset_then_file_then_flags(tmp_path):
    path = TrainConfig.from_preset("tiny", lr=0.5, seed=7).save(tmp_path / "t.yaml")
    args = build_parser().parse_args(["train", "--train-config", str(path), "--seed", "9", "--method", "dft"])
    config = train_config_from_args(args)
    assert (config.preset, config.lr, config.seed, config.method) == ("tiny", 0.5, 9, "dft")
    args = build_parser().parse_args(["train", "--preset", "cpu", "--max-steps", "3", "--no-bf16", "--report-to", "tensorboard"])
    config = train_config_from_args(args)
    assert (config.model, config.max_steps, config.bf16, config.report_to) == ("smollm2-135m", 3, False, ["tensorboard"])
    args = build_parser().parse_args(["train", "--preset", "cpu-coder", "--method", "slm", "--overlength", "cut", "--slm-fraction", "0.7"])
    config = train_config_from_args(args)
    assert (config.model, config.method, config.overlength, config.slm_fraction) == ("coder-0.5b", "slm", "cut", 0.7)


def test_cli_dry_run_prints_the_resolved_config(capsys):
    assert main(["train", "--preset", "tiny", "--method", "token-mask", "--dry-run"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["method"] == "token-mask" and printed["model"] == "tiny"
    assert printed["objective"]["policy"] == "protect_regions"


def test_cli_rejects_a_bad_config_with_status_2(capsys):
    assert main(["train", "--preset", "tiny", "--batch-size", "0", "--dry-run"]) == 2
    assert "batch_size" in capsys.readouterr().err


def local_tokenizer(name: str):
    """(tokenizer, resolved) of an embedded or local model; skips when it is not on this machine."""
    try:
        resolved = models.resolve(name)
    except models.ModelError as exc:
        pytest.skip(f"model {name!r} is not prepared on this machine: {exc}")
    if not resolved.local:
        pytest.skip(f"model {name!r} is not an embedded model on this machine yet (it resolves to the hub id {resolved.source!r})")
    return models.load_tokenizer(name)


def _by_model_size(preset: str):
    """A preset whose model `make setup` does not prepare (the gpu preset's coder-1.5b: a 1.1 GB
    download on first use, ~2.5 min here) runs with `pytest -m heavy`, the others in `make test`."""
    heavy = not models.prepared_by_setup(TrainConfig.from_preset(preset).model)
    return pytest.param(preset, marks=pytest.mark.heavy) if heavy else preset


@pytest.mark.parametrize("preset", [_by_model_size(p) for p in sorted(PRESETS)])
def test_no_preset_drops_or_silently_cuts_a_bundled_sample(preset):
    """Every bundled sample, rendered as training renders it, fits the preset's max_length under
    its model's tokenizer; the one preset that cuts (tiny, a random model for fast tests) says so."""
    config = TrainConfig.from_preset(preset)
    if config.overlength == "cut":
        assert preset == "tiny", f"preset {preset} cuts samples: only the test preset may"
        return
    tokenizer, resolved = local_tokenizer(config.model)
    score_config = ScoreConfig(model=config.model, max_length=10**6)
    lengths = [len(render(s, tokenizer, score_config, resolved.fingerprint).input_ids) for s in load("bundled")]
    assert max(lengths) <= config.max_length, f"{sum(n > config.max_length for n in lengths)} samples longer than {config.max_length}"
    if preset.startswith("cpu"):  # on 2 cores every padded token costs: no more room than needed
        assert config.max_length - max(lengths) < 128, f"max_length {config.max_length} is far above the longest sample ({max(lengths)})"
