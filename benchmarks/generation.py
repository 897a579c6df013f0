"""Generation speed: the evaluation's decoding paths side by side, against the memory-bandwidth limit.

    python -m benchmarks.generation            # coder-0.5b, the bundled tasks' real prompts (768 tokens), 32 decoding steps
    python -m benchmarks.generation --small    # smollm2-135m, 8 steps, batches up to 8 (what CI runs)
    python -m benchmarks.generation --model smollm2-135m

Each row is one way of decoding with the transformers engine on this CPU (dtype x batch; its
decoding loop, from which no row leaves early here): "float32 x 4" is the evaluation path
before this benchmark existed, the row marked `*` the one evaluations use now (GenerateConfig: dtype auto = the model's own, batch 48). Prompts are
the one-shot prompts of the bundled suite's tasks (as evaluations build them), cut to a common
length so that every row decodes the same shapes. Decoding speed comes from two runs per row
that differ only in the number of new tokens (n_short, n_long): steps/s = (n_long - n_short) /
(t_long - t_short), so the prefill cancels out; tokens/s = steps/s x batch. Its column `decode %`
is that difference's share of the long run: where it is under 25% (49 prompts of 768 tokens
decoding 32 steps) the prefill's jitter can be all of it, and the row is flagged as no measurement.

Bandwidth limit: one decoding step reads every weight matrix once (the embedding table only
through the vocabulary projection; a lookup reads a few rows), whatever the batch. Bytes per
step x steps/s over the read bandwidth measured in this run (read_bandwidth: the best of several
sums over a tensor of 512 MiB and at least 4x the last-level cache) is the fraction of the limit. At batch 1 that fraction is what an
engine can improve; at wide batches a step is bound by compute, and the FLOP figure (2 x matmul
parameters x batch per step over the best bf16/fp32 matmul rate measured here) says how much.

Agreement: the greedy replies of each dtype against float32 at batch 1 (the reference path),
token for token on the first prompts: the share of positions identical up to the first
difference. bfloat16 rounds the logits, so replies may part where two tokens are nearly tied.

Ragged batch: the evaluation's replies end at very different steps (on the cpu-coder passes
32 of 49 ended within ~12 minutes and 17 ran to the cap). The engine's decoding loop drops a
row once it stops; `model.generate` (the reference path, drop_finished=False) runs every row to
the batch's last step. Both decode the widest batch with stop tokens picked from its free-running
replies so that the rows end spread over the window, one of them at the cap; the decoding time
(a prefill-only run subtracted) of each, and whether their replies are identical, token for token.

CTranslate2 (cuset.generate.ct2), side by side with the transformers loop on the same prompts:
tokens/s at batch 1, 8 and 49 (--small: 1 and 8, on the tiny model, whose conversion takes ~1 s) in int8 and float32 (float32 at 1 and 8), each
against the bandwidth limit of its own weight bytes (int8: one byte per matrix weight), the
conversion time (recorded in the converted folder when it was made; "this run" when it was made
now), its peak RSS (CTranslate2 runs in a child process, so its peak is its own; the transformers
figure is this process's peak before it), and greedy agreement with the transformers engine on
the first 10 bundled tasks (--small: 3; the tiny model's near-uniform logits make int8 part at once): per pair, the replies identical token for token and the
first position where each pair parts (int8 against the model's own dtype and against float32,
float32 against float32).

OpenVINO GenAI (cuset.generate.ov), the same way: tokens/s at batch 1, 8 and 49 in the model's own
dtype (bfloat16 compute on fp16 weights where the CPU has native bf16, else float32) and float32
at batch 1, beside the transformers loop's rows at the same batches, each against the bandwidth
limit of its weight bytes (2 per matrix weight for fp16), the export time (optimum-intel in the
export environment, `make openvino`), the child's peak RSS and greedy agreement (own dtype against
transformers' own dtype, float32 against float32).

Other engines: llama-cpp-python has no binary wheel on the package index this machine reaches
(a source build needs cmake and a compile of llama.cpp) and vLLM's CPU build is not on PyPI:
neither is measured, and each gets a line saying so rather than being left out silently.

    python -m benchmarks.generation --ct2-only   # only the CTranslate2 comparison (and its transformers baselines)
    python -m benchmarks.generation --ov-only    # only the OpenVINO comparison (and its transformers baselines)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any


def l3_bytes() -> int:
    """The last-level cache's size (sysfs), 0 where it is not reported."""
    from pathlib import Path

    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
            sizes.append(int(text[:-1]) * {"K": 1024, "M": 1024**2}[text[-1]] if text[-1] in "KM" else int(text))
        except (OSError, ValueError, KeyError):
            continue
    return max(sizes, default=0)


def read_bytes(mib: int) -> int:
    """The size read_bandwidth reads: `mib` MiB, and at least 4x the last-level cache."""
    return max(mib * 1024 * 1024, 4 * l3_bytes())


def read_bandwidth(mib: int = 512, repeats: int = 5) -> float:
    """Best bytes/s of a streaming read (a sum) over a float32 tensor of at least `mib` MiB and
    4x the last-level cache, so that it comes from memory, over `repeats` tries. A decoding step
    reads its weights and writes next to nothing: a read, not a copy (which also writes, and was
    this benchmark's reference until 2026-12-07)."""
    import torch

    src = torch.ones(read_bytes(mib) // 4, dtype=torch.float32)
    src.sum()
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        src.sum()
        best = max(best, src.numel() * 4 / (time.perf_counter() - started))
    return best


def bandwidth_line(bandwidth: float, mib: int) -> str:
    l3 = l3_bytes()
    return (f"read bandwidth {bandwidth / 1e9:.1f} GB/s (a sum over {read_bytes(mib) / 1024**3:.1f} GiB"
            + (f"; last-level cache {l3 / 1024**2:.0f} MiB: weights under ~4x that can be partly re-read from it, so a "
               "fraction of the limit above 1 is possible there" if l3 else "") + ")")


def peak_rss_gb() -> float:
    """This process's own peak resident set (VmHWM). Not getrusage's ru_maxrss: Linux carries that
    across fork and exec, so a child started by a 6.6 GB parent reported 6.6 GB whatever it held."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e9
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def matmul_flops(dtype: Any, n: int = 1024, repeats: int = 3) -> float:
    """Best FLOP/s of an n^3 matmul in `dtype`."""
    import torch

    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    torch.mm(a, b)
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * n**3 / (time.perf_counter() - started))
    return best


def step_bytes(model: Any) -> tuple[int, int]:
    """(bytes, parameters) one decoding step reads: every matrix of a linear layer including the
    vocabulary projection; the input embedding only when it is not the projection itself (a
    lookup reads a few rows: counted as nothing)."""
    embed = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    total = n = 0
    for p in model.parameters():  # a tied projection is listed once
        if p is embed and p is not head:
            continue
        total += p.numel() * p.element_size()
        n += p.numel()
    return total, n


def prompts(tokenizer: Any, n: int, length: int) -> list[list[int]]:
    """The one-shot prompts of the first n bundled tasks, each cut to its last `length` tokens."""
    from cuset.evaluate.suite.bundled import load_suite
    from cuset.generate.prompts import build_prompt, encode_prompt, load_one_shot, render_prompt

    example = load_one_shot(True)
    tasks = load_suite("bundled")
    out = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        ids = encode_prompt(render_prompt(build_prompt(task.task_text, example), tokenizer), tokenizer)
        out.append(ids[-length:])
    return out


NOISY_SHARE = 0.25  # a rate whose decoding is under this share of its long run is bound by the prefill's jitter


def decode_rate(engine: Any, rows: list[list[int]], n_short: int, n_long: int) -> tuple[float, list[list[int]], float]:
    """Decoding steps/s of a batch (prefill cancelled out), the long run's token ids, and the
    share of the long run that the difference is (t_long - t_short) / t_long: where the prefill
    is most of both runs (49 prompts of 768 tokens), a few per cent of its jitter is all of the
    difference, and the rate says little (a wider batch can then read faster than a narrower one)."""
    from cuset.generate.config import GenerateConfig
    from cuset.generate.engines import Request

    requests = [Request(r, i) for i, r in enumerate(rows)]
    seconds, tokens = {}, []
    # An untimed first run: an engine's first call at a batch shape can carry one-time costs (buffers,
    # kernels) that, landing in the short run only, would shrink the difference and inflate the rate.
    engine.run(requests, GenerateConfig(batch_size=len(rows), max_new_tokens=n_short, temperature=0.0))
    for n in (n_short, n_long):
        config = GenerateConfig(batch_size=len(rows), max_new_tokens=n, temperature=0.0)
        started = time.perf_counter()
        done = engine.run(requests, config)
        seconds[n] = time.perf_counter() - started
        tokens = [c.token_ids for c in done]
    diff = seconds[n_long] - seconds[n_short]
    return (n_long - n_short) / max(diff, 1e-9), tokens, max(diff, 0.0) / seconds[n_long]


def staggered_stops(free: list[list[int]]) -> list[int]:
    """Stop tokens that end the rows of a batch at steps spread over its window: row r at the
    first token from position ~r/n of the way on that no row wrote before that position; the
    last row has none of them (it runs to the cap)."""
    stops: set[int] = set()
    for r, reply in enumerate(free[:-1]):
        at = 1 + r * (len(reply) - 2) // max(len(free) - 1, 1)
        pick = next((t for t in reply[at:] if t not in free[-1] and all(t not in other[:at] for other in free)), None)
        if pick is not None:
            stops.add(pick)
    return sorted(stops)


def ragged(engine: Any, rows: list[list[int]], free: list[list[int]], n_long: int) -> dict[str, float]:
    """Decoding seconds of the loop and of generate on one batch whose rows end at staggered
    steps (prefill-only time subtracted), the share of row-steps generate spends on rows still
    writing, and the share of rows whose replies are identical."""
    from cuset.generate.config import GenerateConfig
    from cuset.generate.engines import Request

    requests = [Request(r, i) for i, r in enumerate(rows)]
    kept, drop = engine.stops, engine.drop_finished
    engine.stops = staggered_stops(free)
    seconds, replies = {}, {}
    try:
        for name, flag, n in (("prefill", True, 1), ("generate", False, n_long), ("loop", True, n_long)):
            engine.drop_finished = flag
            started = time.perf_counter()
            replies[name] = [c.token_ids for c in engine.run(requests, GenerateConfig(batch_size=len(rows), max_new_tokens=n, temperature=0.0))]
            seconds[name] = time.perf_counter() - started
    finally:
        engine.stops, engine.drop_finished = kept, drop
    lengths = [len(r) for r in replies["loop"]]
    return {
        "generate_s": max(seconds["generate"] - seconds["prefill"], 1e-9), "loop_s": max(seconds["loop"] - seconds["prefill"], 1e-9),
        "useful": sum(lengths) / (len(lengths) * max(lengths)), "ended": sum(n < n_long for n in lengths) / len(lengths),
        "identical": sum(a == b for a, b in zip(replies["loop"], replies["generate"])) / len(rows),
    }


def agreement(reference: list[list[int]], other: list[list[int]]) -> float:
    """Share of reference positions matched before the first difference, over all rows."""
    same = total = 0
    for a, b in zip(reference, other):
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        same += k
        total += len(a)
    return same / total if total else 1.0


def first_divergence(a: list[int], b: list[int]) -> int | None:
    """The first position where two replies differ (None when identical)."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return None if k == len(a) == len(b) else k


def ct2_child(model: str, length: int, n_short: int, n_long: int, batches: list[int], n_agree: int) -> dict[str, Any]:
    """CTranslate2's rows, run in this (child) process: steps/s per (compute type, batch),
    greedy replies on the agreement prompts, conversion seconds and this process's peak RSS."""
    import os

    from cuset.generate.ct2 import CT2Engine, ct2_cache_dir, folder_key
    from cuset.generate.source import resolve_source

    source = resolve_source(model)
    out: dict[str, Any] = {"rates": {}, "shares": {}, "replies": {}, "convert_s": {}, "converted_now": {}, "bytes": {}}
    for compute, sizes in (("int8", batches), ("float32", [b for b in batches if b <= 8])):
        made = not (ct2_cache_dir() / folder_key(source, compute) / "config.json").is_file()
        engine = CT2Engine.load(source, compute, "cpu", progress=False)
        record = json.loads((ct2_cache_dir() / folder_key(source, compute) / "cuset-ct2.json").read_text())
        out["convert_s"][compute], out["converted_now"][compute] = record["seconds"], made
        out["bytes"][compute] = os.path.getsize(os.path.join(engine.folder, "model.bin"))
        for batch in sizes:
            rate, _, out["shares"][f"{compute} x{batch}"] = decode_rate(engine, prompts(engine.tokenizer, batch, length), n_short, n_long)
            out["rates"][f"{compute} x{batch}"] = rate
        out["replies"][compute] = decode_rate(engine, prompts(engine.tokenizer, n_agree, length), 1, n_long)[1]
        del engine
    out["peak_rss_gb"] = peak_rss_gb()
    return out


def child_rows(engine: Any, length: int, n_short: int, n_long: int, sizes: list[int], n_agree: int, label: str,
               out: dict[str, Any]) -> None:
    """One engine's rows into `out` (run in a child process): steps/s per batch, greedy replies."""
    for batch in sizes:
        rate, _, out["shares"][f"{label} x{batch}"] = decode_rate(engine, prompts(engine.tokenizer, batch, length), n_short, n_long)
        out["rates"][f"{label} x{batch}"] = rate
    out["replies"][label] = decode_rate(engine, prompts(engine.tokenizer, n_agree, length), 1, n_long)[1]


def ov_child(model: str, length: int, n_short: int, n_long: int, batches: list[int], n_agree: int, own: str) -> dict[str, Any]:
    """OpenVINO's rows, run in this (child) process: the model's own dtype at every batch, float32 at
    batch 1 (its exact agreement), export seconds and this process's peak RSS."""
    from pathlib import Path

    from cuset.generate.ov import OVEngine, folder_key, ov_cache_dir
    from cuset.generate.source import resolve_source

    source = resolve_source(model)
    out: dict[str, Any] = {"rates": {}, "shares": {}, "replies": {}, "convert_s": {}, "converted_now": {}, "bytes": {}}
    for dtype, sizes in dict.fromkeys([(own, tuple(batches)), ("float32", (1,))]):
        folder = ov_cache_dir() / folder_key(source, dtype)
        made = not (folder / "config.json").is_file()
        engine = OVEngine.load(source, dtype, progress=False)
        record = json.loads((folder / "cuset-openvino.json").read_text())
        out["convert_s"][dtype], out["converted_now"][dtype] = record["seconds"], made
        out["bytes"][dtype] = (Path(engine.folder) / "openvino_model.bin").stat().st_size
        child_rows(engine, length, n_short, n_long, list(sizes), n_agree, dtype, out)
        del engine
    out["peak_rss_gb"] = peak_rss_gb()
    return out


def transformers_baselines(model: str, small: bool, own: str) -> dict[str, Any]:
    """The transformers loop's rows the other engines are compared with (float32 at 1 and 8, the
    model's own dtype at 1, 8 and, at full size, 49) and its greedy replies on the agreement prompts."""
    from cuset.generate.engines import TransformersEngine

    n_short, n_long, length = (4, 68, 128) if small else (8, 40, 768)  # tiny decodes ~150 steps/s: 64 steps outlast timer noise
    batches, n_agree = ([1, 8], 3) if small else ([1, 8, 49], 10)
    base: dict[str, float] = {}
    shares: dict[str, float] = {}
    replies: dict[str, list[list[int]]] = {}
    matrix_params = 0
    for dtype in dict.fromkeys(["float32", own]):
        engine = TransformersEngine.load(model, dtype, "cpu")
        matrix_params = step_bytes(engine.model)[1]
        for batch in (1, 8) if dtype == "float32" else batches:
            base[f"{dtype} x{batch}"], _, shares[f"{dtype} x{batch}"] = decode_rate(engine, prompts(engine.tokenizer, batch, length), n_short, n_long)
        replies[dtype] = decode_rate(engine, prompts(engine.tokenizer, n_agree, length), 1, n_long)[1]
        del engine
    return {"model": model, "own": own, "base": base, "shares": shares, "replies": replies, "matrix_params": matrix_params,
            "rss_gb": peak_rss_gb(), "shape": (length, n_short, n_long),
            "batches": batches, "n_agree": n_agree}


def _run_child(function: str, args: list[Any]) -> dict[str, Any] | str:
    """`function(*args)` of this module in a child process (so its peak RSS is its own); its
    result, or the last line of its error."""
    code = f"import json, sys; from benchmarks.generation import {function}; print(json.dumps({function}(*json.loads({json.dumps(args)!r}))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        return " ".join(done.stderr.strip().splitlines()[-1:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def engine_table(kind: str, tf: dict[str, Any], child: dict[str, Any], bandwidth: float, bytes_per: dict[str, float]) -> dict[str, dict[str, float]]:
    """Print one engine's rows beside the transformers loop's; return them by name."""
    from cuset import bf16

    base, own = tf["base"], tf["own"]
    print(f"{kind + ' vs transformers':<28}{'steps/s':>9}{'tokens/s':>10}{'x tf same':>11}{'GB/step':>9}{'of bandwidth':>14}{'decode %':>10}")
    rows: dict[str, dict[str, float]] = {}
    shares = {**{"transformers " + k: v for k, v in tf["shares"].items()}, **{kind + " " + k: v for k, v in child["shares"].items()}}
    for name, rate in [*(("transformers " + k, v) for k, v in base.items()), *((kind + " " + k, v) for k, v in child["rates"].items())]:
        engine, dtype, batch = name.split()[0], name.split()[1], int(name.split("x")[-1])
        width = bytes_per.get(dtype, 2) if engine == kind else {"float32": 4, "bfloat16": 2}[dtype]
        if engine == "transformers" and dtype == "bfloat16" and bf16.enabled("bfloat16", "cpu"):
            width = 4  # its GEMMs read the weights' float32 copies
        gb = tf["matrix_params"] * width / 1e9
        same = base.get(f"{dtype} x{batch}") or base.get(f"{own} x{batch}")
        rows[name] = {"steps_s": rate, "tok_s": rate * batch, "bw": gb * 1e9 * rate / bandwidth, "gb": gb}
        vs = f"{rate / same:>11.2f}" if engine == kind and same else f"{'':>11}"
        print(f"{name:<28}{rate:>9.2f}{rate * batch:>10.1f}{vs}{gb:>9.2f}{rows[name]['bw']:>14.2f}{100 * shares[name]:>10.0f}")
    for dtype, seconds in child["convert_s"].items():
        when = "this run" if child["converted_now"][dtype] else "when the cached folder was made"
        print(f"{kind} {dtype} conversion: {seconds:.1f} s ({when}); weights file {child['bytes'][dtype] / 1e9:.2f} GB")
    print(f"peak RSS: transformers process {tf['rss_gb']:.2f} GB, {kind} child {child['peak_rss_gb']:.2f} GB")
    noisy = [name for name in rows if shares[name] < NOISY_SHARE]
    if noisy:
        print(f"WARNING: decoding is under {NOISY_SHARE:.0%} of the timed run ({', '.join(noisy)}): the prefill's jitter can be all of "
              "the difference, so those rates (and their ratios) are not measurements")
    over = [name for name, row in rows.items() if row["bw"] > 1.0]
    if over:
        print(f"WARNING: over 1 of the bandwidth limit ({', '.join(over)}): part of the weights may be re-read from the last-level cache (see the bandwidth line), "
              "or those rates are off; read them as rates, not as fractions")
    return rows


def greedy_agreement(kind: str, tf: dict[str, Any], child: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, str]:
    n_long = tf["shape"][2]
    out = {}
    for ours, theirs in dict.fromkeys(pairs):
        parts = [first_divergence(a, b) for a, b in zip(tf["replies"][theirs], child["replies"][ours])]
        same = sum(p is None for p in parts)
        out[f"{kind} {ours} vs transformers {theirs}"] = f"{same}/{len(parts)}"
        print(f"greedy {kind} {ours} vs transformers {theirs} ({tf['n_agree']} tasks x {n_long} tokens): {same}/{len(parts)} identical; "
              f"first divergence at {['=' if p is None else p for p in parts]}")
    return out


def compare_ct2(tf: dict[str, Any], bandwidth: float) -> dict[str, Any]:
    """CTranslate2 against the transformers loop (see the module docstring); prints its table."""
    length, n_short, n_long = tf["shape"]
    child = _run_child("ct2_child", [tf["model"], length, n_short, n_long, tf["batches"], tf["n_agree"]])
    if isinstance(child, str):
        print(f"ctranslate2 not measured: its child process failed: {child}")
        return {}
    own = tf["own"]
    rows = engine_table("ctranslate2", tf, child, bandwidth, {"int8": 1, "float32": 4})
    agreement_rows = greedy_agreement("ct2", tf, child, [("float32", "float32"), ("int8", own), ("int8", "float32")])
    best8 = rows.get("ctranslate2 int8 x8", {}).get("tok_s", 0.0)
    return {
        "ct2_int8_tok_s_batch8": round(best8, 2),
        "ct2_int8_vs_transformers_batch8": round(best8 / (tf["base"][f"{own} x8"] * 8), 2),
        "ct2_int8_vs_transformers_float32_batch8": round(best8 / (tf["base"]["float32 x8"] * 8), 2),
        "ct2_int8_bandwidth_fraction_batch1": round(rows["ctranslate2 int8 x1"]["bw"], 3),
        "ct2_float32_bandwidth_fraction_batch1": round(rows["ctranslate2 float32 x1"]["bw"], 3),
        "ct2_int8_tok_s_batch49": round(rows["ctranslate2 int8 x49"]["tok_s"], 2) if "ctranslate2 int8 x49" in rows else None,
        "ct2_convert_s": child["convert_s"],
        "ct2_peak_rss_gb": round(child["peak_rss_gb"], 2),
        "transformers_peak_rss_gb": round(tf["rss_gb"], 2),
        "ct2_greedy_agreement": agreement_rows,
    }


def compare_ov(tf: dict[str, Any], bandwidth: float) -> dict[str, Any]:
    """OpenVINO GenAI against the transformers loop (see the module docstring); prints its table."""
    length, n_short, n_long = tf["shape"]
    own = tf["own"]
    child = _run_child("ov_child", [tf["model"], length, n_short, n_long, tf["batches"], tf["n_agree"], own])
    if isinstance(child, str):
        print(f"openvino not measured: its child process failed: {child}")
        return {}
    rows = engine_table("openvino", tf, child, bandwidth, {"bfloat16": 2, "float32": 4})
    agreement_rows = greedy_agreement("openvino", tf, child, [("float32", "float32"), (own, own)])
    figures: dict[str, Any] = {}
    for batch in tf["batches"]:
        ours, theirs = rows[f"openvino {own} x{batch}"]["tok_s"], tf["base"][f"{own} x{batch}"] * batch
        figures[f"ov_tok_s_batch{batch}"] = round(ours, 2)
        figures[f"ov_vs_transformers_batch{batch}"] = round(ours / theirs, 2)
    return figures | {
        "ov_dtype": own,
        "ov_bandwidth_fraction_batch1": round(rows[f"openvino {own} x1"]["bw"], 3),
        "ov_convert_s": child["convert_s"],
        "ov_peak_rss_gb": round(child["peak_rss_gb"], 2),
        "ov_greedy_agreement": agreement_rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="quick size for CI")
    ap.add_argument("--model", default="", help="default: coder-0.5b (--small: smollm2-135m)")
    ap.add_argument("--bf16-anyway", action="store_true", help="measure bfloat16 even where it is slow here (CUSET_BF16_MATMULS=native on a CPU without bf16 instructions)")
    ap.add_argument("--ct2-only", action="store_true", help="only the CTranslate2 comparison and its transformers baselines")
    ap.add_argument("--ov-only", action="store_true", help="only the OpenVINO comparison and its transformers baselines")
    args = ap.parse_args(argv)
    args.model = args.model or ("smollm2-135m" if args.small else "coder-0.5b")
    import torch

    if args.ct2_only or args.ov_only:
        from cuset import models

        own = models.default_score_dtype(args.model) if not models.slow_bf16_note("bfloat16", "cpu") else "float32"
        mib = 128 if args.small else 512
        bandwidth = read_bandwidth(mib)
        print(f"{args.model}: {bandwidth_line(bandwidth, mib)}")
        tf = transformers_baselines("tiny" if args.small else args.model, args.small, own)
        figures = compare_ct2(tf, bandwidth) if args.ct2_only else {}
        figures |= compare_ov(tf, bandwidth) if args.ov_only else {}
        print(json.dumps(figures))
        return 0

    from cuset import models
    from cuset.generate.engines import TransformersEngine

    if args.small:
        n_short, n_long, length, batches, n_agree = 4, 12, 128, (1, 4, 8), 2
    else:
        n_short, n_long, length, batches, n_agree = 8, 40, 768, (1, 4, 16, 48), 3
    from cuset import bf16

    fast_bf16 = not models.slow_bf16_note("bfloat16", "cpu") or args.bf16_anyway
    emulated = bf16.enabled("bfloat16", "cpu")
    if fast_bf16:
        print("bfloat16 products: " + ("as float32 GEMMs on the bf16 values (cuset.bf16: this CPU has no bf16 instructions); "
                                       "a step reads the weights' float32 copies, counted as such" if emulated else "torch's own kernels"))
    own = models.default_score_dtype(args.model) if fast_bf16 else "float32"
    widest = max(batches)
    rows_plan = [("float32", 1), ("float32", 4)] + ([("bfloat16", 1), ("bfloat16", 4)] if fast_bf16 else []) + [(own, b) for b in batches if b > 4]
    mib = 128 if args.small else 512
    bandwidth = read_bandwidth(mib)
    peak = {"float32": matmul_flops(torch.float32, 512 if args.small else 1024)}
    if fast_bf16:
        with bf16.cpu_matmuls("bfloat16", "cpu"):
            peak["bfloat16"] = matmul_flops(torch.bfloat16, 512 if args.small else 1024)
    else:
        print(f"bfloat16 not measured: {models.BF16_SLOW_NOTE} (--bf16-anyway measures it); the wider batches run in float32")
    bf16_peak = f"{peak['bfloat16'] / 1e9:.0f} GFLOP/s" if fast_bf16 else "not measured"
    print(f"{args.model}: {bandwidth_line(bandwidth, mib)}; matmul peak float32 {peak['float32'] / 1e9:.0f} "
          f"GFLOP/s, bfloat16 {bf16_peak}; prompts {length} tokens, steps {n_short}->{n_long}")
    engines: dict[str, Any] = {}
    results: dict[tuple[str, int], dict[str, float]] = {}
    replies: dict[str, list[list[int]]] = {}
    for dtype, batch in rows_plan:
        if dtype not in engines:
            engines.clear()
            engines[dtype] = TransformersEngine.load(args.model, dtype, "cpu")
        engine = engines[dtype]
        rows = prompts(engine.tokenizer, batch, length)
        rate, tokens, share = decode_rate(engine, rows, n_short, n_long)
        if (dtype, batch) == (own, widest):
            stagger = ragged(engine, rows, tokens, n_long)
        nbytes, nparams = step_bytes(engine.model)
        if dtype == "bfloat16" and emulated:
            nbytes *= 2  # the weights' float32 copies are what the GEMMs read
        results[(dtype, batch)] = {"steps_s": rate, "tok_s": rate * batch, "bw": nbytes * rate / bandwidth,
                                   "flop": 2 * nparams * batch * rate / peak[dtype], "gb": nbytes / 1e9, "share": share}
        if batch == 1:
            agree_rows = prompts(engine.tokenizer, n_agree, length)
            replies[dtype] = decode_rate(engine, agree_rows, 1, n_long)[1]
    engines.clear()
    base = results[("float32", 4)]["tok_s"]
    chosen_dtype = own
    chosen = results[(chosen_dtype, widest)]
    print(f"{'path':<28}{'steps/s':>9}{'tokens/s':>10}{'x old':>7}{'GB/step':>9}{'of bandwidth':>14}{'of matmul peak':>16}{'decode %':>10}")
    for (dtype, batch), r in results.items():
        mark = " *" if (dtype, batch) == (chosen_dtype, widest) else ("  (old path)" if (dtype, batch) == ("float32", 4) else "")
        print(f"{'transformers ' + dtype + ' x' + str(batch):<28}{r['steps_s']:>9.2f}{r['tok_s']:>10.1f}{r['tok_s'] / base:>7.2f}"
              f"{r['gb']:>9.2f}{r['bw']:>14.2f}{r['flop']:>16.2f}{100 * r['share']:>10.0f}{mark}")
    for name, why in (("llama-cpp-python", "no binary wheel on the package index (a source build of llama.cpp)"),
                      ("vllm (CPU)", "its CPU build is not on PyPI")):
        print(f"{name:<28} not measured: {why}")
    speedup = stagger["generate_s"] / stagger["loop_s"]
    print(f"ragged batch {own} x{widest} ({stagger['ended']:.0%} of rows end before step {n_long}; generate's useful row-steps "
          f"{stagger['useful']:.0%}): decoding generate {stagger['generate_s']:.1f} s, the engine's loop {stagger['loop_s']:.1f} s, "
          f"{speedup:.2f}x; identical replies {stagger['identical']:.0%} of rows")
    agree = agreement(replies["float32"], replies["bfloat16"]) if fast_bf16 else None
    if agree is not None:
        print(f"greedy agreement bfloat16 vs float32 (batch 1, {n_agree} prompts x {n_long} tokens): {agree:.1%} of positions before the first difference")
    figures = {
        "generation_old_tok_s": round(base, 2),
        "generation_current_tok_s": round(chosen["tok_s"], 2),
        "generation_speedup_vs_old": round(chosen["tok_s"] / base, 2),
        "generation_speedup_same_batch": round(results[(own, 4)]["tok_s"] / base, 2),
        "generation_bandwidth_fraction_batch1": round(results[(own, 1)]["bw"], 3),
        "generation_flop_fraction_current": round(chosen["flop"], 3),
        "generation_bf16_agreement": round(agree, 3) if agree is not None else None,
        "generation_drop_finished_speedup": round(speedup, 2),
        "generation_ragged_useful_share": round(stagger["useful"], 3),
        "generation_loop_identical_share": round(stagger["identical"], 3),
    }
    tf = transformers_baselines("tiny" if args.small else args.model, args.small, own)
    figures |= compare_ct2(tf, bandwidth)
    figures |= compare_ov(tf, bandwidth)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
