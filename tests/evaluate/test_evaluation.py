"""Evaluation runs: hostile and broken candidates are contained and named while the run goes
on; the suite's own solutions through run_evaluation; an evaluation as a background job."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from cuset.evaluate.evaluation import EvalConfig, run_evaluation, submit_evaluation
from cuset.evaluate.harness import Candidate, evaluate_candidates
from cuset.evaluate.results import ResultStore

KB = Path(__file__).parent / "kernelbench"
TASK = (KB / "add_task.py").read_text()
GOOD = (KB / "add_solution.py").read_text()
MARKER = Path(__file__).resolve().parents[2] / "hostile-candidate-was-here"


def with_kernel_body(body: str) -> str:
    return GOOD.replace("    if (i < n) {\n        out[i] = a[i] + b[i];\n    }", body)


def with_prelude(code: str) -> str:
    """The good solution with `code` run when the module is imported."""
    return code + "\n" + GOOD


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 in the test's own network namespace; counts connections."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    hits = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                hits.append(conn.recv(100))
                conn.close()
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1], hits
    stop.set()
    t.join()
    srv.close()


def test_hostile_candidates_are_contained_and_named_while_the_run_goes_on(listener):
    port, hits = listener
    MARKER.unlink(missing_ok=True)
    cases = {
        "good": GOOD,
        "infinite_loop": with_kernel_body("    while (true) { if (i < 0) out[0] = 1.0f; }"),
        "fork_bomb": with_prelude("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"),
        "alloc_50gb": with_prelude("buffer = bytearray(50 * 2**30)"),
        "write_outside": with_prelude(f"open({str(MARKER)!r}, 'w').write('x')"),
        "network": with_prelude(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'leak')"),
        "segfault": with_prelude("import ctypes\nctypes.string_at(0)"),
        "output_1gb": with_prelude("import sys\nchunk = 'x' * 2**20\nfor _ in range(1024):\n    sys.stdout.write(chunk)"),
        "no_code": "",
    }
    cands = [Candidate(task_id=name, sample=0, code=code, task_text=TASK) for name, code in cases.items()]
    records = {r["task_id"]: r for r in evaluate_candidates(cands, timeout=40, workers=2)}
    status = {k: r["status"] for k, r in records.items()}
    assert status["good"] == "correct"
    assert status["infinite_loop"] == "timeout"
    assert status["fork_bomb"] == "resource_limit" and "processes" in records["fork_bomb"]["message"]
    assert status["alloc_50gb"] == "resource_limit" and "memory" in records["alloc_50gb"]["message"]
    # the repo is bound read-only (or not writable by the sandbox's user): either way the write fails
    assert status["write_outside"] == "runtime_error"
    assert "Permission denied" in records["write_outside"]["message"] or "Read-only file system" in records["write_outside"]["message"]
    assert not MARKER.exists()
    assert status["network"] == "runtime_error" and hits == []
    assert status["segfault"] == "runtime_error" and "signal 11" in records["segfault"]["message"]
    assert status["output_1gb"] == "resource_limit" and "output" in records["output_1gb"]["message"]
    assert (status["no_code"], records["no_code"]["message"]) == ("compile_error", "no code in the reply")


def test_reference_and_wrong_solutions_of_the_suite_through_a_run():
    store = ResultStore()
    good = run_evaluation(EvalConfig(solutions="reference", levels=[1], limit=2), store=store)
    bad = run_evaluation(EvalConfig(solutions="wrong", levels=[1], limit=2), store=store)
    frame = store.frame([good, bad])
    assert frame[frame["run_id"] == good]["correct"].all()
    assert not frame[frame["run_id"] == bad]["correct"].any()
    run = store.get_run(good)
    assert run["status"] == "completed" and run["summary"]["correct_rate"] == 1.0 and run["summary"]["pass@1"] == 1.0
    assert run["method"] == "reference" and run["config"]["levels"] == [1]


def test_an_evaluation_runs_as_a_background_job_with_generated_candidates():
    from cuset import jobs

    config = EvalConfig(model="tiny", limit=1, max_new_tokens=8, trials=1)
    job = submit_evaluation(config)
    assert job.kind == "eval"
    done = jobs.wait(job.id, timeout=300)
    assert done.status == "completed", jobs.read_log(job.id)
    run_id = done.result["eval_run"]
    frame = ResultStore().frame([run_id])
    assert len(frame) == 1 and frame.loc[0, "reply"] != ""  # the tiny model wrote something (not a solution)
    assert frame.loc[0, "status"] == "compile_error"
    run = ResultStore().get_run(run_id)
    assert run["eval_job"] == job.id
    generation = run["summary"]["generation"]  # how the replies ended, for the eos-share figures
    assert generation["n_replies"] == 1 and generation["n_tokens"] <= 8 and generation["dtype"] == "float32"
    assert generation["eos_share"] == generation["finished_eos"] / 1 and generation["batch_size"] == 48


def test_an_evaluation_generates_on_the_engine_its_config_names_and_records_it():
    """EvalConfig.engine reaches generation: a run on ctranslate2 (int8, the tiny model converted
    once) stores its replies with the engine, its version and the weights dtype in the run's
    generation summary. An unknown engine, or int8 weights on transformers, is refused up front."""
    config = EvalConfig(model="tiny", limit=1, max_new_tokens=8, trials=1, engine="ctranslate2", dtype="int8")
    store = ResultStore()
    run_id = run_evaluation(config, store=store)
    generation = store.get_run(run_id)["summary"]["generation"]
    assert generation["engine"] == "ctranslate2" and generation["dtype"] == "int8" and generation["engine_version"]
    assert generation["n_replies"] == 1 and store.frame([run_id]).loc[0, "reply"] != ""
    with pytest.raises(ValueError, match="engine='llamacpp'"):
        EvalConfig(model="tiny", engine="llamacpp")
    with pytest.raises(ValueError, match="int8 weights run under engine ctranslate2 only"):
        EvalConfig(model="tiny", dtype="int8")


def test_training_corpus_solutions_pass_through_the_same_harness():
    """One corpus solution per family through the evaluation harness (the whole corpus:
    `cuset eval --suite corpus --solutions reference`; all 213 passed when last run)."""
    from cuset.evaluate.evaluation import build_candidates, select_tasks

    config = EvalConfig(suite="corpus", solutions="reference")
    tasks = select_tasks(config)
    assert len(tasks) == 213
    one_each = list({t.family: t for t in tasks}.values())
    records = evaluate_candidates(build_candidates(config, one_each), workers=2)
    assert len(records) == 8
    assert all(r["status"] == "correct" for r in records), [(r["task_id"], r["message"]) for r in records if not r["correct"]]


def test_a_pytorch_passthrough_is_not_a_kernel():
    passthrough = "import torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a + b\n"
    (record,) = evaluate_candidates([Candidate("passthrough", 0, passthrough, TASK)], workers=1)
    assert record["status"] == "reward_hack" and "passthrough is not a kernel" in record["message"]
