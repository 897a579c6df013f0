"""What the generation tests share: a few corpus tasks, and a tiny model whose greedy replies
depend on the prompt (the stock tiny model's near-uniform logits make it repeat one token)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="package", autouse=True)
def _one_thread():
    """One torch thread: the tiny model's matrices are too small to gain from more, and on a
    shared 2-core machine OpenMP threads spinning at barriers made these tests ~4x slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def corpus():
    from cuset.data import load

    return load("bundled")


@pytest.fixture(scope="session")
def tasks(corpus) -> dict[str, str]:
    """Three tasks of different prompt lengths (so left padding is exercised)."""
    return {s.id: s.task for s in (corpus[0], corpus[40], corpus[120])}


@pytest.fixture(scope="session")
def sharp_engine():
    """A fresh copy of the tiny model with its matrices redrawn at std 0.15: peaked, prompt-
    dependent next-token distributions, so greedy and sampled replies differ between tasks.

    In float64: the tests below compare replies decoded at different batch shapes (batch 3
    against batch 1, the loop's shrinking batch against model.generate's full one), and a
    float32 matmul's rounding depends on the shape on some CPUs (oneDNN on an AMX Xeon: a sample
    drawn near a boundary flipped after 14 equal tokens). Float64 rounding errors (~1e-16) are
    lost when the engine casts the logits to float32, so the float32 logits the samplers see
    are the same at every batch shape on any CPU, and "same tokens" is exact by construction."""
    import torch
    from transformers import AutoModelForCausalLM

    from cuset import models
    from cuset.generate import TransformersEngine

    model = AutoModelForCausalLM.from_pretrained(models.resolve("tiny").source, dtype=torch.float64).eval()
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.ndim == 2:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.15)
    return TransformersEngine(model, models.load_tokenizer("tiny")[0])


@pytest.fixture(scope="session")
def sharp_folder(tmp_path_factory):
    """The tiny model with its matrices redrawn at std 0.15 (peaked, prompt-dependent
    distributions, as sharp_engine), saved in float32 as a model folder (for the engines that
    convert a folder: CTranslate2, OpenVINO)."""
    import torch
    from transformers import AutoModelForCausalLM

    from cuset import models

    folder = tmp_path_factory.mktemp("sharp") / "model"
    model = AutoModelForCausalLM.from_pretrained(models.resolve("tiny").source, dtype=torch.float32)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.ndim == 2:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.15)
    model.save_pretrained(folder)
    models.load_tokenizer("tiny")[0].save_pretrained(folder)
    return folder


def prompt_rows(tokenizer, tasks) -> list[list[int]]:
    """Five prompts of different lengths: the tails of the tasks' texts, and two short ones."""
    texts = list(tasks.values())
    rows = [tokenizer(t, add_special_tokens=False).input_ids[-(40 + 25 * i) :] for i, t in enumerate(texts)]
    return rows + [tokenizer("__global__ void relu(", add_special_tokens=False).input_ids, [5, 17, 42, 9]]


def stops_and_finishes(engine, reference, tasks) -> tuple[list, list, set[int], list[tuple[int, int]]]:
    """Both engines run with stop tokens picked from the free-running replies, so the rows end at
    different steps and one runs to the cap: (engine's completions, reference's, the stops,
    the engine's progress calls). The engines' own stops are restored afterwards."""
    from cuset.generate import GenerateConfig
    from cuset.generate.engines import Request

    rows = prompt_rows(reference.tokenizer, tasks)
    requests = [Request(r, i) for i, r in enumerate(rows)]
    config = GenerateConfig(max_new_tokens=20, batch_size=len(rows))
    saved = (engine.stops, reference.stops)
    try:
        engine.stops = reference.stops = [len(reference.tokenizer)]  # an id never written: every row runs 20 tokens
        free = [c.token_ids for c in reference.run(requests, config)]
        stops = {next(t for t in reply[2 + 3 * r :] if t not in free[-1]) for r, reply in enumerate(free[:-1])}
        engine.stops = reference.stops = sorted(stops)
        seen: list[tuple[int, int]] = []
        ours = engine.run(requests, config, progress=lambda d, n: seen.append((d, n)))
        theirs = reference.run(requests, config)
    finally:
        engine.stops, reference.stops = saved
    return ours, theirs, stops, seen
