"""One generation run: tasks in, `Generation` records out, saved next to their config.

    result = generate({"relu": Path("relu.py").read_text()}, GenerateConfig(model="job:3"))
    result.generations["relu"][0].code
    result.save("runs/gen-1")        # generate.yaml, model.json, generations.jsonl
    GenerateResult.load("runs/gen-1")
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cuset.generate.config import GenerateConfig
from cuset.generate.engines import Engine, Request
from cuset.generate.kernel_only import build_prompt as kernel_prompt
from cuset.generate.kernel_only import extraction, wrappers_of
from cuset.generate.prompts import build_prompt, encode_prompt, load_one_shot, render_prompt
from cuset.generate.registry import make_engine
from cuset.generate.source import resolve_source


@dataclass
class Generation:
    """One reply to one task.

    reply        the model's text (special tokens removed)
    code         the extracted solution module ("" when none; see `extraction_reason`)
    extraction   how it was found: "fence", "open_fence", "bare" or "none"
    n_tokens     reply tokens, a final stop token included; n_prompt_tokens likewise for the prompt
    seconds      this reply's share of its batch's wall time
    finish_reason  "eos" (the model ended its turn) or "length" (cut at max_new_tokens)
    seed         the sample's own seed (derived from the run's seed, the task id and `sample`)
    """

    task_id: str
    sample: int
    reply: str
    code: str
    extraction: str
    extraction_reason: str
    syntax_ok: bool
    n_tokens: int
    n_prompt_tokens: int
    seconds: float
    finish_reason: str
    seed: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sample_seed(seed: int, task_id: str, index: int) -> int:
    """A 63-bit seed for sample `index` of a task: the same for the same triple everywhere."""
    digest = hashlib.sha256(f"{seed}\x1f{task_id}\x1f{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass
class GenerateResult:
    """Replies per task (task id -> samples in index order), the config and model that made
    them, and run statistics (n_replies, n_tokens, seconds, tokens_per_s, engine, finish counts)."""

    generations: dict[str, list[Generation]]
    config: GenerateConfig
    model: dict[str, Any]
    stats: dict[str, Any] = field(default_factory=dict)

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.config.save(folder / "generate.yaml")
        (folder / "model.json").write_text(json.dumps({"model": self.model, "stats": self.stats}, indent=2))
        lines = (json.dumps(g.to_json(), ensure_ascii=False) + "\n" for samples in self.generations.values() for g in samples)
        (folder / "generations.jsonl").write_text("".join(lines))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> GenerateResult:
        folder = Path(folder)
        config = GenerateConfig.load(folder / "generate.yaml")
        meta = json.loads((folder / "model.json").read_text())
        generations: dict[str, list[Generation]] = {}
        for line in (folder / "generations.jsonl").read_text().splitlines():
            record = Generation(**json.loads(line))
            generations.setdefault(record.task_id, []).append(record)
        return cls(generations, config, meta["model"], meta["stats"])


def _requests(tasks: Mapping[str, str], config: GenerateConfig, tokenizer: Any,
              wrappers: Mapping[str, Any] | None = None) -> tuple[list[tuple[str, int]], list[Request]]:
    example = load_one_shot(config.one_shot)
    keys, requests = [], []
    for task_id, text in tasks.items():
        try:
            if wrappers is not None:
                messages = kernel_prompt(text, wrappers[task_id], example)
            else:
                messages = build_prompt(text, example, config.prompt_variant)
        except ValueError as exc:
            raise ValueError(f"task {task_id!r}: {exc}") from None
        ids = encode_prompt(render_prompt(messages, tokenizer), tokenizer)
        for index in range(config.n_samples):
            keys.append((task_id, index))
            requests.append(Request(ids, sample_seed(config.seed, task_id, index)))
    return keys, requests


MIN_REPLY_TOKENS = 64


def _check_context(keys: list[tuple[str, int]], requests: list[Request], config: GenerateConfig, limit: int | None) -> GenerateConfig:
    """The config to generate with: max_new_tokens cut to what the model's context leaves after
    the longest prompt (replies then end as "length"); an error when that leaves too little."""
    if limit is None or not requests:
        return config
    longest = max(range(len(requests)), key=lambda i: len(requests[i].prompt_ids))
    need = len(requests[longest].prompt_ids) + config.max_new_tokens
    room = limit - len(requests[longest].prompt_ids)
    if need > limit and room >= MIN_REPLY_TOKENS:
        return replace(config, max_new_tokens=room)
    if need > limit:
        raise ValueError(
            f"task {keys[longest][0]!r}: a {len(requests[longest].prompt_ids)}-token prompt plus max_new_tokens={config.max_new_tokens} "
            f"exceeds the model's {limit}-token context. Lower max_new_tokens, or set one_shot=false for a shorter prompt."
        )
    return config


def generate(
    tasks: Mapping[str, str],
    config: GenerateConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine: Engine | None = None,
    references: Mapping[str, str] | None = None,
) -> GenerateResult:
    """Generate `config.n_samples` replies for every task (task id -> KernelBench module text).

    `progress(done, total)` counts replies (the CLI passes tqdm, the app a progress bar).
    `engine` reuses a loaded model (`make_engine(config)`); by default one is loaded.
    Under `config.protocol` kernel-only, `references` (task id -> reference solution) give each
    task's wrapper, and each Generation's code is the wrapper with the reply's CUDA source."""
    config = config or GenerateConfig()
    if not tasks:
        raise ValueError("No tasks to generate for: pass {task_id: task module text}.")
    wrappers = None
    if config.protocol == "kernel-only":
        wrappers = wrappers_of({t: (references or {}).get(t, "") for t in tasks})
    engine = engine or make_engine(config, resolve_source(config.model))
    keys, requests = _requests(tasks, config, engine.tokenizer, wrappers)
    config = _check_context(keys, requests, config, engine.context_length())
    started = time.perf_counter()
    completions = engine.run(requests, config, progress)
    seconds = time.perf_counter() - started
    generations: dict[str, list[Generation]] = {task_id: [] for task_id in tasks}
    for (task_id, index), request, done in zip(keys, requests, completions):
        found = extraction(done.text, wrappers[task_id] if wrappers is not None else None)
        generations[task_id].append(
            Generation(task_id, index, done.text, found.code, found.method, found.reason, found.syntax_ok,
                       len(done.token_ids), len(request.prompt_ids), done.seconds, done.finish_reason, request.seed)
        )
    n_tokens = sum(len(c.token_ids) for c in completions)
    stats = {
        "n_tasks": len(tasks),
        "n_replies": len(completions),
        "n_tokens": n_tokens,
        "seconds": round(seconds, 3),
        "tokens_per_s": n_tokens / seconds if seconds > 0 else 0.0,
        "finished_eos": sum(c.finish_reason == "eos" for c in completions),
        "with_code": sum(bool(g.code) for samples in generations.values() for g in samples),
        "engine": engine.name,
        "engine_version": getattr(engine, "version", None),
        "decoding": getattr(engine, "decoding", engine.name),
        "dtype": getattr(engine, "dtype", config.dtype),
        "weights": getattr(engine, "weights", getattr(engine, "dtype", config.dtype)),  # as stored, where it differs (openvino: fp16)
        "batch_size": config.batch_size,
        "protocol": config.protocol,
    }
    model = engine.source.to_dict() if engine.source is not None else {"spec": config.model}
    return GenerateResult(generations, config, model, stats)
