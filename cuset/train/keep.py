"""A finished fine-tune kept outside the workspace, and restored into another: so that an
experiment whose workspace was replaced evaluates the same weights instead of training them again.

    line = keep_finished(job_id, Path("analysis/results/NAME/models/MODEL-METHOD-sSEED"))
    job = restore_finished(Path("analysis/results/NAME/models/MODEL-METHOD-sSEED"))   # None: nothing kept

Of a LoRA fine-tune the adapter (tens of MB) and the job's records are kept, with each adapter
file's size and sha256 in kept.json; of a full fine-tune only the records (its weights are
hundreds of MB), which no restore makes a model. Both copies are whole or not at all.

An adapter another results folder keeps already (e.g. the pilot's fine-tune adopted by a later
experiment) is not copied again: kept.json names that folder (`same_as`, relative) and restore
reads the weights from there, checked against the same sizes and sha256.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from cuset.jobs.store import COMPLETED, Job, JobError, JobStore, job_folder, jobs_dir
from cuset.train.config import TrainConfig

ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
KEPT_RECORDS = ("config.yaml", "data.json", "metrics.jsonl", "log.txt")
KEPT_MARKER = "kept.json"  # written last: a folder without it is an unfinished copy


def _digest(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_record(path: Path) -> dict[str, Any] | None:
    """{"bytes", "sha256"} of a file, None when it is missing."""
    return {"bytes": path.stat().st_size, "sha256": _digest(path)} if path.is_file() else None


def _adapter_digests(final: Path) -> dict[str, Any] | None:
    """Each adapter file's _file_record by name, None where one is missing."""
    records = {name: _file_record(final / name) for name in ADAPTER_FILES}
    return None if None in records.values() else records


def _final_of(kept: Path, meta: dict[str, Any]) -> Path:
    """The final/ folder holding the adapter kept.json describes: the kept folder's own, or
    that of the folder it names as `same_as`."""
    twin = meta.get("same_as")
    return (kept / twin).resolve() / "final" if isinstance(twin, str) and twin else kept / "final"


def _twin(dest: Path, digests: dict[str, Any]) -> Path | None:
    """Another results folder's kept copy of the same adapter (its own final/, whose files match
    `digests`), or None: the folders searched are RESULTS/*/models/* beside dest's RESULTS/NAME/models/UNIT."""
    parents = dest.resolve().parents
    if len(parents) < 3:
        return None
    results = parents[2]
    for marker in sorted(results.glob(f"*/{dest.parent.name}/*/{KEPT_MARKER}")):
        folder = marker.parent
        if folder == dest.resolve():
            continue
        try:
            meta = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        if not meta.get("same_as") and meta.get("files") == digests and _adapter_digests(folder / "final") == digests:
            return folder
    return None


def keep_finished(job_id: int, dest: Path, limit_mb: float = 64.0, store: JobStore | None = None, records_only: bool = False) -> str:
    """Copy completed fine-tune `job_id`'s LoRA adapter (final/: adapter config and weights,
    the tokenizer is its base's) and its records into `dest`, whole or not at all; kept.json
    records each adapter file's size and sha256; of a full fine-tune only the records are kept
    (`_keep_records`). Returns a line saying what was kept, or why not (no final model, an
    adapter over `limit_mb`, a disk error);
    '' when `dest` already holds this adapter (a copy of another is replaced). Where another
    results folder keeps the same adapter (`_twin`), kept.json names it instead of a second copy
    of the weights. The job's files are read from this workspace's jobs folder, so `store` must be
    this workspace's. `records_only` keeps the records of a LoRA fine-tune too, without its adapter
    (a validation experiment's: read, never evaluated)."""
    dest = Path(dest)
    job = (store or JobStore()).get(job_id)
    if job.kind != "train" or job.status != COMPLETED:
        return f"job {job_id} is not a completed fine-tune ({job.kind}, {job.status}); nothing kept"
    if records_only:
        return _keep_records(job, dest, "records only were asked for")
    final = Path(str(job.result.get("final_model") or job_folder(job_id) / "final"))
    files = [final / name for name in ADAPTER_FILES]
    if not final.is_dir():
        return f"job {job_id} has no final model at {final}; nothing kept"
    if not all(f.is_file() for f in files):
        return _keep_records(job, dest)
    size_mb = sum(f.stat().st_size for f in files) / 2**20
    if size_mb > limit_mb:  # its records still show how it trained; the adapter stays in the workspace only
        return _keep_records(job, dest, f"its adapter is {size_mb:.0f} MB, over the {limit_mb:.0f} MB kept; it stays in {final}")
    digests = _adapter_digests(final)
    replaced = ""
    if (dest / KEPT_MARKER).is_file():
        try:
            old = json.loads((dest / KEPT_MARKER).read_text())
            if old.get("files") == digests == _adapter_digests(_final_of(dest, old)):
                return ""
        except (OSError, ValueError):
            pass
        replaced = " (replacing the copy of another adapter there)"
    meta = {"job": job.id, "method": job.method, "preset": job.preset, "model": job.model, "started": job.started,
            "finished": job.finished, "steps": job.step, "adapter_mb": round(size_mb, 1), "files": digests}
    twin = _twin(dest, digests)
    if twin is not None:
        meta["same_as"] = os.path.relpath(twin, dest.resolve())
    try:
        contents = {**_record_contents(job), KEPT_MARKER: json.dumps(meta, indent=2).encode()}
        _replace_folder(dest, contents, {} if twin else {f"final/{f.name}": f for f in files})
    except OSError as exc:
        return f"job {job_id}'s adapter not kept in {dest}: {exc}"
    if twin is not None:
        return (f"job {job_id}'s records kept in {dest}; its adapter ({size_mb:.0f} MB) is the one kept in {twin}, "
                f"named there, not copied{replaced}")
    return f"job {job_id}'s adapter ({size_mb:.0f} MB) and records kept in {dest}{replaced}"


def _record_contents(job: Job) -> dict[str, bytes]:
    """The job's records by file name (KEPT_RECORDS that exist, and result.json)."""
    folder = job_folder(job.id)
    contents = {name: (folder / name).read_bytes() for name in KEPT_RECORDS if (folder / name).is_file()}
    contents["result.json"] = json.dumps(job.result, indent=2).encode()
    return contents


def _keep_records(job: Job, dest: Path, why: str = "a full fine-tune's weights are too large to commit") -> str:
    """A fine-tune's records without its weights (a full fine-tune's are hundreds of MB): its config, data counts,
    per-step metrics, log and result, so a results folder still shows how it trained (its loss
    and NLL curves) after the workspace is gone. No kept.json, so nothing restores it as a model;
    a kept adapter already in `dest` is left alone. '' when `dest` holds these records already."""
    if (dest / KEPT_MARKER).is_file():
        return f"job {job.id}'s records: {dest} holds a kept adapter; left as it is"
    try:
        contents = _record_contents(job)
        if all((dest / name).is_file() and (dest / name).read_bytes() == data for name, data in contents.items()):
            return ""
        _replace_folder(dest, contents)
    except OSError as exc:
        return f"job {job.id}'s records not kept in {dest}: {exc}"
    return f"job {job.id}: its records kept in {dest}, not its weights ({why})"


def _replace_folder(dest: Path, contents: dict[str, bytes], copies: dict[str, Path] | None = None) -> None:
    """Make `dest` hold exactly `contents` (relative name -> bytes) and `copies` (relative name
    -> file to copy), whole or not at all: built in a temporary folder beside it, then renamed."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would make the kept folder private to this user
        for name, source in (copies or {}).items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, tmp / name)
        for name, data in contents.items():  # KEPT_MARKER last in `contents`: written after everything else
            (tmp / name).write_bytes(data)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def restore_finished(kept: Path, store: JobStore | None = None) -> Job | None:
    """A fine-tune kept by `keep_finished` as a completed job of this workspace (its folder holds
    the same final/ adapter, checked against kept.json's sizes and sha256; `output_dir` is reset
    to the job's folder); None when `kept` holds no finished copy. Raises JobError, adding no
    job, when the copy is unreadable or its adapter is not the one recorded."""
    kept = Path(kept)
    if not (kept / KEPT_MARKER).is_file():
        return None
    store = store or JobStore()
    try:
        meta = json.loads((kept / KEPT_MARKER).read_text())
        result = json.loads((kept / "result.json").read_text())
        config = TrainConfig.load(kept / "config.yaml")
        method, preset, model, recorded = meta["method"], meta["preset"], meta["model"], meta["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JobError(f"{kept}: not a readable kept fine-tune ({type(exc).__name__}: {exc})") from None
    final = _final_of(kept, meta)
    for name in ADAPTER_FILES:
        path = final / name
        have = _file_record(path)
        if have is None or have != recorded.get(name):
            named = f" (kept.json names {meta['same_as']} as the folder keeping it)" if meta.get("same_as") else ""
            raise JobError(f"{path}: {'missing' if have is None else 'not the adapter kept.json records (size or sha256 differ)'}"
                           f"{named}; the copy is incomplete (a partial checkout, or a Git LFS pointer?)")
    jobs_dir().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".restoring-", dir=jobs_dir()))
    job_id = None
    try:
        shutil.copytree(kept, tmp, dirs_exist_ok=True)
        if final != kept / "final":
            (tmp / "final").mkdir(exist_ok=True)
            for name in ADAPTER_FILES:
                shutil.copyfile(final / name, tmp / "final" / name)
        (tmp / KEPT_MARKER).unlink()
        config.output_dir = ""
        config.save(tmp / "config.yaml")
        job_id = store.record_finished("train", method, preset, model, {}, meta.get("started"), meta.get("finished"),
                                       int(meta.get("steps") or 0), phase=f"restored from {kept}"[:200])
        folder = job_folder(job_id)
        result["final_model"] = str(folder / "final")
        (tmp / "result.json").write_text(json.dumps(result, indent=2))
        (tmp / "job.json").write_text(json.dumps({"id": job_id, "db": str(store.path.resolve()), "nproc": config.nproc}))
        with open(tmp / "log.txt", "a", encoding="utf-8") as log:
            log.write(f"\nrestored as job {job_id} from {kept} (job {meta.get('job')} of another workspace)\n")
        if folder.exists():  # a folder no row of this store owns (its database was removed by hand): set aside, not lost
            os.replace(folder, folder.with_name(f".orphan-{job_id}-{int(time.time())}"))
        os.replace(tmp, folder)
        store.update(job_id, result=result)
    except BaseException:
        if job_id is not None:
            store.delete(job_id)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return store.get(job_id)
