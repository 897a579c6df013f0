"""Conformance of the CPU backend on NVIDIA's own self-checking cuda-samples.

    python -m benchmarks.cuda_samples --samples PATH            # every sample of the list
    python -m benchmarks.cuda_samples --samples PATH --small    # a handful (what CI runs)
    CUDA_SAMPLES_DIR=PATH python -m benchmarks.cuda_samples --only vectorAdd,matrixMul

PATH is a checkout of github.com/NVIDIA/cuda-samples (the folder holding Samples/ and
Common/), or a bare git directory of it (the `fetch` tool's snapshot): the folders the list
needs are then exported into a temporary folder first (blobs the snapshot lacks, such as
large .docx files, are skipped). No NVIDIA code lives in this repository: the list
(benchmarks/cuda_samples.yaml) names each sample's folder, sources, flags, small-size
arguments and the line its own self-check prints. Without a snapshot the runner says why it
skips and still ends with its JSON line (CI has no snapshot).

Each sample is built with the emulator (cuset.evaluate.cpu.build, -I its folder and Common)
and run in its own folder. Verdict: `pass` when the program exits 0 and prints the expected
line; `unsupported` when the build or the emulator names a construct it refuses; `fail`
otherwise, with the reason (the compiler's first error, the device fault, the exit code and
the last line printed). A device fault (illegal address, divergence, deadlock) in a sample
that runs correctly on a GPU counts as a false fault. A full run writes
benchmarks/reports/cuda_samples.md and .json. The last line printed is one JSON object:
{"cuda_samples_passed": N, "cuda_samples_chosen": M, "pass_share": x, "false_faults": k}.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

LIST = Path(__file__).with_name("cuda_samples.yaml")
REPORT_DIR = Path(__file__).parent / "reports"
ENV_VAR = "CUDA_SAMPLES_DIR"
SMALL_COUNT = 5
RESULTS = ("pass", "fail", "unsupported")


@dataclass
class SampleSpec:
    """One sample of the list: where it is, how to build it, how to run it small, what it prints."""

    name: str
    folder: str  # relative to the snapshot root, e.g. Samples/0_Introduction/vectorAdd
    files: list[str]  # sources to compile, relative to `folder` (headers are found by #include)
    expect: str  # a regular expression its self-check prints on success
    args: list[str] = field(default_factory=list)  # program arguments (small problem sizes)
    include: list[str] = field(default_factory=list)  # extra -I folders, relative to the root
    defines: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # extra g++ flags (e.g. -fopenmp)
    small: bool = False  # part of the --small set
    timeout_s: float = 120.0
    note: str = ""  # why these arguments, or what the sample checks

    def __post_init__(self) -> None:
        where = f"{LIST.name}: sample {self.name!r}"
        if not self.files:
            raise ValueError(f"{where}: 'files' is empty; name the .cu/.cpp sources to compile")
        if not self.folder.startswith("Samples/"):
            raise ValueError(f"{where}: folder {self.folder!r} must start with Samples/")
        try:
            re.compile(self.expect)
        except re.error as e:
            raise ValueError(f"{where}: 'expect' is not a regular expression: {e}") from e
        if self.timeout_s <= 0:
            raise ValueError(f"{where}: timeout_s must be positive")


def load_specs(path: Path = LIST) -> list[SampleSpec]:
    """The list, validated: unknown keys and duplicate names are errors naming the sample."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise ValueError(f"{path}: expected a mapping with a 'samples' list")
    known = set(SampleSpec.__dataclass_fields__)
    specs, seen = [], set()
    for i, entry in enumerate(data["samples"]):
        if not isinstance(entry, dict) or "name" not in entry:
            raise ValueError(f"{path}: entry {i} has no 'name'")
        extra = set(entry) - known
        if extra:
            raise ValueError(f"{path}: sample {entry['name']!r}: unknown keys {sorted(extra)}; known: {sorted(known)}")
        if entry["name"] in seen:
            raise ValueError(f"{path}: sample {entry['name']!r} listed twice")
        seen.add(entry["name"])
        specs.append(SampleSpec(**entry))
    return specs


def category(spec: SampleSpec) -> str:
    """The samples' top folder, e.g. 0_Introduction."""
    return spec.folder.split("/")[1]


# --- the snapshot ------------------------------------------------------------------------------


def is_bare_git(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / "Samples").is_dir()


def locate_snapshot(arg: str | None) -> tuple[Path | None, str]:
    """The snapshot to use (from --samples, else $CUDA_SAMPLES_DIR), or None and why not."""
    raw = arg or os.environ.get(ENV_VAR)
    if not raw:
        return None, f"no cuda-samples snapshot given: pass --samples PATH or set {ENV_VAR} (a checkout of NVIDIA/cuda-samples, or a bare git dir of it)"
    path = Path(raw).expanduser()
    if not path.exists():
        return None, f"cuda-samples snapshot {path}: no such folder"
    if is_bare_git(path):
        return path, ""
    if not (path / "Samples").is_dir() or not (path / "Common").is_dir():
        return None, f"cuda-samples snapshot {path}: no Samples/ and Common/ folders in it (is it a cuda-samples checkout?)"
    return path, ""


def export_bare(git_dir: Path, folders: list[str], dest: Path) -> int:
    """Write the files under `folders` at HEAD of a bare repository into `dest`; returns how
    many blobs the snapshot lacks (skipped: a snapshot may leave its largest files out)."""
    listing = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "-z", "HEAD", "--", *folders], capture_output=True, check=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha.decode(), path.decode()))
    proc = subprocess.Popen(["git", "-C", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    missing = 0
    for sha, rel in entries:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            missing += 1
            continue
        body = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(body)
    proc.stdin.close()
    proc.wait()
    return missing


# --- one sample --------------------------------------------------------------------------------


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def run_sample(spec: SampleSpec, root: Path) -> dict[str, Any]:
    """Build and run one sample; a result row (never raises for the sample's own problems)."""
    from cuset.evaluate.cpu.build import build_program
    from cuset.evaluate.cpu.run import RunOptions, execute

    row: dict[str, Any] = {"sample": spec.name, "category": category(spec), "result": "fail", "reason": "", "build_s": None, "run_s": None,
                           "cached": False, "false_fault": False, "note": spec.note}
    folder = root / spec.folder
    sources = [folder / f for f in spec.files]
    missing = [str(s.relative_to(root)) for s in sources if not s.is_file()]
    if missing:
        row["reason"] = f"not in the snapshot: {', '.join(missing)}"
        return row
    t0 = time.perf_counter()
    binary = folder / f"{spec.name}.cuset"
    build = build_program(sources, include_dirs=[folder, root / "Common", *[root / d for d in spec.include]], defines=spec.defines,
                          extra_flags=spec.flags, output=binary)
    row["build_s"] = round(time.perf_counter() - t0, 2)
    row["cached"] = build.cached
    if build.status == "unsupported":
        row["result"] = "unsupported"
        row["reason"] = "unsupported: " + "; ".join(sorted({u.feature for u in build.unsupported}))
        return row
    if not build.ok:
        row["reason"] = f"{build.status.replace('_', ' ')}: {_first_error(build.message, root)}"
        return row
    res = execute(binary, spec.args, RunOptions(), timeout=spec.timeout_s, cwd=folder)
    row["run_s"] = round(res.wall_s, 2)
    out = res.stdout + "\n" + res.stderr
    found = re.search(spec.expect, out, re.M) is not None
    if res.status == "ok" and found:
        row["result"] = "pass"
        return row
    if res.status == "device_fault":
        if res.message.startswith("unsupported:"):
            row["result"] = "unsupported"
            row["reason"] = res.message
        else:
            row["false_fault"] = True
            row["reason"] = f"device fault: {res.message}"
        return row
    if res.status == "timeout":
        row["reason"] = f"timeout: no exit within {spec.timeout_s:g} s (last line: {_last_line(res.stdout)!r})"
    elif res.status == "ok":
        row["reason"] = f"exit 0 but no line matching {spec.expect!r} (last line: {_last_line(out)!r})"
    else:
        row["reason"] = f"{res.message}; last line: {_last_line(out)!r}"
    return row


def _first_error(message: str, root: Path) -> str:
    """The line that says what is wrong: the linker's missing symbol, else g++'s first error."""
    lines = [ln.replace(str(root) + "/", "") for ln in message.splitlines() if ln.strip()]
    err = next((ln for ln in lines if "undefined reference" in ln or "multiple definition" in ln), None)
    err = err or next((ln for ln in lines if "error" in ln), lines[0] if lines else "")
    return err.strip()[:300]


# --- the whole list ------------------------------------------------------------------------------


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    passed = sum(r["result"] == "pass" for r in rows)
    return {"cuda_samples_passed": passed, "cuda_samples_chosen": len(rows), "pass_share": round(passed / len(rows), 3) if rows else None,
            "unsupported": sum(r["result"] == "unsupported" for r in rows), "false_faults": sum(bool(r["false_fault"]) for r in rows)}


def table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width table for the terminal."""
    head = f"{'sample':28s} {'result':11s} {'build s':>8s} {'run s':>7s}  reason"
    lines = [head, "-" * len(head)]
    for r in rows:
        b = "-" if r["build_s"] is None else f"{r['build_s']:.1f}" + ("c" if r["cached"] else "")
        t = "-" if r["run_s"] is None else f"{r['run_s']:.1f}"
        lines.append(f"{r['sample']:28s} {r['result']:11s} {b:>8s} {t:>7s}  {r['reason']}")
    return "\n".join(lines)


def markdown(rows: list[dict[str, Any]], summary: dict[str, Any], snapshot: str) -> str:
    """The committed report: the summary, then one row per sample."""
    out = ["# CPU backend on NVIDIA cuda-samples", "",
           f"Snapshot: {snapshot}. Generated by `python -m benchmarks.cuda_samples --samples PATH` (list: benchmarks/cuda_samples.yaml).", "",
           f"**{summary['cuda_samples_passed']} of {summary['cuda_samples_chosen']} pass** ({summary['pass_share']:.0%}); "
           f"{summary['unsupported']} unsupported, {summary['false_faults']} false device faults. "
           "Anchor: cuda4cpu passes 42 of its 61 samples.", "",
           "Build seconds include translation and g++ (a `c` marks a cached build); run seconds are the program's wall clock.", "",
           "| sample | category | result | build s | run s | reason |", "|---|---|---|---:|---:|---|"]
    for r in rows:
        b = "" if r["build_s"] is None else f"{r['build_s']:.1f}" + (" c" if r["cached"] else "")
        t = "" if r["run_s"] is None else f"{r['run_s']:.1f}"
        reason = r["reason"] + (f" ({r['note']})" if r.get("note") and r["result"] != "pass" else "")
        reason = reason.replace("|", "\\|")
        out.append(f"| {r['sample']} | {r['category']} | {r['result']} | {b} | {t} | {reason} |")
    return "\n".join(out) + "\n"


def _snapshot_label(path: Path) -> str:
    git_dir = path if is_bare_git(path) else path / ".git"
    try:
        head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        return f"NVIDIA/cuda-samples @ {head[:12]}"
    except (subprocess.CalledProcessError, OSError):
        return f"NVIDIA/cuda-samples at {path.name}"


def select(specs: list[SampleSpec], small: bool, only: str | None) -> list[SampleSpec]:
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {s.name for s in specs}
        bad = [n for n in names if n not in known]
        if bad:
            raise SystemExit(f"--only: unknown samples {bad}; known: {', '.join(sorted(known))}")
        return [s for s in specs if s.name in names]
    if small:
        return [s for s in specs if s.small][:SMALL_COUNT]
    return specs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", help=f"cuda-samples checkout or bare git dir (default: ${ENV_VAR})")
    ap.add_argument("--small", action="store_true", help=f"only the {SMALL_COUNT} samples marked small (what CI runs)")
    ap.add_argument("--only", help="comma-separated sample names")
    ap.add_argument("--list", default=str(LIST), help="the sample list (YAML)")
    ap.add_argument("--report", action="store_true", help="write benchmarks/reports/cuda_samples.{md,json} (default: on a full run)")
    args = ap.parse_args(argv)
    specs = select(load_specs(Path(args.list)), args.small, args.only)
    snapshot, why = locate_snapshot(args.samples)
    if snapshot is None:
        print(f"cuda_samples: skipped: {why}")
        print(json.dumps({"cuda_samples_passed": None, "cuda_samples_chosen": len(specs), "pass_share": None, "false_faults": None, "skipped": why}))
        return 0
    with tempfile.TemporaryDirectory(prefix="cuset-cuda-samples-") as tmp:
        root = snapshot
        if is_bare_git(snapshot):
            root = Path(tmp) / "cuda-samples"
            missing = export_bare(snapshot, sorted({s.folder for s in specs} | {"Common"}), root)
            print(f"exported {len(specs)} sample folders and Common from {snapshot} ({missing} blobs absent from the snapshot)")
        else:
            # a checkout is never written into: work on a copy of the folders the list needs
            import shutil

            root = Path(tmp) / "cuda-samples"
            for rel in sorted({s.folder for s in specs} | {"Common"}):
                shutil.copytree(snapshot / rel, root / rel, symlinks=True)
        rows = []
        for spec in specs:
            row = run_sample(spec, root)
            rows.append(row)
            b = "-" if row["build_s"] is None else f"{row['build_s']:.1f}"
            t = "-" if row["run_s"] is None else f"{row['run_s']:.1f}"
            print(f"  {spec.name:28s} {row['result']:11s} build {b:>6s} s run {t:>6s} s  {row['reason']}", flush=True)
    summary = summarise(rows)
    print()
    print(table(rows))
    if args.report or not (args.small or args.only):
        REPORT_DIR.mkdir(parents=True, exist_ok=True)
        label = _snapshot_label(snapshot)
        (REPORT_DIR / "cuda_samples.md").write_text(markdown(rows, summary, label), encoding="utf-8")
        (REPORT_DIR / "cuda_samples.json").write_text(json.dumps({"snapshot": label, "summary": summary, "samples": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"\nreport: {REPORT_DIR / 'cuda_samples.md'}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
