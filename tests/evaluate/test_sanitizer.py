"""compute-sanitizer after the trials (cuset.evaluate.sanitizer), with a fake sanitizer: a small
executable that answers as racecheck, memcheck or synccheck would, chosen per tool by a
behaviour file next to it. It runs in the real sandbox, as the real one would; no GPU needed."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from cuset.evaluate import sanitizer
from cuset.evaluate.suite.verify import sanitizer_lines

RACE = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at 0x1b0 in /tmp/x/solution_cuda.cu:14:block_sum(const float *, float *, int)
=========     and Read access at 0x2f0 in /tmp/x/solution_cuda.cu:18:block_sum(const float *, float *, int) [248 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
========= ERROR SUMMARY: 1 error
"""
MEMORY = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at relu_kernel(const float *, float *, int)+0x90 in solution_cuda.cu:9
=========     by thread (64,0,0) in block (15,0,0)
=========     Address 0x7f3a2c001000 is out of bounds
=========
========= ERROR SUMMARY: 3 errors
"""
SYNC = """========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block
=========     at reduce(const float *, float *, int)+0x1d0 in solution_cuda.cu:21
=========     by thread (37,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
"""
CLEAN = """========= COMPUTE-SANITIZER
========= ERROR SUMMARY: 0 errors
"""
FAKE = f"""#!{sys.executable}
import json, os, sys, time
here = os.path.dirname(os.path.realpath(__file__))
args = sys.argv[1:]
tool = args[args.index("--tool") + 1]
code = int(args[args.index("--error-exitcode") + 1])
program = args[args.index("--print-limit") + 2:]
want = ["-m", "cuset.evaluate.backends", "cuda", "solution.py", "task.py", "--trials", "1"]
if program[1:len(want) + 1] != want or "--no-poison" not in program or not os.path.isfile("solution.py"):
    print("========= bad command: " + " ".join(program))
    print("========= ERROR SUMMARY: 99 errors")
    sys.exit(code)
outputs = json.load(open(os.path.join(here, "outputs.json")))
behaviour = json.load(open(os.path.join(here, "behaviour.json"))).get(tool, "clean")
if behaviour == "hang":
    time.sleep(600)
if behaviour == "silent":
    sys.exit(3)
print(outputs[behaviour], end="")
print(json.dumps({{"status": "ran"}}))
sys.exit(code if behaviour != "clean" else 0)
"""


def _fake(folder: Path, **behaviour: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "compute-sanitizer"
    exe.write_text(FAKE)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
    (folder / "behaviour.json").write_text(json.dumps(behaviour))
    (folder / "outputs.json").write_text(json.dumps({"clean": CLEAN, "race": RACE, "memory": MEMORY, "sync": SYNC}))
    for path in folder.iterdir():
        path.chmod(path.stat().st_mode | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(0o755)
    return exe


@pytest.fixture
def candidate(tmp_path):
    sol, task = tmp_path / "solution.py", tmp_path / "task.py"
    sol.write_text("# ModelNew\n")
    task.write_text("# Model\n")
    return sol, task


def _check(tmp_path, monkeypatch, candidate, status="correct", tools=sanitizer.DEFAULT_TOOLS, timeout=10.0, **behaviour):
    exe = _fake(tmp_path / "bin", **behaviour)
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(exe))
    result = {"status": status, "correct": status == "correct", "message": "", "wall_s": 4.0}
    return sanitizer.sanitize(result, *candidate, timeout=timeout, env={}, tools=tools)


def test_parse_reads_the_error_count_and_the_first_report_line():
    assert sanitizer.parse(RACE) == (1, "Error: Race reported between Write access at 0x1b0 in "
                                        "/tmp/x/solution_cuda.cu:14:block_sum(const float *, float *, int)")
    assert sanitizer.parse(MEMORY) == (3, "Invalid __global__ write of size 4 bytes")
    assert sanitizer.parse(SYNC) == (1, "Barrier error detected. Divergent thread(s) in block")
    assert sanitizer.parse(CLEAN) == (0, "")
    assert sanitizer.parse("Traceback (most recent call last):\n  boom") == (None, "")


def test_a_clean_candidate_stays_correct_with_every_tool_run_and_timed(tmp_path, monkeypatch, candidate):
    result = _check(tmp_path, monkeypatch, candidate)
    assert result["status"] == "correct" and result["correct"] is True
    runs = result["sanitizer"]["runs"]
    assert [r["tool"] for r in runs] == ["racecheck", "memcheck", "synccheck"]
    assert [(r["errors"], r["ending"]) for r in runs] == [(0, "clean")] * 3
    assert result["sanitizer"]["note"] == "clean" and result["sanitizer"]["finding"] is None
    assert result["sanitizer_s"] == pytest.approx(sum(r["s"] for r in runs)) and result["sanitizer_s"] > 0
    assert result["wall_s"] == 4.0  # the trials' time is kept apart


@pytest.mark.parametrize("tool, behaviour, status, line", [
    ("racecheck", "race", "race", "Error: Race reported between Write access"),
    ("memcheck", "memory", "memory_error", "Invalid __global__ write of size 4 bytes"),
    ("synccheck", "sync", "sync_error", "Barrier error detected. Divergent thread(s) in block"),
])
def test_a_finding_is_its_own_verdict_with_the_tools_first_line(tmp_path, monkeypatch, candidate, tool, behaviour, status, line):
    result = _check(tmp_path, monkeypatch, candidate, **{tool: behaviour})
    assert result["status"] == status and result["correct"] is False
    assert result["message"].startswith(f"compute-sanitizer {tool}: {line}")
    assert result["sanitizer"]["finding"] == tool
    tools = [r["tool"] for r in result["sanitizer"]["runs"]]
    assert tools == list(sanitizer.DEFAULT_TOOLS[:sanitizer.DEFAULT_TOOLS.index(tool) + 1])  # the first finding stops the rest


def test_only_a_correct_candidate_is_sanitized(tmp_path, monkeypatch, candidate):
    calls = []
    monkeypatch.setattr(sanitizer, "run_tool", lambda *a, **k: calls.append(a) or {})
    result = _check(tmp_path, monkeypatch, candidate, status="wrong_result", racecheck="race")
    assert calls == [] and result["status"] == "wrong_result"
    assert result["sanitizer"]["note"] == "not run: the candidate is wrong_result, not correct"


def test_not_found_says_where_it_looked_and_keeps_the_verdict(monkeypatch, candidate, tmp_path):
    monkeypatch.delenv("CUSET_COMPUTE_SANITIZER", raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sanitizer, "CUDA_DEFAULT", str(tmp_path / "no-default"))
    assert sanitizer.find_executable() == (None, [str(tmp_path / "no-cuda" / "bin" / "compute-sanitizer"),
                                                  str(tmp_path / "no-default" / "bin" / "compute-sanitizer"), "PATH"])
    result = sanitizer.sanitize({"status": "correct", "correct": True, "message": ""}, *candidate, timeout=10.0, env={})
    assert result["status"] == "correct"
    assert result["sanitizer"]["note"].startswith("compute-sanitizer not found (looked in ")
    assert str(tmp_path / "no-cuda" / "bin" / "compute-sanitizer") in result["sanitizer"]["note"]
    assert result["sanitizer"]["runs"] == [] and result["sanitizer_s"] == 0.0


def test_a_hanging_sanitizer_is_killed_and_the_candidate_counts_as_unchecked(tmp_path, monkeypatch, candidate):
    monkeypatch.setattr(sanitizer, "MIN_WALL_S", 1.0)
    result = _check(tmp_path, monkeypatch, candidate, timeout=0.5, tools=("racecheck",), racecheck="hang")
    run = result["sanitizer"]["runs"][0]
    assert run["ending"].startswith("timeout") and run["s"] < 30
    assert result["status"] == "correct" and result["sanitizer"]["note"] == "unchecked: racecheck (" + run["ending"] + ")"


def test_a_sanitizer_that_ends_without_its_summary_is_not_a_finding(tmp_path, monkeypatch, candidate):
    result = _check(tmp_path, monkeypatch, candidate, tools=("memcheck",), memcheck="silent")
    assert result["status"] == "correct"
    assert result["sanitizer"]["runs"][0]["ending"].startswith("no summary")


def test_unknown_tools_are_refused_by_name(candidate):
    with pytest.raises(ValueError, match=r"sanitizer tools \['racecheck', 'leakcheck'\]: choose from racecheck, memcheck"):
        sanitizer.sanitize({"status": "correct"}, *candidate, timeout=1.0, env={}, tools=("racecheck", "leakcheck"))


def test_the_stage_runs_on_cuda_only_and_the_off_flag_runs_nothing(monkeypatch, tmp_path, candidate):
    calls = []
    monkeypatch.setattr(sanitizer, "run_tool", lambda *a, **k: calls.append(a) or {})
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(_fake(tmp_path / "bin", racecheck="race")))
    correct = {"status": "correct", "correct": True, "message": ""}
    off = sanitizer.stage(dict(correct), "cuda", False, *candidate, timeout=10.0, env={})
    assert calls == [] and off["status"] == "correct" and off["sanitizer_s"] == 0.0
    assert off["sanitizer"]["note"] == "off (sanitizer=False, --no-sanitizer)"
    for backend in ("cpu", "compile"):  # the cpu emulator checks races and bounds itself
        assert sanitizer.stage(dict(correct), backend, True, *candidate, timeout=10.0, env={}) == correct
    assert calls == []
    monkeypatch.undo()
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(_fake(tmp_path / "bin", racecheck="race")))
    assert sanitizer.stage(dict(correct), "cuda", True, *candidate, timeout=10.0, env={})["status"] == "race"


def test_check_solution_refuses_unknown_tools_and_the_cli_says_so(candidate, capsys):
    from cuset.evaluate import check

    sol, task = candidate
    with pytest.raises(ValueError, match="sanitizer tools"):
        check.check_solution(sol, task, backend="cuda", sanitizer_tools=("nope",))
    from cuset.cli import main

    assert main(["check", str(sol), "--task", str(task), "--backend", "cuda", "--sanitizer-tools", "nope"]) == 2
    assert "cuset check: error: sanitizer tools ['nope']: choose from racecheck" in capsys.readouterr().err


def test_suite_lines_count_findings_references_and_time():
    rows = [
        {"backend": "cuda", "task": "t1", "solution": "reference", "bug": "", "status": "correct", "sanitizer": "clean", "sanitizer_s": 30.0},
        {"backend": "cuda", "task": "t1", "solution": "wrong_1", "bug": "missing_sync", "status": "race", "sanitizer": "racecheck",
         "sanitizer_s": 10.0},
        {"backend": "cuda", "task": "t1", "solution": "wrong_2", "bug": "missing_sync", "status": "wrong_result",
         "sanitizer": "not run: the candidate is wrong_result, not correct", "sanitizer_s": 0.0},
        {"backend": "cuda", "task": "t2", "solution": "wrong_1", "bug": "off_by_one_guard", "status": "memory_error", "sanitizer": "memcheck",
         "sanitizer_s": 20.0},
        {"backend": "cpu", "task": "t1", "solution": "reference", "bug": "", "status": "correct"},
    ]
    assert sanitizer_lines(rows) == [
        "- cuda sanitizer: ran over 3 candidates the trials passed, 2 findings (race 1, memory_error 1, sync_error 0); "
        "extra time per candidate: mean 20.0 s, median 20.0 s",
        "- cuda references still correct with the sanitizer: 1/1",
        "- cuda missing_sync bugs caught: 2/2",
    ]
    off = [{"backend": "cuda", "solution": "reference", "status": "correct", "sanitizer": "off (sanitizer=False, --no-sanitizer)",
            "sanitizer_s": 0.0}]
    assert sanitizer_lines(off) == ["- cuda sanitizer: not run (off (sanitizer=False, --no-sanitizer))"]
    assert sanitizer_lines(rows[-1:]) == []
