"""Per-token confidence of a model over sample responses (teacher forcing), cached on disk.

Each sample is rendered with the model's chat template (user = instruction, assistant =
response) and run through the model once; only tokens of the response are scored. Per token:
the gold token id, its character span in the response, the probability and log-probability of
the gold token, the entropy of the predicted distribution (nats), the rank of the gold token
(1 = the model's top choice) and the top-k alternatives with their probabilities.

Samples are batched with length bucketing (similar lengths together, so little padding) under
`torch.inference_mode`. The vocabulary projection is applied only to the positions that predict
response tokens. Results are cached as Parquet per sample, keyed by a hash of (model
fingerprint, rendered text, template, max length), so a data set is scored once. A sequence
longer than `max_length` tokens is cut there and the sample is flagged `truncated`.

    cuset score kernel.cu --model tiny
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cuset.data import Sample
from cuset.sensitivity import CATEGORIES, CATEGORY_BIT, STATEMENT_KINDS, TagResult, tag
from cuset.workspace import workspace_dir

CACHE_VERSION = "1"
STATS_CHUNK = 1024  # rows of the vocabulary projection computed at once
# Scores of the bundled corpus that ship with the package (one Parquet file per model), read as
# a second, read-only layer under the workspace cache: a fresh clone shows data-set views at once.
SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "bundled" / "scores"


@dataclass
class ScoreConfig:
    """How responses are scored."""

    model: str = field(default="default", metadata={"help": "Model name, folder or hub id (see cuset.models)."})
    max_length: int = field(default=2048, metadata={"help": "Longest prompt+response in tokens; longer ones are cut and flagged."})
    batch_size: int = field(default=4, metadata={"help": "Samples per forward pass."})
    top_k: int = field(default=5, metadata={"help": "Alternatives kept per token."})
    dtype: str = field(default="", metadata={"help": "'float32', 'bfloat16', or '' for the model's default (cuset.models.default_score_dtype: bfloat16 for the Qwen coders, ~2.6x faster on CPUs with AMX, top-1 agreement 99.4%)."})
    use_chat_template: bool = field(default=True, metadata={"help": "Render with the tokenizer's chat template."})

    def __post_init__(self) -> None:
        if self.max_length < 8:
            raise ValueError(f"max_length={self.max_length} is too small: use at least 8 tokens.")
        if self.batch_size < 1 or self.top_k < 1:
            raise ValueError("batch_size and top_k must be at least 1.")
        if not self.dtype:
            from cuset.models import default_score_dtype

            self.dtype = default_score_dtype(self.model)
        if self.dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype={self.dtype!r}: use 'float32' or 'bfloat16'.")


@dataclass
class TokenScores:
    """The scores of one sample's response tokens; arrays have shape [n] (topk: [n, k]).

    `starts`/`ends` are character offsets into `sample.response`. `truncated` says the sequence
    was cut at max_length, so the response's tail has no scores.
    """

    sample_id: str
    token_ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    p: np.ndarray
    logp: np.ndarray
    entropy: np.ndarray
    rank: np.ndarray
    topk_ids: np.ndarray
    topk_p: np.ndarray
    truncated: bool = False
    n_prompt_tokens: int = 0

    def __len__(self) -> int:
        return int(self.token_ids.shape[0])

    @classmethod
    def from_columns(cls, sample_id: str, columns: dict[str, np.ndarray], truncated: bool, n_prompt_tokens: int) -> TokenScores:
        """Build from arrays named like the fields, cast to the stored dtypes."""
        return cls(sample_id=sample_id, truncated=truncated, n_prompt_tokens=n_prompt_tokens,
                   **{name: np.asarray(columns[name]).astype(dtype) for name, dtype in COLUMN_DTYPES.items()})


COLUMN_DTYPES = {
    "token_ids": np.int32, "starts": np.int32, "ends": np.int32, "p": np.float32, "logp": np.float32,
    "entropy": np.float32, "rank": np.int32, "topk_ids": np.int32, "topk_p": np.float32,
}


@dataclass
class RenderedSample:
    input_ids: list[int]
    response_mask: np.ndarray  # bool [L]: token belongs to the response
    starts: np.ndarray  # char offsets into the response (clipped), [L]
    ends: np.ndarray
    truncated: bool
    key: str


def render(sample: Sample, tokenizer: Any, config: ScoreConfig, fingerprint: str) -> RenderedSample:
    """Render prompt+response, tokenize with offsets and mark the response tokens."""
    response = sample.response
    if config.use_chat_template and getattr(tokenizer, "chat_template", None):
        messages = [{"role": "user", "content": sample.instruction}]
        prefix = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        full = tokenizer.apply_chat_template(
            messages + [{"role": "assistant", "content": response}], tokenize=False
        )
        start = len(prefix) if full.startswith(prefix) and full[len(prefix):].startswith(response) else full.rfind(response)
        template = tokenizer.chat_template
    else:
        prefix = sample.instruction + "\n" if sample.instruction else ""
        full, start, template = prefix + response, len(prefix), ""
    if start < 0:
        raise ValueError(f"Sample {sample.id!r}: the chat template changed the response text; score it with --no-chat-template.")
    end = start + len(response)
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    ids = list(enc["input_ids"])
    truncated = len(ids) > config.max_length
    if truncated:
        ids, offsets = ids[: config.max_length], offsets[: config.max_length]
    # A token belongs to the response when it overlaps the response's characters; tokens that
    # straddle the boundary are clipped to it.
    in_response = (offsets[:, 1] > start) & (offsets[:, 0] < end)
    starts = np.clip(offsets[:, 0], start, end) - start
    ends = np.clip(offsets[:, 1], start, end) - start
    # max_length changes the scores only of a sample it cuts: a whole sample's key leaves it out,
    # so scores made at one limit serve every limit that keeps the sample whole (the shipped
    # corpus scores at 2,048 serve a training preset at 2,112 or 1,792).
    length = str(config.max_length) if truncated else "whole"
    key_text = "\x1e".join([CACHE_VERSION, fingerprint, template, length, config.dtype, full])
    key = hashlib.sha256(key_text.encode()).hexdigest()
    return RenderedSample(ids, in_response, starts.astype(np.int32), ends.astype(np.int32), truncated, key)


def _cache_path(key: str) -> Path:
    return workspace_dir() / "cache" / "scores" / key[:2] / f"{key}.parquet"


def _save(scores: TokenScores, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = scores.topk_ids.shape[1] if scores.topk_ids.ndim == 2 else 0
    table = pa.table(
        {
            "token_id": scores.token_ids,
            "start": scores.starts,
            "end": scores.ends,
            "p": scores.p,
            "logp": scores.logp,
            "entropy": scores.entropy,
            "rank": scores.rank,
            "topk_ids": pa.FixedSizeListArray.from_arrays(scores.topk_ids.reshape(-1), k),
            "topk_p": pa.FixedSizeListArray.from_arrays(scores.topk_p.reshape(-1), k),
        },
        metadata={"truncated": str(int(scores.truncated)), "n_prompt_tokens": str(scores.n_prompt_tokens), "k": str(k)},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)  # atomic: a reader never sees half a file


@lru_cache(maxsize=1)
def _shipped_index() -> dict[str, tuple[Path, int, int, bool, int]]:
    """key -> (file, first row, rows, truncated, n_prompt_tokens) over every shipped file,
    read from the files' metadata only (the token columns load when a key is asked for)."""
    import pyarrow.parquet as pq

    index: dict[str, tuple[Path, int, int, bool, int]] = {}
    for path in sorted(SHIPPED_DIR.glob("*.parquet")):
        meta = pq.read_schema(path).metadata or {}
        for key, (first, rows, truncated, n_prompt) in json.loads(meta.get(b"cuset_samples", b"{}")).items():
            index[key] = (path, int(first), int(rows), bool(truncated), int(n_prompt))
    return index


@lru_cache(maxsize=4)
def _shipped_columns(path: Path) -> dict[str, np.ndarray]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    k = int((table.schema.metadata or {}).get(b"k", b"5"))
    columns = {name: table.column(name).to_numpy() for name in ("token_id", "start", "end", "p", "logp", "entropy", "rank")}
    for name in ("topk_ids", "topk_p"):
        columns[name] = table.column(name).combine_chunks().flatten().to_numpy().reshape(table.num_rows, k)
    return columns


def _shipped(key: str, sample_id: str) -> TokenScores | None:
    """A sample's scores from the shipped files, or None when none holds its key."""
    entry = _shipped_index().get(key)
    if entry is None:
        return None
    path, first, rows, truncated, n_prompt = entry
    columns = _shipped_columns(path)
    names = {"token_ids": "token_id", "starts": "start", "ends": "end"}
    part = {field: columns[names.get(field, field)][first : first + rows] for field in COLUMN_DTYPES}
    return TokenScores.from_columns(sample_id, part, truncated, n_prompt)


def cached_scores(key: str, sample_id: str) -> TokenScores | None:
    """A sample's scores from the workspace cache, else from the shipped scores, else None."""
    path = _cache_path(key)
    found = _load(path, sample_id) if path.is_file() else None
    return found if found is not None else _shipped(key, sample_id)


def write_shipped(samples: Sequence[Sample], config: ScoreConfig, path: Path, progress: Callable[[int, int], None] | None = None,
                  use_cache: bool = True) -> dict[str, Any]:
    """Score `samples` (from the cache where possible) and write them as one compressed Parquet
    file that `cached_scores` reads (what ships in cuset/data/bundled/scores). Atomic: the file
    is written beside its target and renamed. Returns the manifest entry of the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cuset import models

    scores, stats = score_samples(samples, config, progress, use_cache)  # use_cache=False: score afresh, ignore every cache
    tokenizer, resolved = models.load_tokenizer(config.model)
    keys = [render(s, tokenizer, config, resolved.fingerprint).key for s in samples]
    index, first = {}, 0
    for key, score in zip(keys, scores):
        index[key] = [first, len(score), int(score.truncated), score.n_prompt_tokens]
        first += len(score)
    k = config.top_k

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(s, name) for s in scores])

    table = pa.table(
        {
            "token_id": cat("token_ids"), "start": cat("starts"), "end": cat("ends"), "p": cat("p"), "logp": cat("logp"),
            "entropy": cat("entropy"), "rank": cat("rank"),
            "topk_ids": pa.FixedSizeListArray.from_arrays(cat("topk_ids").reshape(-1), k),
            "topk_p": pa.FixedSizeListArray.from_arrays(cat("topk_p").reshape(-1), k),
        },
        metadata={"cuset_samples": json.dumps(index), "k": str(k)},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    # Byte-stream split turns float columns into four byte planes that zstd compresses ~2x better.
    pq.write_table(table, tmp, compression="zstd", compression_level=19,
                   use_byte_stream_split=["p", "logp", "entropy", "topk_p"], column_encoding=None)
    tmp.replace(path)
    _shipped_index.cache_clear()
    _shipped_columns.cache_clear()
    return {"file": path.name, "model": config.model, "fingerprint": resolved.fingerprint, "dtype": config.dtype,
            "max_length": config.max_length, "top_k": k, "n_samples": len(scores), "n_tokens": stats["n_tokens"],
            "n_truncated": stats["n_truncated"], "bytes": path.stat().st_size}


def _load(path: Path, sample_id: str) -> TokenScores | None:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception:  # noqa: BLE001 - a damaged cache entry is re-scored, not fatal
        return None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    k = int(meta.get("k", 0))
    n = table.num_rows

    def flat(name: str, dtype: Any) -> np.ndarray:
        return table.column(name).combine_chunks().flatten().to_numpy().astype(dtype).reshape(n, k)

    names = {"token_ids": "token_id", "starts": "start", "ends": "end"}
    columns = {field: table.column(names.get(field, field)).to_numpy() for field in COLUMN_DTYPES if not field.startswith("topk")}
    columns |= {"topk_ids": flat("topk_ids", np.int32), "topk_p": flat("topk_p", np.float32)}
    return TokenScores.from_columns(sample_id, columns, meta.get("truncated") == "1", int(meta.get("n_prompt_tokens", 0)))


def _base_and_head(model: Any) -> tuple[Any, Any] | None:
    """The decoder stack and the vocabulary projection, to project only the scored positions."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    base = getattr(model, "model", None) or getattr(model, "base_model", None)
    if head is None or base is None or base is model:
        return None
    return base, head


def token_statistics(logits: Any, gold: Any, top_k: int) -> dict[str, Any]:
    """Per-row statistics of next-token distributions.

    logits: [N, V] float tensor; gold: [N] int tensor. Returns tensors p, logp, entropy (nats),
    rank (1 = argmax; ties count in the gold token's favour) and top-k ids and probabilities.
    """
    import torch

    logits = logits.float()
    logprobs = torch.log_softmax(logits, dim=-1)
    gold_logp = logprobs.gather(1, gold[:, None]).squeeze(1)
    # In place and with int32 counts: the same values, but no second [rows, vocabulary] float
    # block and no int64 widening of the comparison (together ~3x faster over Qwen's 151,936
    # entries; these statistics were half of a bfloat16 scoring pass).
    entropy = -logprobs.exp().mul_(logprobs).sum(-1)
    gold_logit = logits.gather(1, gold[:, None])
    rank = (logits > gold_logit).sum(-1, dtype=torch.int32) + 1
    top_logp, top_ids = logprobs.topk(top_k, dim=-1)
    return {
        "p": gold_logp.exp(),
        "logp": gold_logp,
        "entropy": entropy,
        "rank": rank,
        "topk_ids": top_ids,
        "topk_p": top_logp.exp(),
    }


def _score_batch(model: Any, batch: list[RenderedSample], top_k: int, pad_id: int) -> list[dict[str, np.ndarray]]:
    import torch

    # Right padding and no attention mask: under the causal mask a real token never attends to
    # the pads after it, so its outputs are exact, and sdpa keeps its fast causal path (an
    # explicit padding mask costs ~25% on CPU). Pad positions are never read.
    width = max(len(r.input_ids) for r in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    for row, item in enumerate(batch):
        ids[row, : len(item.input_ids)] = torch.tensor(item.input_ids)
    # Token t is predicted at position t-1; position 0 is never scored (it has no context).
    rows, cols = [], []
    for row, item in enumerate(batch):
        where = np.flatnonzero(item.response_mask)
        where = where[where > 0]
        rows.append(np.full(where.shape, row))
        cols.append(where)
    rows_t = torch.from_numpy(np.concatenate(rows))
    cols_t = torch.from_numpy(np.concatenate(cols))
    split = _base_and_head(model)
    gold = ids[rows_t, cols_t]
    if split is not None:
        # Project to the vocabulary in row chunks: a [rows, 49152] float32 block per chunk keeps
        # peak memory near 200 MB instead of several GB for a batch of long samples.
        base, head = split
        hidden = base(input_ids=ids).last_hidden_state[rows_t, cols_t - 1]
        chunks = [
            token_statistics(head(hidden[at : at + STATS_CHUNK]), gold[at : at + STATS_CHUNK], top_k)
            for at in range(0, max(hidden.shape[0], 1), STATS_CHUNK)  # one (empty) chunk at least
        ]
        stats = {k: torch.cat([c[k] for c in chunks]).cpu().numpy() for k in chunks[0]}
    else:
        logits = model(input_ids=ids).logits[rows_t, cols_t - 1]
        stats = {k: v.cpu().numpy() for k, v in token_statistics(logits, gold, top_k).items()}
    out, offset = [], 0
    for row in range(len(batch)):
        n = int(rows[row].shape[0])
        part = {k: v[offset : offset + n] for k, v in stats.items()}
        part["cols"] = cols[row]
        out.append(part)
        offset += n
    return out


def score_samples(
    samples: Sequence[Sample],
    config: ScoreConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    use_cache: bool = True,
) -> tuple[list[TokenScores], dict[str, Any]]:
    """Score every sample's response; returns (scores in input order, run statistics).

    `progress(done, total)` is called after each batch (the CLI passes tqdm, the app a
    progress bar). Statistics: n_samples, n_tokens, n_truncated, cache_hits, seconds,
    tokens_per_s (newly scored response tokens per second of forward passes),
    processed_tokens(_per_s) (prompt + response tokens run through the model), model,
    model_fingerprint.
    """
    import torch

    from cuset import bf16, models

    config = config or ScoreConfig()
    started = time.perf_counter()
    tokenizer, resolved = models.load_tokenizer(config.model)
    rendered = [render(s, tokenizer, config, resolved.fingerprint) for s in samples]
    results: list[TokenScores | None] = [None] * len(samples)
    todo = []
    for index, item in enumerate(rendered):
        cached = cached_scores(item.key, samples[index].id) if use_cache else None
        if cached is not None:
            results[index] = cached
        else:
            todo.append(index)
    hits = len(samples) - len(todo)
    if progress:
        progress(hits, len(samples))
    # Length bucketing: sort by length so each batch pads little.
    todo.sort(key=lambda i: len(rendered[i].input_ids))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    new_tokens, processed, score_seconds = 0, 0, 0.0
    model = models.load(config.model, config.dtype)[0] if todo else None  # weights only when needed
    slow = models.slow_bf16_note(config.dtype, "cpu") if todo else ""  # models.load keeps the weights on the CPU
    if slow:
        print(f"cuset: scoring {len(todo)} samples in bfloat16, but {slow}; dtype float32 is faster here "
              "(its scores differ from the shipped bfloat16 ones in ~0.6% of top-1 tokens)", file=sys.stderr)
    with torch.inference_mode(), bf16.cpu_matmuls(config.dtype, "cpu", model):
        for begin in range(0, len(todo), config.batch_size):
            chunk = todo[begin : begin + config.batch_size]
            t0 = time.perf_counter()
            parts = _score_batch(model, [rendered[i] for i in chunk], config.top_k, pad_id)
            score_seconds += time.perf_counter() - t0
            processed += sum(len(rendered[i].input_ids) for i in chunk)
            for index, part in zip(chunk, parts):
                item, cols = rendered[index], part["cols"]
                columns = {"token_ids": np.asarray(item.input_ids)[cols], "starts": item.starts[cols], "ends": item.ends[cols]}
                columns |= {name: part[name] for name in ("p", "logp", "entropy", "rank", "topk_ids", "topk_p")}
                n_prompt = int(np.argmax(item.response_mask)) if item.response_mask.any() else len(item.input_ids)
                scores = TokenScores.from_columns(samples[index].id, columns, item.truncated, n_prompt)
                new_tokens += len(scores)
                if use_cache:
                    _save(scores, _cache_path(item.key))
                results[index] = scores
            if progress:
                progress(hits + begin + len(chunk), len(samples))
    final = [r for r in results if r is not None]
    stats = {
        "n_samples": len(final),
        "n_tokens": int(sum(len(r) for r in final)),
        "n_truncated": int(sum(r.truncated for r in final)),
        "cache_hits": hits,
        "seconds": time.perf_counter() - started,
        "tokens_per_s": new_tokens / score_seconds if score_seconds > 0 else 0.0,
        "processed_tokens": processed,
        "processed_tokens_per_s": processed / score_seconds if score_seconds > 0 else 0.0,
        "model": resolved.name,
        "model_fingerprint": resolved.fingerprint,
    }
    return final, stats


def token_categories(scores: TokenScores, tagged: TagResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Align sensitivity spans and statements with the tokens by character offsets.

    Returns (bits [n] uint16: OR of CATEGORY_BIT over every span a token overlaps, so a token
    straddling a span edge gets the category; stmt [n] int32: index into tagged.statements of
    the innermost statement holding the token's last character, -1 outside any; stmt_kind [n]
    int8: index into STATEMENT_KINDS, -1 outside any).
    """
    n_chars = len(tagged.text)
    char_bits = np.append(tagged.char_mask(), np.uint16(0))
    char_stmt = np.full(n_chars + 1, -1, dtype=np.int32)
    for index in sorted(range(len(tagged.statements)), key=lambda i: tagged.statements[i].depth):
        statement = tagged.statements[index]
        char_stmt[statement.start : statement.end] = index  # inner statements overwrite outer ones
    starts = np.clip(scores.starts.astype(np.int64), 0, n_chars)
    ends = np.clip(scores.ends.astype(np.int64), 0, n_chars)
    # OR over each token's characters at once: prefix counts per bit (12 bits, vectorised).
    bit_index = np.arange(len(CATEGORIES), dtype=np.uint16)
    per_bit = ((char_bits[:, None] >> bit_index) & 1).astype(np.int32)
    prefix = np.vstack([np.zeros((1, len(CATEGORIES)), dtype=np.int32), np.cumsum(per_bit, axis=0)])
    present = (prefix[ends] - prefix[starts]) > 0
    bits = (present.astype(np.uint16) << bit_index).sum(axis=1).astype(np.uint16)
    last = np.maximum(ends - 1, starts)
    stmt = np.where(ends > starts, char_stmt[last], -1).astype(np.int32)
    kinds = np.array([STATEMENT_KINDS.index(s.kind) for s in tagged.statements] + [-1], dtype=np.int8)
    return bits, stmt, kinds[stmt]


def token_in_code(scores: TokenScores, tagged: TagResult) -> np.ndarray:
    """bool [n]: every character of the token lies inside the CUDA source the tagger found
    (tagged.blocks, in the sample's own offsets: the whole text of a plain .cu sample, a fenced
    block's body, the body of a Python string passed to load_inline). Everything else is the
    wrapper: prose, fences, the Python around the strings and the strings' own quotes. A token
    that straddles a block edge (a literal's quotes and its first characters) holds wrapper
    text, so it counts as outside: the objective's mask scope `cuda` always trains it."""
    n_chars = len(tagged.text)
    inside = np.zeros(n_chars, dtype=np.int64)
    for block in tagged.blocks:
        inside[block.start : block.end] = 1
    prefix = np.r_[0, np.cumsum(inside)]
    starts = np.clip(scores.starts.astype(np.int64), 0, n_chars)
    ends = np.clip(scores.ends.astype(np.int64), 0, n_chars)
    return (ends > starts) & (prefix[ends] - prefix[starts] == ends - starts)


# [4096, 12]: which categories each bit pattern holds.
PATTERN_CATEGORIES = (np.arange(1 << len(CATEGORIES))[:, None] >> np.arange(len(CATEGORIES))) & 1


def pattern_counts(bits: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Histogram [4096] of category bit patterns (entry 0: tokens that are not sensitive)."""
    values = bits if where is None else bits[where]
    return np.bincount(values, minlength=1 << len(CATEGORIES))


def category_counts(bits: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Tokens per category [len(CATEGORIES)] among `bits` (optionally only where `where`).

    One bincount over the 4096 possible bit patterns, then a tiny matrix product: much
    cheaper than one boolean pass over every token per category."""
    return pattern_counts(bits, where) @ PATTERN_CATEGORIES


@dataclass
class TokenTable:
    """A scored data set flattened: per-token arrays [N] ordered by (sample, position), and
    `offsets` [S+1] where sample s owns tokens offsets[s]:offsets[s+1]. `in_cuda` [N] bool
    (`token_in_code`): the token lies inside the sample's CUDA source; a table built by hand
    without it treats every token as CUDA, as `tag` treats a plain .cu text."""

    offsets: np.ndarray
    p: np.ndarray
    bits: np.ndarray
    stmt: np.ndarray
    stmt_kind: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    in_cuda: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.in_cuda is None:
            self.in_cuda = np.ones(self.p.shape, dtype=bool)

    @property
    def n_samples(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def sample(self) -> np.ndarray:
        """int32 [N]: the sample index of each token."""
        return np.repeat(np.arange(self.n_samples, dtype=np.int32), self.lengths)

    @cached_property
    def pos(self) -> np.ndarray:
        """int32 [N]: each token's position within its sample's response."""
        return (np.arange(self.p.shape[0]) - np.repeat(self.offsets[:-1], self.lengths)).astype(np.int32)

    @cached_property
    def sensitive(self) -> np.ndarray:
        return self.bits != 0

    @cached_property
    def category_counts(self) -> np.ndarray:
        """Tokens per category [len(CATEGORIES)] (a table's scores and tags never change)."""
        return category_counts(self.bits)

    @cached_property
    def sorted_p(self) -> np.ndarray:
        """[S, Lmax] each sample's p sorted ascending, padded with +inf: the per-sample
        quantile thresholds read it, so a threshold change costs no sort."""
        width = int(self.lengths.max()) if self.n_samples else 0
        grid = np.full((self.n_samples, width), np.inf, dtype=np.float32)
        grid[self.sample, self.pos] = self.p
        grid.sort(axis=1)
        return grid

    @classmethod
    def build(cls, scores: list[Any], tags: list[Any]) -> TokenTable:
        """From per-sample TokenScores and TagResults ."""
        aligned = [token_categories(s, t) for s, t in zip(scores, tags)]
        lengths = np.array([len(s) for s in scores], dtype=np.int64)

        def cat(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
            return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)

        return cls(
            offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64),
            p=cat([s.p for s in scores], np.float32),
            bits=cat([a[0] for a in aligned], np.uint16),
            stmt=cat([a[1] for a in aligned], np.int32),
            stmt_kind=cat([a[2] for a in aligned], np.int8),
            starts=cat([s.starts for s in scores], np.int32),
            ends=cat([s.ends for s in scores], np.int32),
            in_cuda=cat([token_in_code(s, t) for s, t in zip(scores, tags)], bool),
        )


def describe(scores: TokenScores, response: str, tagged: TagResult | None = None, tokenizer: Any = None) -> list[dict[str, Any]]:
    """One dict per token (for JSON output and tables): text, offsets, p, entropy, rank,
    categories and the top-k alternatives (decoded when a tokenizer is given)."""
    tagged = tagged or tag(response)
    bits, _, _ = token_categories(scores, tagged)
    rows = []
    for i in range(len(scores)):
        alternatives = [int(t) for t in scores.topk_ids[i]]
        names = tokenizer.convert_ids_to_tokens(alternatives) if tokenizer is not None else alternatives
        rows.append(
            {
                "index": i,
                "text": response[scores.starts[i] : scores.ends[i]],
                "start": int(scores.starts[i]),
                "end": int(scores.ends[i]),
                "p": float(scores.p[i]),
                "logp": float(scores.logp[i]),
                "entropy": float(scores.entropy[i]),
                "rank": int(scores.rank[i]),
                "categories": [c for c in CATEGORIES if bits[i] & CATEGORY_BIT[c]],
                "top_k": [[n, float(q)] for n, q in zip(names, scores.topk_p[i])],
            }
        )
    return rows


@dataclass
class ScoredDataset:
    """A data set scored under one model: the samples, their sensitivity tags and token
    scores (index-aligned), the flat TokenTable the objective works on, and run statistics."""

    samples: list[Sample]
    tags: list[TagResult]
    scores: list[TokenScores]
    table: TokenTable
    stats: dict[str, Any]

    def index_of(self, sample_id: str) -> int:
        for index, sample in enumerate(self.samples):
            if sample.id == sample_id:
                return index
        raise KeyError(f"No sample with id {sample_id!r} in this data set.")


def score_dataset(
    samples: Sequence[Sample],
    config: ScoreConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    dataset_name: str = "",
    use_cache: bool = True,
) -> ScoredDataset:
    """Tag and score every sample, flatten into a TokenTable, and record the run in the store."""
    config = config or ScoreConfig()
    samples = list(samples)
    tags = [tag(s.response) for s in samples]
    scores, stats = score_samples(samples, config, progress, use_cache)
    table = TokenTable.build(scores, tags)
    record_run(samples, stats, dataset_name)
    return ScoredDataset(samples, tags, scores, table, stats)


def record_run(samples: Sequence[Sample], stats: dict[str, Any], dataset_name: str = "") -> None:
    """Note a scoring run (and its data set) in the workspace store."""
    from cuset.data import fingerprint
    from cuset.workspace import Store

    store = Store()
    name = dataset_name or f"adhoc-{fingerprint(list(samples))}"
    store.record_dataset(name, dataset_name or "adhoc", len(samples), fingerprint(list(samples)))
    store.record_scoring_run(
        dataset=name,
        model=stats["model"],
        model_fingerprint=stats["model_fingerprint"],
        n_samples=stats["n_samples"],
        n_tokens=stats["n_tokens"],
        n_truncated=stats["n_truncated"],
        cache_hits=stats["cache_hits"],
        seconds=stats["seconds"],
    )


def scored_from_cache(samples: Sequence[Sample], config: ScoreConfig | None = None) -> tuple[ScoredDataset, list[int]]:
    """The part of a data set already scored under `config`, without running the model.

    Returns (ScoredDataset of the cached samples, their indices in `samples`). The dashboard
    uses this to show data-set figures for what is scored while the rest is still pending."""
    from cuset import models

    config = config or ScoreConfig()
    tokenizer, resolved = models.load_tokenizer(config.model)
    kept, scores, indices = [], [], []
    for index, sample in enumerate(samples):
        cached = cached_scores(render(sample, tokenizer, config, resolved.fingerprint).key, sample.id)
        if cached is not None:
            kept.append(sample)
            scores.append(cached)
            indices.append(index)
    tags = [tag(s.response) for s in kept]
    stats = {"n_samples": len(kept), "n_tokens": int(sum(len(x) for x in scores)), "n_truncated": int(sum(x.truncated for x in scores)), "model": resolved.name, "model_fingerprint": resolved.fingerprint}
    return ScoredDataset(kept, tags, scores, TokenTable.build(scores, tags), stats), indices


def category_stats(table: TokenTable, high: float = 0.5) -> list[dict[str, Any]]:
    """Confidence of sensitive vs other tokens, per category (the paper's first finding).

    One row per category plus 'any sensitive' and 'not sensitive': token count, mean and
    median gold probability, and the share of tokens with p >= `high`."""
    bits = table.bits.astype(np.int64)
    groups = [(c, ((bits >> i) & 1).astype(bool)) for i, c in enumerate(CATEGORIES)]
    groups += [("any sensitive", bits != 0), ("not sensitive", bits == 0)]
    rows = []
    for name, where in groups:
        p = table.p[where]
        rows.append(
            {
                "category": name,
                "tokens": int(where.sum()),
                "mean_p": float(p.mean()) if p.size else float("nan"),
                "median_p": float(np.median(p)) if p.size else float("nan"),
                "high_confidence_share": float((p >= high).mean()) if p.size else float("nan"),
            }
        )
    return rows


def shipped_manifest() -> dict[str, Any]:
    """SHIPPED_DIR/manifest.json: per shipped file its model, fingerprint, dtype, size, counts."""
    path = SHIPPED_DIR / "manifest.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def ship_bundled(model: str, progress: Callable[[int, int], None] | None = None, use_cache: bool = True) -> dict[str, Any]:
    """Regenerate the shipped scores of the bundled corpus under `model` (its default dtype)
    and update the manifest. With use_cache, scores come from the workspace cache and the
    shipped files where they exist (a repack); without, everything is scored afresh. What
    `cuset prescore [--no-cache]` runs."""
    from cuset.data import load

    config = ScoreConfig(model=model)
    entry = write_shipped(load("bundled"), config, SHIPPED_DIR / f"{model}.parquet", progress, use_cache)
    manifest = shipped_manifest() | {model: entry | {"made": time.strftime("%Y-%m-%d")}}
    tmp = SHIPPED_DIR / ".manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(SHIPPED_DIR / "manifest.json")
    return manifest[model]


def compare_with_shipped(samples: Sequence[Sample], config: ScoreConfig, n: int = 2, seed: int | None = None) -> dict[str, Any]:
    """Score `n` randomly chosen samples afresh (no cache) and compare with the shipped scores:
    the largest and mean |dp|, mean |d entropy| (nats) and the share of tokens with the same
    rank and the same top-1 token. Raises ValueError when no sample has shipped scores."""
    from cuset import models

    tokenizer, resolved = models.load_tokenizer(config.model)
    keys = [render(s, tokenizer, config, resolved.fingerprint).key for s in samples]
    shipped = [(s, _shipped(k, s.id)) for s, k in zip(samples, keys)]
    shipped = [(s, x) for s, x in shipped if x is not None]
    if not shipped:
        raise ValueError(f"No shipped scores for these samples under {config.model} ({config.dtype}); run `cuset prescore --model {config.model}`.")
    rng = np.random.default_rng(seed)
    chosen = [shipped[i] for i in rng.choice(len(shipped), size=min(n, len(shipped)), replace=False)]
    fresh, _ = score_samples([s for s, _ in chosen], config, use_cache=False)
    old = [x for _, x in chosen]

    def cat(items: list[TokenScores], name: str) -> np.ndarray:
        return np.concatenate([getattr(x, name) for x in items])

    for a, b in zip(fresh, old):
        if not np.array_equal(a.token_ids, b.token_ids):
            raise ValueError(f"Sample {a.sample_id!r}: the tokens differ from the shipped ones (another tokenizer or template?).")
    dp = np.abs(cat(fresh, "p") - cat(old, "p"))
    return {
        "samples": [s.id for s, _ in chosen], "tokens": int(dp.size), "max_abs_dp": float(dp.max()), "mean_abs_dp": float(dp.mean()),
        "mean_abs_dentropy": float(np.abs(cat(fresh, "entropy") - cat(old, "entropy")).mean()),
        "rank_equal": float((cat(fresh, "rank") == cat(old, "rank")).mean()),
        "top1_equal": float((cat(fresh, "topk_ids")[:, 0] == cat(old, "topk_ids")[:, 0]).mean()),
    }
