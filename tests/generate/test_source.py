"""Model sources: a job's LoRA adapter or full weights, merged logits, and clear errors."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from cuset import models
from cuset.generate import GenerateConfig, generate, load_model, resolve_source
from cuset.jobs import job_folder
from cuset.models import ModelError
from cuset.train import TrainConfig

IDS = torch.tensor([[1, 504, 2385, 28, 3012, 314, 253, 9100, 198]])


def fresh_tiny():
    return AutoModelForCausalLM.from_pretrained(models.resolve("tiny").source).eval()


def lora_adapter(folder, seed: int) -> None:
    """A peft LoRA adapter on the tiny model with random A and B (a real change to the logits,
    unlike a fresh adapter whose B is zero), saved as the recipe saves one."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    config = LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM", init_lora_weights=False)
    get_peft_model(fresh_tiny(), config).save_pretrained(folder)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


@pytest.fixture
def lora_job(workspace):
    """Job 1's folder as a finished LoRA fine-tune leaves it: config.yaml, final/ (adapter and
    tokenizer), checkpoints/checkpoint-2/ (adapter only). No training runs."""
    folder = job_folder(1)
    TrainConfig.from_preset("tiny", lora_r=4, lora_alpha=8).save(folder / "config.yaml")
    lora_adapter(folder / "final", seed=1)
    models.load_tokenizer("tiny")[0].save_pretrained(folder / "final")
    lora_adapter(folder / "checkpoints" / "checkpoint-2", seed=2)
    (folder / "checkpoints" / "checkpoint-2" / "trainer_state.json").write_text("{}")
    return folder


def logits(model):
    with torch.inference_mode():
        return model(input_ids=IDS).logits


def test_a_job_lora_adapter_is_merged_into_its_base(lora_job):
    from peft import PeftModel

    source = resolve_source("job:1")
    assert (source.kind, source.base, source.job_id, source.checkpoint) == ("lora", "tiny", 1, "final")
    assert source.path == str(lora_job / "final") and source.tokenizer == str(lora_job / "final")
    merged, tokenizer = load_model(source, device="cpu")
    assert not any("lora" in name for name, _ in merged.named_parameters())
    unmerged = PeftModel.from_pretrained(fresh_tiny(), lora_job / "final").eval()
    torch.testing.assert_close(logits(merged), logits(unmerged), rtol=1e-4, atol=1e-5)
    assert (logits(merged) - logits(fresh_tiny())).abs().max() > 1e-2  # the adapter does change the model
    assert tokenizer.eos_token == "<|im_end|>"


def test_a_lora_merge_in_bfloat16_is_the_merged_model_loaded_in_bfloat16(lora_job, tmp_path):
    """Casting the float32 merge gives what from_pretrained(dtype=bfloat16) gives on the saved
    merge: bf16 weights, RoPE's inv_freq still float32 (a whole-module cast rounded it to bf16,
    which turns every position's rotation), the same logits."""
    source = resolve_source("job:1")
    merged, _ = load_model(source, "bfloat16", "cpu")
    full, _ = load_model(source, "float32", "cpu")
    full.save_pretrained(tmp_path / "merged")
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path / "merged", dtype=torch.bfloat16).eval()
    buffers = dict(loaded.named_buffers())
    assert buffers and {name: b.dtype for name, b in merged.named_buffers()} == {name: b.dtype for name, b in buffers.items()}
    assert merged.model.rotary_emb.inv_freq.dtype == torch.float32
    assert {p.dtype for p in merged.parameters()} == {torch.bfloat16} and merged.config.dtype == torch.bfloat16
    long = torch.arange(1, 301)[None] % 1000  # positions up to 300, where a bf16 inv_freq parts
    with torch.inference_mode():
        assert torch.equal(merged(input_ids=long).logits, loaded(input_ids=long).logits)


def test_generation_runs_from_a_job_checkpoint(lora_job, tasks):
    task_id, text = next(iter(tasks.items()))
    result = generate({task_id: text}, GenerateConfig(model="job:1@checkpoint-2", max_new_tokens=4, one_shot=False))
    (reply,) = result.generations[task_id]
    assert reply.n_tokens == 4 and reply.finish_reason == "length" and reply.n_prompt_tokens > 100
    assert result.model["kind"] == "lora" and result.model["checkpoint"] == "checkpoint-2"
    assert result.model["tokenizer"] == models.resolve("tiny").source  # checkpoints hold no tokenizer
    assert resolve_source("job:1@last").path == str(lora_job / "checkpoints" / "checkpoint-2")
    assert resolve_source("job:1@checkpoint-2").fingerprint != resolve_source("job:1").fingerprint


def test_full_weights_without_a_tokenizer_take_the_base_tokenizer(workspace):
    folder = job_folder(2)
    TrainConfig.from_preset("tiny", lora_r=0).save(folder / "config.yaml")
    fresh_tiny().save_pretrained(folder / "checkpoints" / "checkpoint-3")
    source = resolve_source("job:2@checkpoint-3")
    assert (source.kind, source.tokenizer) == ("full", models.resolve("tiny").source)
    model, _ = load_model(source, device="cpu")
    torch.testing.assert_close(logits(model), logits(fresh_tiny()))


def test_a_lora_folder_outside_a_job_names_its_base(tmp_path):
    lora_adapter(tmp_path / "adapter", seed=3)
    source = resolve_source(str(tmp_path / "adapter"))
    assert source.kind == "lora" and models.resolve(source.base).source == models.resolve("tiny").source
    assert resolve_source("tiny").kind == "base"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("job:7", r"job 7 has no folder .*jobs here: 1"),
        ("job:x", r"numeric id"),
        ("job:1@checkpoint-9", r"job 1 has no checkpoint 'checkpoint-9'.*its checkpoints: checkpoint-2 \(use 'job:1@checkpoint-2'\)"),
        ("job:1@best", r"no checkpoint 'best'"),
    ],
)
def test_missing_jobs_and_checkpoints_are_named(lora_job, spec, message):
    with pytest.raises(ModelError, match=message):
        resolve_source(spec)


def test_an_unfinished_job_offers_its_checkpoints(lora_job, tmp_path):
    (lora_job / "final").rename(tmp_path / "moved")
    with pytest.raises(ModelError, match=r"job 1 has no final model .*not finished, or failed.*job:1@checkpoint-2"):
        resolve_source("job:1")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="neither config.json .* nor adapter_config.json"):
        resolve_source(str(tmp_path / "empty"))
