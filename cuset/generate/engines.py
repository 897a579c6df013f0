"""Generation engines: transformers (always there, the reference), vLLM (when installed, on a GPU) and
CTranslate2 (cuset.generate.ct2, CPU int8/float32); cuset.generate.registry's `make_engine` picks
one by name (ENGINE_LOADERS).

Both take `Request`s (prompt token ids and a per-sample seed) and return `Completion`s in the
same order. Each sample is drawn from its own seeded RNG, so a sample's reply depends on
(model, prompt, seed, sampling settings) only: not on the batch size or on which other
prompts share its batch.

transformers: prompts are left-padded (decoder-only models continue from the last position)
and sorted by length so a batch pads little. The engine's own decoding loop (`decode`) runs the
model's forward pass step by step on a DynamicCache and drops a row from the batch (its cache,
mask and positions) as soon as it ends its reply, so the rows still writing do not pay for the
finished ones: `model.generate` keeps every row to the batch's longest reply, and on the
cpu-coder passes 17 of 49 replies running to the 1,536-token cap held a pass at full batch cost
for 50 of its 60 minutes. Greedy picks the argmax of the float32 logits, as generate does; for
temperature > 0 the `RowSampler` draws each row's token with that row's own `torch.Generator`.
`TransformersEngine(..., drop_finished=False)` is the reference path: `model.generate` with the
same prompts, stops and sampler (RowSampler as its logits processor), which the tests and
benchmarks.generation compare the loop against token for token. The two are the same
computation at different batch shapes, so they agree token for token exactly where the
arithmetic does not depend on the shape: in float64 on any CPU, but not always in float32
(oneDNN's products on an AMX Xeon round differently at another batch size, and a sampled token
drawn near a boundary flips). The tests therefore compare them in float64; benchmarks.generation
reports the share of identical float32 replies instead of requiring it.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cuset.generate.config import GenerateConfig
from cuset.generate.source import ModelSource, load_model, resolve_source

STOP_TOKENS = ("<|im_end|>", "<|im_start|>", "<|endoftext|>", "<|eot_id|>", "<|end|>")


class EngineError(RuntimeError):
    """An engine cannot run here (e.g. vLLM is not installed); the message says what to do."""


@dataclass(frozen=True)
class Request:
    """One reply to draw: the rendered prompt's token ids and the sample's seed."""

    prompt_ids: list[int]
    seed: int


@dataclass(frozen=True)
class Completion:
    """The reply's token ids (up to and including a stop token), its text (special tokens
    removed), "eos" or "length", and its share of the batch's wall time in seconds."""

    token_ids: list[int]
    text: str
    finish_reason: str
    seconds: float


class Engine(Protocol):
    name: str
    tokenizer: Any
    source: ModelSource | None

    def context_length(self) -> int | None: ...

    def run(self, requests: Sequence[Request], config: GenerateConfig, progress: Callable[[int, int], None] | None = None) -> list[Completion]: ...


def nucleus(logits: Any, temperature: float, top_p: float) -> tuple[Any, Any]:
    """The nucleus of each row, most likely first: (probs [B, k], token ids [B, k]) with the
    probabilities of softmax(logits / temperature) renormalised over the smallest set of
    tokens whose probability reaches `top_p` (the top token always; zeros pad rows whose
    nucleus is smaller than k). top_p = 1 keeps every token."""
    import torch

    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p >= 1.0:
        ids = torch.arange(probs.shape[-1], device=probs.device).expand_as(probs)
        return probs, ids
    # The nucleus of a trained model is usually a few tokens: rank only the top k, widening k
    # until those hold top_p of every row (a full sort of 50k entries costs ~10x more).
    vocab, k = probs.shape[-1], min(64, probs.shape[-1])
    while True:
        top, ids = probs.topk(k, dim=-1)
        if k == vocab or bool((top.sum(dim=-1) >= top_p).all()):
            break
        k = min(vocab, k * 8)
    before = top.cumsum(dim=-1) - top  # probability of the tokens ranked above each
    top = top.masked_fill(before >= top_p, 0.0)
    return top / top.sum(dim=-1, keepdim=True), ids


def nucleus_probs(logits: Any, temperature: float, top_p: float) -> Any:
    """The sampling distribution [B, V] of `nucleus`, zero outside each row's nucleus."""
    import torch

    top, ids = nucleus(logits, temperature, top_p)
    return torch.zeros(logits.shape, dtype=top.dtype, device=top.device).scatter_(-1, ids, top)


class RowSampler:
    """A logits processor that samples row r with its own generator seeded `seeds[r]`.

    It returns scores that are 0 at the drawn token and -inf elsewhere, so generate's greedy
    step picks exactly that token."""

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float) -> None:
        self.seeds = list(seeds)
        self.temperature = temperature
        self.top_p = top_p
        self.generators: list[Any] = []

    def keep(self, rows: Sequence[int]) -> None:
        """Go on with only these rows of the batch (in this order): a row's generator goes with it."""
        self.seeds = [self.seeds[r] for r in rows]
        if self.generators:
            self.generators = [self.generators[r] for r in rows]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if not self.generators:
            self.generators = [torch.Generator(device=scores.device).manual_seed(s) for s in self.seeds]
        probs, ids = nucleus(scores, self.temperature, self.top_p)
        picks = torch.cat([ids[r, torch.multinomial(probs[r], 1, generator=g)] for r, g in enumerate(self.generators)])
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, picks[:, None], 0.0)


class ReplyCounter:
    """A stopping criterion that stops nothing: it counts the rows of a batch that have produced
    an end token and reports `progress(done_before + ended, total)` each time that count grows,
    so a wide batch shows replies finishing while it runs instead of only at its end."""

    def __init__(self, stops: Sequence[int], done_before: int, total: int, progress: Callable[[int, int], None]) -> None:
        self.stops = list(stops)
        self.done_before, self.total, self.progress = done_before, total, progress
        self.ended: Any = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        last = input_ids[:, -1]
        hit = torch.isin(last, torch.tensor(self.stops, device=last.device))
        before = 0 if self.ended is None else int(self.ended.sum())
        self.ended = hit if self.ended is None else (self.ended | hit)
        if int(self.ended.sum()) > before:
            self.progress(self.done_before + int(self.ended.sum()), self.total)
        return torch.zeros_like(last, dtype=torch.bool)


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    """(input_ids, attention_mask), both [B, W] int64, rows right-aligned."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        ids[index, width - len(row) :] = torch.tensor(row, dtype=torch.long)
        mask[index, width - len(row) :] = 1
    return ids, mask


def stop_token_ids(tokenizer: Any, model: Any = None) -> list[int]:
    """Ids that end a reply: the tokenizer's and the model's eos, and chat-turn markers the
    vocabulary has (a model that opens a new turn has finished its reply)."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    config = getattr(model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None)
    ids |= set(eos) if isinstance(eos, list | tuple) else {eos}
    vocab = tokenizer.get_vocab()
    ids |= {vocab[t] for t in STOP_TOKENS if t in vocab}
    return sorted(i for i in ids if isinstance(i, int))


def _completion(tokens: list[int], stops: set[int], tokenizer: Any, seconds: float) -> Completion:
    end = next((i for i, t in enumerate(tokens) if t in stops), None)
    kept = tokens if end is None else tokens[: end + 1]
    text = tokenizer.decode(kept if end is None else kept[:-1], skip_special_tokens=True)
    return Completion(kept, text, "length" if end is None else "eos", seconds)


class TransformersEngine:
    """Batched `model.generate` on a loaded model (see the module docstring)."""

    name = "transformers"

    def __init__(self, model: Any, tokenizer: Any, source: ModelSource | None = None, drop_finished: bool = True) -> None:
        import transformers

        self.version = transformers.__version__
        self.model = model
        self.drop_finished = drop_finished  # False: model.generate, the reference path
        self.tokenizer = tokenizer
        self.source = source
        self.dtype = str(getattr(model, "dtype", "")).removeprefix("torch.")
        self.stops = stop_token_ids(tokenizer, model)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.stops[0])

    @classmethod
    def load(cls, source: ModelSource | str, dtype: str = "float32", device: str = "auto") -> TransformersEngine:
        source = resolve_source(source) if isinstance(source, str) else source
        return cls(*load_model(source, dtype, device), source=source)

    def context_length(self) -> int | None:
        return getattr(self.model.config, "max_position_embeddings", None)

    @property
    def decoding(self) -> str:
        """How runs decode, as their stats record it: 'loop' (ended rows dropped) or 'generate'."""
        return "loop" if self.drop_finished else "generate"

    def run(self, requests: Sequence[Request], config: GenerateConfig, progress: Callable[[int, int], None] | None = None) -> list[Completion]:
        from cuset import bf16

        order = sorted(range(len(requests)), key=lambda i: len(requests[i].prompt_ids))
        results: list[Completion | None] = [None] * len(requests)
        device = next(self.model.parameters()).device
        # One bf16 mode for all batches: on a CPU without bf16 products, the weights' float32 copies
        # are made once (cuset.bf16).
        with bf16.cpu_matmuls(self.dtype, device.type, self.model):
            for begin in range(0, len(order), config.batch_size):
                batch = order[begin : begin + config.batch_size]
                prompts = [requests[i].prompt_ids for i in batch]
                sampler = None if config.greedy else RowSampler([requests[i].seed for i in batch], config.temperature, config.top_p)
                ended = None
                if progress:
                    ended = lambda n, begin=begin: progress(begin + n, len(requests))  # noqa: E731
                started = time.perf_counter()
                step = self.decode if self.drop_finished else self.generate
                new = step(prompts, config.max_new_tokens, sampler, device, ended)
                share = (time.perf_counter() - started) / len(batch)
                for row, index in enumerate(batch):
                    results[index] = _completion(new[row], set(self.stops), self.tokenizer, share)
                if progress:
                    progress(begin + len(batch), len(requests))
        return [r for r in results if r is not None]

    def decode(self, prompts: Sequence[Sequence[int]], max_new_tokens: int, sampler: RowSampler | None, device: Any,
               ended: Callable[[int], None] | None = None) -> list[list[int]]:
        """Each prompt's new token ids (up to and including its first stop token, or
        max_new_tokens of them), decoded together; a row leaves the batch when it stops.
        `ended(n)` is told each time the count n of stopped rows grows."""
        import torch
        from transformers import DynamicCache

        ids, mask = left_pad(prompts, self.pad_id)
        ids, mask = ids.to(device), mask.to(device)
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        # As generate does: no mask at all when no prompt is padded (SDPA's causal path).
        padded = not bool(mask.all())
        stops = torch.tensor(self.stops, device=device)
        replies: list[list[int]] = [[] for _ in prompts]
        live = list(range(len(prompts)))  # the batch's rows, as indices into prompts
        cache = DynamicCache(config=self.model.config)
        # The prompt's last position as an index tensor, not logits_to_keep=1: the slice that 1 makes
        # is a strided view, and for weights that do not require grad (a merged LoRA) torch's matmul
        # then runs the output layer as a bmm on a per-row copy of its weight: 49 rows of coder-1.5b's
        # 467 MB lm_head, ~23 GB, which OOM-killed its evaluation. Indexing copies the rows instead.
        last = torch.tensor([ids.shape[1] - 1], device=device)
        with torch.inference_mode():
            out = self.model(input_ids=ids, attention_mask=mask if padded else None, position_ids=positions,
                             past_key_values=cache, use_cache=True, logits_to_keep=last)
            for step in range(max_new_tokens):
                scores = out.logits[:, -1, :].float()
                token = scores.argmax(-1) if sampler is None else sampler(None, scores).argmax(-1)
                for row, t in zip(live, token.tolist()):
                    replies[row].append(t)
                if step + 1 == max_new_tokens:
                    break
                done = torch.isin(token, stops)
                if bool(done.any()):
                    keep = (~done).nonzero().squeeze(-1)
                    live = [live[k] for k in keep.tolist()]
                    if ended:
                        ended(len(prompts) - len(live))
                    if not live:
                        break
                    token, mask, positions = token[keep], mask[keep], positions[keep]
                    cache.batch_select_indices(keep)
                    if sampler is not None:
                        sampler.keep(keep.tolist())
                mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=-1)
                positions = positions[:, -1:] + 1
                out = self.model(input_ids=token[:, None], attention_mask=mask if padded else None, position_ids=positions,
                                 past_key_values=cache, use_cache=True, logits_to_keep=1)
        return replies

    def generate(self, prompts: Sequence[Sequence[int]], max_new_tokens: int, sampler: RowSampler | None, device: Any,
                 ended: Callable[[int], None] | None = None) -> list[list[int]]:
        """`decode` through `model.generate` (the reference path): every row runs until the
        batch's last one stops; the tokens a row makes after its stop are dropped by the caller."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        generation = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, eos_token_id=self.stops, pad_token_id=self.pad_id)
        ids, mask = left_pad(prompts, self.pad_id)
        processors = LogitsProcessorList([sampler]) if sampler is not None else None
        watch = StoppingCriteriaList([ReplyCounter(self.stops, 0, len(prompts), lambda n, _total: ended(n))]) if ended else None
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids.to(device), attention_mask=mask.to(device), generation_config=generation, logits_processor=processors,
                stopping_criteria=watch,
            )
        return out[:, ids.shape[1] :].tolist()


class VLLMEngine:
    """vLLM on a GPU. A LoRA adapter is merged once into a full model folder in the
    workspace cache (keyed by its fingerprint), which vLLM then loads like any model: no
    limits on adapter rank or target modules."""

    name = "vllm"

    def __init__(self, source: ModelSource, dtype: str = "float32") -> None:
        if importlib.util.find_spec("vllm") is None:
            raise EngineError(
                "engine='vllm' but vLLM is not installed: `pip install vllm` on a machine with a CUDA GPU, "
                "or use engine='transformers' (or 'auto', which falls back to it)."
            )
        import vllm
        from transformers import AutoTokenizer

        self.source = source
        self.dtype = dtype
        self.version = vllm.__version__
        path = merged_folder(source, dtype) if source.kind == "lora" else source.path
        self.tokenizer = AutoTokenizer.from_pretrained(source.tokenizer)
        self.llm = vllm.LLM(model=path, tokenizer=source.tokenizer, dtype=dtype)
        self.stops = stop_token_ids(self.tokenizer)

    def context_length(self) -> int | None:
        return int(self.llm.llm_engine.model_config.max_model_len)

    def run(self, requests: Sequence[Request], config: GenerateConfig, progress: Callable[[int, int], None] | None = None) -> list[Completion]:
        from vllm import SamplingParams

        results = []
        for begin in range(0, len(requests), config.batch_size):
            batch = requests[begin : begin + config.batch_size]
            params = [
                SamplingParams(
                    n=1, temperature=config.temperature, top_p=1.0 if config.greedy else config.top_p, seed=r.seed,
                    max_tokens=config.max_new_tokens, stop_token_ids=self.stops, skip_special_tokens=True,
                )
                for r in batch
            ]
            started = time.perf_counter()
            outputs = self.llm.generate([{"prompt_token_ids": r.prompt_ids} for r in batch], params, use_tqdm=False)
            share = (time.perf_counter() - started) / len(batch)
            for output in outputs:
                best = output.outputs[0]
                finish = "length" if best.finish_reason == "length" else "eos"
                results.append(Completion(list(best.token_ids), best.text, finish, share))
            if progress:
                progress(begin + len(batch), len(requests))
        return results


def merged_folder(source: ModelSource, dtype: str) -> str:
    """A LoRA source merged into full weights, saved once under workspace/cache/merged/."""
    from cuset.models import _atomic_folder
    from cuset.workspace import workspace_dir

    def build(tmp: Any) -> None:
        model, tokenizer = load_model(source, dtype, "cpu")
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)

    return str(_atomic_folder(workspace_dir() / "cache" / "merged" / f"{source.fingerprint}-{dtype}", build))
