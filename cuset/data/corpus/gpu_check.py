"""Run every corpus sample on a CUDA GPU and compare it with its reference task (KernelBench protocol).

    python cuset/data/corpus/gpu_check.py                         # all samples, one process each
    python cuset/data/corpus/gpu_check.py --jobs 8 --limit 20
    python cuset/data/corpus/gpu_check.py --ids relu-guarded-000,scan-cumsum-sharedmemory-000
    python cuset/data/corpus/gpu_check.py --batch 16 --jobs 16     # fast: one extension per 16 samples

Standalone on purpose: it needs only torch (with CUDA and a compiler toolchain) and the standard
library, so it can be copied to a GPU machine without the rest of the project.

Protocol per sample (as KernelBench): exec the task and the response in fresh namespaces; seed
42 before `get_init_inputs()` and before constructing each of Model and ModelNew (and copy
Model's state into ModelNew when the state-dict keys and shapes match); then `--trials` times,
with per-trial seeds drawn from a generator seeded 42, draw `get_inputs()`, move them to CUDA,
run both models under `no_grad`, and compare: same shape, `torch.allclose(atol, rtol)`, and a
constant output is rejected where the reference is not constant.

Isolation: every unit of work runs in its own Python process with its own
TORCH_EXTENSIONS_DIR, so a crash, a hang (`--timeout`) or a poisoned CUDA context costs only
that unit. `--batch N` packs N samples into one extension (each sample's CUDA in its own C++
namespace, bound as `s<k>__<function>`) because compiling against the torch headers dominates
the run time; samples whose batch fails to build or dies are rerun one by one.

Output: one JSON line per sample on stdout (`id`, `ok`, `stage`, `error`, `max_abs_diff`,
...), then one summary line `{"summary": ...}`; `--out FILE` also writes the sample lines there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "bundled" / "corpus.jsonl"
RESULT_PREFIX = "CUSET_RESULT "
_INCLUDE = re.compile(r"^\s*#include\s+\S+.*$", re.MULTILINE)
_DEFINE = re.compile(r"^\s*#define\s+(\w+)", re.MULTILINE)
_FATAL_CUDA = ("illegal memory access", "device-side assert", "unspecified launch failure", "misaligned address")


# ---------------------------------------------------------------- worker side (imports torch)


def _exec(source: str, label: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": label}
    exec(compile(source, label, "exec"), namespace)  # noqa: S102 - running the sample is the point
    return namespace


def _first_diff(out: Any, ref: Any, atol: float, rtol: float) -> dict[str, Any]:
    import torch

    bad = ~torch.isclose(out, ref, atol=atol, rtol=rtol)
    if not bool(bad.any()):
        return {}
    flat = int(bad.flatten().nonzero()[0])
    index = list(torch.unravel_index(torch.tensor(flat), ref.shape)) if ref.dim() else []
    return {
        "first_bad_index": [int(i) for i in index],
        "first_bad_out": float(out.flatten()[flat]),
        "first_bad_ref": float(ref.flatten()[flat]),
        "n_bad": int(bad.sum()),
    }


def check_sample(rec: dict[str, Any], build_model_new: Any, trials: int, atol: float, rtol: float) -> dict[str, Any]:
    """Check one sample. `build_model_new()` returns the response namespace (it may compile)."""
    import torch

    result: dict[str, Any] = {"id": rec["id"], "family": rec.get("family", ""), "ok": False, "stage": "task"}
    try:
        task_ns = _exec(rec["task"], f"task:{rec['id']}")
        torch.manual_seed(42)
        init_inputs = task_ns["get_init_inputs"]()
        torch.manual_seed(42)
        model = task_ns["Model"](*init_inputs).cuda().eval()
        result["stage"] = "compile"
        start = time.monotonic()
        resp_ns = build_model_new()
        result["compile_s"] = round(time.monotonic() - start, 2)
        result["stage"] = "init"
        torch.manual_seed(42)
        model_new = resp_ns["ModelNew"](*init_inputs).cuda().eval()
        ref_state, new_state = model.state_dict(), model_new.state_dict()
        if ref_state and {k: v.shape for k, v in ref_state.items()} == {k: v.shape for k, v in new_state.items()}:
            model_new.load_state_dict(ref_state)
        result["stage"] = "run"
        gen = torch.Generator().manual_seed(42)
        seeds = torch.randint(0, 2**31 - 1, (trials,), generator=gen).tolist()
        worst = 0.0
        for trial, seed in enumerate(seeds):
            torch.manual_seed(seed)
            inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task_ns["get_inputs"]()]
            with torch.no_grad():
                ref = model(*inputs)
                out = model_new(*inputs)
            torch.cuda.synchronize()
            if not isinstance(out, torch.Tensor) or out.shape != ref.shape:
                shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
                result.update(stage="compare", error=f"trial {trial}: output shape {shape} != reference {tuple(ref.shape)}")
                return result
            out, ref = out.float(), ref.float()
            diff = float((out - ref).abs().max()) if ref.numel() else 0.0
            worst = max(worst, diff) if diff == diff else float("inf")
            result["max_abs_diff"] = worst
            if not torch.allclose(out, ref, atol=atol, rtol=rtol):
                result.update(stage="compare", error=f"trial {trial}: outputs differ", **_first_diff(out, ref, atol, rtol))
                return result
            if ref.numel() > 1 and not bool((ref == ref.flatten()[0]).all()) and bool((out == out.flatten()[0]).all()):
                result.update(stage="compare", error=f"trial {trial}: constant output where the reference varies")
                return result
        result.update(ok=True, stage="done", trials=trials)
    except Exception as exc:  # a bad sample is a result, not a crash
        result["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        result["traceback"] = traceback.format_exc()[-3000:]
    return result


def _emit(result: dict[str, Any]) -> None:
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def _split_sources(sources: Any) -> str:
    return sources if isinstance(sources, str) else "\n".join(sources or [])


class _Recorder:
    """Stands in for load_inline while responses are exec'd; builds one extension for all."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.module: Any = None

    def __call__(self, name: str, cpp_sources: Any, cuda_sources: Any = None, functions: Any = None, **_: Any) -> _LazyExt:
        if isinstance(functions, str):
            functions = [functions]
        self.calls.append({"name": name, "cpp": _split_sources(cpp_sources), "cuda": _split_sources(cuda_sources),
                           "functions": list(functions or [])})
        return _LazyExt(self, len(self.calls) - 1)

    def sources(self) -> tuple[str, str]:
        """(cpp, cuda) of the combined extension: hoisted includes, one namespace per sample."""
        includes: list[str] = []
        cuda_blocks, cpp_blocks, defs = [], [], []
        for k, call in enumerate(self.calls):
            for inc in _INCLUDE.findall(call["cuda"]):
                if inc.strip() not in includes:
                    includes.append(inc.strip())
            body = _INCLUDE.sub("", call["cuda"])
            undefs = "".join(f"#undef {m}\n" for m in _DEFINE.findall(body))
            cuda_blocks.append(f"namespace cuset_s{k} {{\n{body}\n}}\n{undefs}")
            cpp_blocks.append(f"namespace cuset_s{k} {{\n{_INCLUDE.sub('', call['cpp'])}\n}}")
            defs += [f'    m.def("s{k}__{fn}", torch::wrap_pybind_function(cuset_s{k}::{fn}), "{fn}");' for fn in call["functions"]]
        cpp = "#include <torch/extension.h>\n" + "\n".join(cpp_blocks)
        cpp += "\n\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + "\n".join(defs) + "\n}\n"
        return cpp, "\n".join(includes) + "\n\n" + "\n".join(cuda_blocks)


class _LazyExt:
    def __init__(self, recorder: _Recorder, index: int) -> None:
        self._recorder = recorder
        self._index = index

    def __getattr__(self, fn: str) -> Any:
        if self._recorder.module is None:
            raise RuntimeError("the batch extension has not been built")
        return getattr(self._recorder.module, f"s{self._index}__{fn}")


def run_worker(records: list[dict[str, Any]], batch: bool, trials: int, atol: float, rtol: float, build_dir: Path) -> None:
    """Check `records` in this process, printing one result line each."""
    import torch
    import torch.utils.cpp_extension as cpp_ext

    if not torch.cuda.is_available():
        for rec in records:
            _emit({"id": rec["id"], "family": rec.get("family", ""), "ok": False, "stage": "setup", "error": "no CUDA device"})
        return
    if not batch:
        for rec in records:
            result = check_sample(rec, lambda rec=rec: _exec(rec["response"], f"response:{rec['id']}"), trials, atol, rtol)
            _emit(result)
            if any(s in str(result.get("error", "")) for s in _FATAL_CUDA):
                return  # the CUDA context is gone; the parent reruns what is left
        return
    recorder = _Recorder()
    real_load_inline = cpp_ext.load_inline
    namespaces: dict[str, dict[str, Any] | Exception] = {}
    cpp_ext.load_inline = recorder
    try:
        for rec in records:
            try:
                namespaces[rec["id"]] = _exec(rec["response"], f"response:{rec['id']}")
            except Exception as exc:
                namespaces[rec["id"]] = exc
    finally:
        cpp_ext.load_inline = real_load_inline
    cpp, cuda = recorder.sources()
    start = time.monotonic()
    try:
        recorder.module = real_load_inline(
            name=f"cuset_batch_{os.getpid()}", cpp_sources=[cpp], cuda_sources=[cuda], functions=None,
            build_directory=str(build_dir), verbose=False,
        )
    except Exception as exc:
        print(f"batch build failed: {exc}"[:4000], file=sys.stderr)
        return  # no result lines: the parent reruns these samples one by one
    build_s = round(time.monotonic() - start, 2)

    def built(sample_id: str) -> dict[str, Any]:
        ns = namespaces[sample_id]
        if isinstance(ns, Exception):
            raise ns
        return ns

    for rec in records:
        result = check_sample(rec, lambda rec=rec: built(rec["id"]), trials, atol, rtol)
        result["batch_build_s"] = build_s
        _emit(result)
        if any(s in str(result.get("error", "")) for s in _FATAL_CUDA):
            return


# ---------------------------------------------------------------- parent side (no torch needed)


def _run_unit(script: Path, args: argparse.Namespace, ids: list[str], batch: bool, build_root: Path) -> tuple[list[dict[str, Any]], str]:
    build_dir = Path(tempfile.mkdtemp(prefix="unit-", dir=build_root))
    cmd = [sys.executable, str(script), str(args.corpus), "--worker", "--ids", ",".join(ids), "--trials", str(args.trials),
           "--atol", str(args.atol), "--rtol", str(args.rtol), "--build-root", str(build_dir)]
    if batch:
        cmd.append("--worker-batch")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(build_dir / "ext"), PYTHONUNBUFFERED="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
        stdout, stderr, note = proc.stdout, proc.stderr, f"exit {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        note = f"timeout after {args.timeout}s"
    results = [json.loads(line[len(RESULT_PREFIX):]) for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    return results, f"{note}: {stderr[-1500:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS, help="the corpus JSONL")
    parser.add_argument("--jobs", type=int, default=4, help="parallel worker processes (compilation dominates)")
    parser.add_argument("--batch", type=int, default=0, help="samples per combined extension (0: one extension per sample)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N selected samples")
    parser.add_argument("--ids", default="", help="comma-separated sample ids")
    parser.add_argument("--family", action="append", help="only this family (repeatable)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--atol", type=float, default=1e-2)
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per worker process")
    parser.add_argument("--build-root", type=Path, help="where extensions are built (default: a temporary folder)")
    parser.add_argument("--out", type=Path, help="also write the per-sample JSON lines here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-batch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    records = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.ids:
        wanted = [i for i in args.ids.split(",") if i]
        by_id = {r["id"]: r for r in records}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            print(f"unknown sample ids: {missing}", file=sys.stderr)
            return 2
        records = [by_id[i] for i in wanted]
    if args.family:
        records = [r for r in records if r.get("family") in args.family]
    if args.limit:
        records = records[: args.limit]

    if args.worker:
        run_worker(records, args.worker_batch, args.trials, args.atol, args.rtol, args.build_root)
        return 0

    start = time.monotonic()
    build_root = args.build_root or Path(tempfile.mkdtemp(prefix="cuset-gpu-check-"))
    build_root.mkdir(parents=True, exist_ok=True)
    script = Path(__file__).resolve()
    results: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    out_file = args.out.open("w", encoding="utf-8") if args.out else None

    def record(result: dict[str, Any]) -> None:
        with lock:
            results[result["id"]] = result
            line = json.dumps({k: v for k, v in result.items() if k != "traceback" or not result.get("ok")})
            print(line, flush=True)
            if out_file:
                out_file.write(line + "\n")
                out_file.flush()

    def unit(ids: list[str], batch: bool) -> list[str]:
        got, note = _run_unit(script, args, ids, batch, build_root)
        for r in got:
            record(r)
        done = {r["id"] for r in got}
        left = [i for i in ids if i not in done]
        if left and not batch:
            record({"id": left[0], "ok": False, "stage": "crash", "error": note})
            left = left[1:]
        return left

    ids = [r["id"] for r in records]
    if args.batch > 0:
        groups: list[list[str]] = []
        for family in dict.fromkeys(r.get("family", "") for r in records):
            fam_ids = [r["id"] for r in records if r.get("family", "") == family]
            groups += [fam_ids[i : i + args.batch] for i in range(0, len(fam_ids), args.batch)]
        units = [(g, True) for g in groups]
    else:
        units = [([i], False) for i in ids]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        pending = {pool.submit(unit, ids_, batch): (ids_, batch) for ids_, batch in units}
        while pending:
            for fut in as_completed(list(pending)):
                pending.pop(fut)
                for sample_id in fut.result():  # unfinished samples: rerun one per process
                    pending[pool.submit(unit, [sample_id], False)] = ([sample_id], False)
                break
    if out_file:
        out_file.close()
    failed = sorted(i for i in ids if not results.get(i, {}).get("ok"))
    summary = {
        "summary": True, "n": len(ids), "correct": len(ids) - len(failed),
        "compiled": sum(1 for r in results.values() if r.get("stage") not in ("compile", "crash", "setup", "task")),
        "failed_ids": failed, "seconds": round(time.monotonic() - start, 1),
        "atol": args.atol, "rtol": args.rtol, "trials": args.trials, "batch": args.batch,
    }
    print(json.dumps(summary), flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
