"""Generation runs on tiny models: determinism, batching, seeds, n_samples, records, limits."""

from __future__ import annotations

import pytest

from cuset.generate import GenerateConfig, GenerateResult, generate, sample_seed

SHORT = {"max_new_tokens": 8, "one_shot": False}


def replies(result: GenerateResult) -> list[str]:
    return [g.reply for samples in result.generations.values() for g in samples]


def test_greedy_is_deterministic_and_batched_equals_unbatched(sharp_engine, tasks):
    batched = generate(tasks, GenerateConfig(batch_size=3, **SHORT), engine=sharp_engine)
    again = generate(tasks, GenerateConfig(batch_size=3, **SHORT), engine=sharp_engine)
    alone = generate(tasks, GenerateConfig(batch_size=1, **SHORT), engine=sharp_engine)
    assert replies(batched) == replies(again) == replies(alone)
    assert len(set(replies(batched))) == len(tasks)  # replies depend on the prompt


def test_greedy_with_the_one_shot_prompt_and_the_stock_tiny_model(tiny, tasks):
    from cuset.generate import TransformersEngine

    engine = TransformersEngine(tiny[0], tiny[1])
    config = GenerateConfig(model="tiny", batch_size=2, max_new_tokens=4)
    first, second = (generate(tasks, config, engine=engine) for _ in range(2))
    assert replies(first) == replies(second)
    assert all(g.n_prompt_tokens > 1000 for samples in first.generations.values() for g in samples)  # example + task


def test_sampling_is_reproducible_per_seed_and_independent_of_batching(sharp_engine, tasks):
    config = GenerateConfig(temperature=0.7, top_p=0.9, n_samples=2, seed=1, batch_size=6, **SHORT)
    first = generate(tasks, config, engine=sharp_engine)
    regrouped = generate(tasks, GenerateConfig(**{**config.to_dict(), "batch_size": 4}), engine=sharp_engine)
    other_seed = generate(tasks, GenerateConfig(**{**config.to_dict(), "seed": 2}), engine=sharp_engine)
    assert replies(first) == replies(regrouped)  # batches [a0 a1 b0 b1 c0 c1] vs [a0 a1 b0 b1] [c0 c1]
    assert replies(first) != replies(other_seed)
    greedy = generate(tasks, GenerateConfig(**SHORT), engine=sharp_engine)
    assert replies(first)[::2] != replies(greedy)


def test_n_samples_gives_distinct_samples_with_their_own_seeds(sharp_engine, tasks):
    progress: list[tuple[int, int]] = []
    config = GenerateConfig(temperature=0.7, n_samples=3, batch_size=4, **SHORT)
    result = generate(tasks, config, progress=lambda done, total: progress.append((done, total)), engine=sharp_engine)
    for task_id, samples in result.generations.items():
        assert [g.sample for g in samples] == [0, 1, 2] and {g.task_id for g in samples} == {task_id}
        assert [g.seed for g in samples] == [sample_seed(config.seed, task_id, i) for i in range(3)]
        assert len({g.reply for g in samples}) == 3
        assert all(g.n_tokens == 8 and g.finish_reason == "length" and g.seconds > 0 for g in samples)
        assert all(g.code == "" and g.extraction == "none" and g.extraction_reason for g in samples)
    assert progress == [(4, 9), (8, 9), (9, 9)]
    assert result.stats["n_replies"] == 9 and result.stats["n_tokens"] == 72 and result.stats["engine"] == "transformers"
    assert result.stats["decoding"] == "loop"


def test_a_result_round_trips_through_its_folder(sharp_engine, tasks, tmp_path):
    result = generate(tasks, GenerateConfig(**SHORT), engine=sharp_engine)
    loaded = GenerateResult.load(result.save(tmp_path / "run"))
    assert loaded.generations == result.generations and loaded.config == result.config and loaded.stats == result.stats


def test_replies_are_cut_to_the_context_and_prompts_that_do_not_fit_are_refused(sharp_engine, tasks):
    from cuset.generate.run import _check_context, _requests

    keys, requests = _requests(tasks, GenerateConfig(), sharp_engine.tokenizer)
    longest = max(len(r.prompt_ids) for r in requests)
    cut = _check_context(keys, requests, GenerateConfig(max_new_tokens=1500), 2048)
    assert cut.max_new_tokens == 2048 - longest  # what the context leaves after the longest prompt
    with pytest.raises(ValueError, match=r"exceeds the model's \d+-token context.*one_shot=false"):
        _check_context(keys, requests, GenerateConfig(max_new_tokens=1500), longest + 10)
    with pytest.raises(ValueError, match=r"task 'empty': The task text is empty"):
        generate({"empty": ""}, GenerateConfig(**SHORT), engine=sharp_engine)
    with pytest.raises(ValueError, match="No tasks"):
        generate({}, GenerateConfig(**SHORT), engine=sharp_engine)


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_the_decoding_loop_drops_ended_rows_and_replies_as_generate_does(sharp_engine, tasks, temperature):
    """The engine's loop against model.generate (the reference path) on one batch whose rows end
    at different steps: same tokens, same finish reasons, and the stop counts reported."""
    from cuset.generate import TransformersEngine
    from cuset.generate.engines import Request

    model, tokenizer = sharp_engine.model, sharp_engine.tokenizer
    rows = [tokenizer(t, add_special_tokens=False).input_ids[-60 + 9 * i :] for i, t in enumerate([*tasks.values()] * 2)]
    requests = [Request(r, 100 + i) for i, r in enumerate(rows)]
    config = GenerateConfig(max_new_tokens=24, temperature=temperature, batch_size=len(rows))
    reference = TransformersEngine(model, tokenizer, drop_finished=False)
    reference.stops = [len(tokenizer)]  # an id the model never writes: every row runs 24 tokens
    free = [c.token_ids for c in reference.run(requests, config)]
    # Stop tokens that end the rows at different steps, one of them (the last row's) at the cap:
    # row r stops at the first token from position 2 + 3r on that no row wrote earlier in its reply.
    stops: set[int] = set()
    for r, reply in enumerate(free[:-1]):
        stops |= {next(t for t in reply[2 + 3 * r :] if t not in free[-1] and all(t not in other[: 2 + 3 * r] for other in free))}
    seen: dict[str, list[tuple[int, int]]] = {}
    replies = {}
    for name, drop in (("generate", False), ("loop", True)):
        engine = TransformersEngine(model, tokenizer, drop_finished=drop)
        engine.stops = sorted(stops)
        seen[name] = []
        replies[name] = engine.run(requests, config, progress=lambda d, n, name=name: seen[name].append((d, n)))
    assert [(c.token_ids, c.finish_reason) for c in replies["loop"]] == [(c.token_ids, c.finish_reason) for c in replies["generate"]]
    ends = {len(c.token_ids) for c in replies["loop"] if c.finish_reason == "eos"}
    assert len(ends) >= 3 and (replies["loop"][-1].finish_reason, len(replies["loop"][-1].token_ids)) == ("length", 24)
    assert [c[: len(r.token_ids)] for c, r in zip(free, replies["loop"])] == [c.token_ids for c in replies["loop"]]
    assert seen["loop"] == seen["generate"] and seen["loop"][-1] == (len(rows), len(rows))
