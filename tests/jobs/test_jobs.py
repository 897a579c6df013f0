"""Background jobs on the tiny preset: lost after SIGKILL and resumed from a checkpoint, the
queue, cancelling a multi-process job, the store under concurrent writers and readers, and a
database from before the Ray columns."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuset import jobs
from cuset.jobs.runner import group_members
from cuset.train.recipe import last_checkpoint
from tests.jobs.conftest import processes_naming, tiny, wait_for

REPO = Path(__file__).resolve().parents[2]


def test_a_killed_job_is_lost_then_resumes_from_its_checkpoint(workspace):
    job = jobs.submit(tiny(max_steps=16, save_steps=4))
    checkpoints = job.folder / "checkpoints"
    # complete: trainer_state.json is written last, and is empty while being written
    wait_for(lambda: last_checkpoint(checkpoints) is not None, 90, "the first complete checkpoint")
    running = jobs.get(job.id)
    assert running.status == "running" and running.step < 16
    os.kill(running.pid, signal.SIGKILL)
    wait_for(lambda: not jobs.process_alive(running.pid, job.folder), 10, "the killed process to go")

    assert jobs.reconcile() == [job.id]
    lost = jobs.get(job.id)
    assert lost.status == "lost" and "last heartbeat" in lost.error and lost.last_heartbeat

    jobs.resume(job.id)
    done = jobs.wait(job.id, timeout=120)
    assert done.status == "completed", jobs.read_log(job.id)
    resumed = done.result["resumed_from"]
    assert resumed.startswith("checkpoint-") and 4 <= int(resumed.split("-")[1]) < 16
    assert f"resuming from {resumed}" in jobs.read_log(job.id, 0)
    assert [r["step"] for r in jobs.read_job_metrics(job.id)] == list(range(1, 17))
    assert (done.attempts, done.step, done.total_steps) == (2, 16, 16)


def test_resume_skips_a_checkpoint_cut_while_its_state_was_written(tmp_path):
    """A job killed while transformers writes a checkpoint's trainer_state.json (seen in CI:
    empty file, JSONDecodeError on resume) resumes from the newest checkpoint that is whole."""
    for step, text in ((4, '{"global_step": 4}'), (8, ""), (12, '{"global_st')):
        (tmp_path / f"checkpoint-{step}").mkdir()
        (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text(text)
    (tmp_path / "checkpoint-16").mkdir()  # no state yet
    assert last_checkpoint(tmp_path) == tmp_path / "checkpoint-4"
    (tmp_path / "checkpoint-4" / "trainer_state.json").write_text("")
    assert last_checkpoint(tmp_path) is None


def test_a_queued_job_is_started_by_the_job_that_frees_the_slot(workspace, monkeypatch):
    monkeypatch.setenv("CUSET_MAX_JOBS", "1")
    first = jobs.submit(tiny(max_steps=2))
    second = jobs.submit(tiny(max_steps=2))
    assert (first.status, second.status) == ("starting", "queued")
    store = jobs.JobStore()
    # No reconcile() here: only the first job's process can start the second.
    wait_for(lambda: store.get(second.id).status == "completed", 120, "the queued job to run")
    assert store.get(first.id).status == "completed"
    assert store.get(second.id).started >= store.get(first.id).finished


@pytest.mark.slow
def test_cancelling_a_two_process_job_leaves_no_process_behind(workspace):
    job = jobs.submit(tiny(max_steps=5000, save_steps=5000, nproc=2))
    wait_for(lambda: jobs.get(job.id).step >= 1, 90, "the first step")
    pgid = jobs.get(job.id).pid
    assert len(processes_naming(job.folder.resolve())) >= 3  # torchrun and two workers
    cancelled = jobs.cancel(job.id, grace=5)
    assert cancelled.status == "cancelled" and cancelled.finished
    assert group_members(pgid) == []
    assert processes_naming(job.folder.resolve()) == []
    with pytest.raises(jobs.JobError, match="only queued or running"):
        jobs.cancel(job.id)


READER = """
import sys, time
from cuset import jobs
ids = [int(x) for x in sys.argv[1:]]
reads = 0
while True:
    listed = jobs.list_jobs()
    states = [jobs.get(i).status for i in ids]
    for i in ids:
        jobs.read_job_metrics(i)
    jobs.reconcile()
    reads += 1
    if all(s in jobs.FINAL for s in states):
        break
    time.sleep(0.05)
print(reads)
"""


def test_two_jobs_and_three_readers_share_the_store_without_locking_errors(workspace, monkeypatch):
    monkeypatch.setenv("CUSET_MAX_JOBS", "2")
    a = jobs.submit(tiny("sft", max_steps=6, save_steps=3))
    b = jobs.submit(tiny("cuset", max_steps=6, save_steps=3))  # scores first: more writers
    assert a.status == b.status == "starting"
    readers = [
        subprocess.Popen([sys.executable, "-c", READER, str(a.id), str(b.id)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [r.communicate(timeout=180) for r in readers]
    for reader, (out, err) in zip(readers, outputs):
        assert reader.returncode == 0, err
        assert "locked" not in err and int(out.strip()) > 10
    for job_id in (a.id, b.id):
        done = jobs.get(job_id)
        assert done.status == "completed", jobs.read_log(job_id)
        assert "locked" not in jobs.read_log(job_id, 0)


OLD_JOBS_TABLE = """
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, method TEXT NOT NULL DEFAULT '',
    preset TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
    phase TEXT NOT NULL DEFAULT '', step INTEGER NOT NULL DEFAULT 0, total_steps INTEGER NOT NULL DEFAULT 0,
    eta_s REAL, pid INTEGER, attempts INTEGER NOT NULL DEFAULT 1, error TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL, started REAL, finished REAL, last_heartbeat REAL
);
INSERT INTO jobs (kind, method, preset, model, status, step, total_steps, result, created, finished)
VALUES ('train', 'sft', 'tiny', 'tiny', 'completed', 4, 4, '{"final_loss": 9.5}', 1.0, 2.0);
"""


def test_a_database_from_before_the_ray_columns_gains_them_and_keeps_its_jobs(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_JOBS_TABLE)
    store = jobs.JobStore(path)
    old = store.get(1)
    assert (old.status, old.result, old.ray_address, old.ray_job_id, old.on_ray) == ("completed", {"final_loss": 9.5}, "", "", False)
    new_id = store.create("train", "cuset", "tiny", "tiny", ray_address="http://127.0.0.1:8265")
    assert store.get(new_id).on_ray
    assert [j.id for j in store.list(on_ray=False)] == [1] and [j.id for j in store.list(on_ray=True)] == [new_id]
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(jobs)")]
    assert columns[-2:] == ["ray_address", "ray_job_id"]


def _finished_lora_job(store: jobs.JobStore) -> jobs.Job:
    """A completed LoRA fine-tune as the recipe leaves one (no training runs): config.yaml,
    final/ with a random tiny adapter and the tokenizer, metrics and result."""
    from cuset import models
    from cuset.train import TrainConfig
    from tests.generate.test_source import lora_adapter

    job_id = store.create("train", "cuset", "tiny", "tiny")
    folder = jobs.job_folder(job_id)
    TrainConfig.from_preset("tiny", method="cuset", lora_r=4, lora_alpha=8, output_dir="").save(folder / "config.yaml")
    lora_adapter(folder / "final", seed=3)
    models.load_tokenizer("tiny")[0].save_pretrained(folder / "final")
    (folder / "metrics.jsonl").write_text('{"step": 2, "loss": 1.5}\n')
    result = {"method": "cuset", "steps": 2, "final_loss": 1.5, "final_model": str(folder / "final")}
    store.update(job_id, status="completed", step=2, total_steps=2, started=100.0, finished=160.0, result=result)
    return store.get(job_id)


def test_a_kept_lora_fine_tune_is_restored_into_another_workspace(workspace, tmp_path, monkeypatch):
    """keep_finished copies the adapter (not the tokenizer) and records; restore_finished makes
    it a completed job of a fresh workspace whose final/ is the same adapter, byte for byte,
    and which generation resolves as a LoRA on its base."""
    from cuset.generate import resolve_source
    from cuset.jobs.store import jobs_dir
    from cuset.train.keep import KEPT_MARKER, keep_finished, restore_finished

    job = _finished_lora_job(jobs.JobStore())
    original = job.folder  # a job's folder is read off the workspace of the moment
    kept = tmp_path / "results" / "models" / "tiny-cuset-s42"
    line = keep_finished(job.id, kept)
    assert f"kept in {kept}" in line
    assert sorted(p.name for p in (kept / "final").iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    assert {"config.yaml", "metrics.jsonl", "result.json", KEPT_MARKER} <= {p.name for p in kept.iterdir()}
    assert not list(kept.parent.glob(".*"))  # no partial copy left
    assert keep_finished(job.id, kept) == ""  # kept already
    line = keep_finished(job.id, tmp_path / "small", limit_mb=0.001)  # too big: the records only, nothing to restore
    assert "over the" in line and "records kept" in line
    assert (tmp_path / "small" / "metrics.jsonl").is_file() and not (tmp_path / "small" / "kept.json").exists()
    assert not (tmp_path / "small" / "final").exists()

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))
    store = jobs.JobStore()
    store.create("eval", "sft", "", "tiny")  # the fresh workspace has a job 1 already
    restored = restore_finished(kept, store)
    assert restored.id == 2 and restored.status == "completed" and restored.kind == "train" and restored.method == "cuset"
    assert (restored.step, restored.started, restored.finished) == (2, 100.0, 160.0)
    assert restored.result["final_model"] == str(jobs.job_folder(2) / "final") and restored.result["final_loss"] == 1.5
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        assert (jobs.job_folder(2) / "final" / name).read_bytes() == (original / "final" / name).read_bytes()
    source = resolve_source("job:2")
    assert (source.kind, source.base, source.job_id) == ("lora", "tiny", 2)
    assert "restored as job 2" in (jobs.job_folder(2) / "log.txt").read_text()
    assert restore_finished(tmp_path / "nothing-kept", store) is None
    weights = kept / "final" / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + bytes(8))
    with pytest.raises(jobs.JobError, match="adapter_model.safetensors: not the adapter kept.json records"):
        restore_finished(kept, store)
    (kept / "result.json").write_text("{not json")
    with pytest.raises(jobs.JobError, match="not a readable kept fine-tune"):
        restore_finished(kept, store)
    assert [j.id for j in store.list()] == [2, 1] and not list(jobs_dir().glob(".*"))  # nothing added, nothing left over

    monkeypatch.setenv("CUSET_WORKSPACE", str(workspace))  # the original job again: its adapter replaces the broken copy
    assert "replacing the copy of another adapter" in keep_finished(job.id, kept)
    assert restore_finished(kept, store) is not None


def test_a_full_fine_tune_keeps_its_records_but_not_its_weights(workspace, tmp_path):
    """Its weights are hundreds of MB; its metrics and log are what a results folder needs to
    show how it trained. Nothing makes the records a restorable model (no kept.json)."""
    from cuset.train.keep import KEPT_MARKER, keep_finished, restore_finished

    store = jobs.JobStore()
    job_id = store.create("train", "sft", "tiny", "tiny")
    folder = jobs.job_folder(job_id)
    (folder / "final").mkdir(parents=True)
    (folder / "final" / "config.json").write_text("{}")
    (folder / "final" / "model.safetensors").write_bytes(b"weights")
    (folder / "metrics.jsonl").write_text('{"step": 1, "nll": 1.5}\n')
    (folder / "log.txt").write_text("step 1/1\n")
    store.update(job_id, status="completed", result={"final_model": str(folder / "final"), "final_loss": 1.5})
    kept = tmp_path / "kept"
    line = keep_finished(job_id, kept)
    assert "its records kept" in line and "full fine-tune" in line
    assert sorted(p.name for p in kept.iterdir()) == ["log.txt", "metrics.jsonl", "result.json"]
    assert (kept / "metrics.jsonl").read_text() == '{"step": 1, "nll": 1.5}\n' and json.loads((kept / "result.json").read_text())["final_loss"] == 1.5
    assert keep_finished(job_id, kept) == ""  # the same records: nothing rewritten
    (folder / "metrics.jsonl").write_text('{"step": 1, "nll": 1.5}\n{"step": 2, "nll": 1.0}\n')
    assert "records kept" in keep_finished(job_id, kept) and "step\": 2" in (kept / "metrics.jsonl").read_text()
    assert restore_finished(kept, store) is None and not (kept / KEPT_MARKER).exists()
    (kept / KEPT_MARKER).write_text("{}")  # a kept adapter there is never replaced by records
    assert "holds a kept adapter" in keep_finished(job_id, kept) and (kept / KEPT_MARKER).read_text() == "{}"
    store.update(job_id, status="running")
    assert "not a completed fine-tune" in keep_finished(job_id, tmp_path / "kept")


def test_a_job_with_nothing_done_yet_reports_its_time_left_as_unknown_not_zero(workspace):
    """An evaluation whose 49 rows all run to the token cap finishes none until the end: before
    the first one its time left is unknown (the experiment then counts the unit's estimate), and
    once rows finish it is the remaining rows at the rate so far."""
    from cuset.jobs.reporter import run_as_job

    store = jobs.JobStore()
    job_id = store.create("eval", "sft", "cpu", "smollm2-135m")
    folder = jobs.job_folder(job_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "job.json").write_text(json.dumps({"id": job_id, "db": str(store.path.resolve())}))
    seen = []

    def work(progress):
        progress("generating", 0, 49)
        seen.append(store.get(job_id).eta_s)
        time.sleep(0.6)  # past the reporter's half-second throttle
        progress("generating", 7, 49)
        seen.append(store.get(job_id).eta_s)
        return {"n_replies": 49}

    assert run_as_job(folder, work) == 0
    assert seen[0] is None
    assert seen[1] is not None and seen[1] > 0
    assert store.get(job_id).status == "completed"


def test_an_adapter_another_results_folder_keeps_is_named_not_copied(workspace, tmp_path, monkeypatch):
    """A later experiment adopting the pilot's (restored) fine-tune keeps its records and names
    the pilot's copy in kept.json instead of a second copy of the weights; restoring it reads the
    weights from there, and says which folder is missing when that copy is gone."""
    from cuset.train.keep import KEPT_MARKER, keep_finished, restore_finished

    job = _finished_lora_job(jobs.JobStore())
    first = tmp_path / "results" / "pilot" / "models" / "tiny-cuset-s42"
    assert f"kept in {first}" in keep_finished(job.id, first)
    second = tmp_path / "results" / "later" / "models" / "tiny-cuset-s42"
    line = keep_finished(job.id, second)
    assert f"is the one kept in {first}" in line and "not copied" in line
    meta = json.loads((second / KEPT_MARKER).read_text())
    assert meta["same_as"] == "../../../pilot/models/tiny-cuset-s42" and not (second / "final").exists()
    assert meta["files"] == json.loads((first / KEPT_MARKER).read_text())["files"]
    assert keep_finished(job.id, second) == ""  # kept already (by name)

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "fresh-ws"))
    store = jobs.JobStore()
    restored = restore_finished(second, store)
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        assert (restored.folder / "final" / name).read_bytes() == (first / "final" / name).read_bytes()
    (first / "final" / "adapter_model.safetensors").unlink()
    with pytest.raises(jobs.JobError, match=r"adapter_model.safetensors: missing \(kept.json names ../../../pilot"):
        restore_finished(second, store)
    assert [j.id for j in store.list()] == [restored.id]  # the failed restore added no job
