"""compute-sanitizer after the trials (cuset.evaluate.sanitizer), with a fake sanitizer: a small
executable that answers as racecheck, memcheck or synccheck would, chosen per tool by a
behaviour file next to it, and logs each call (its argv and what its working folder holds) into
that folder. It runs in the real sandbox, as the real one would; no GPU needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cuset.evaluate import sanitizer
from cuset.evaluate.sandbox import scratch
from cuset.evaluate.suite.verify import backend_table, matches, sanitizer_cell, sanitizer_fields, sanitizer_lines, table_markdown

# Output in the format compute-sanitizer prints (racecheck's analysis report, memcheck's invalid
# access, synccheck's barrier error), as NVIDIA's documentation shows it.
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
UNSUPPORTED = """========= COMPUTE-SANITIZER
========= Error: Device not supported
========= ERROR SUMMARY: 0 errors
"""
FAKE = f"""#!{sys.executable}
import json, os, sys, time
here = os.path.dirname(os.path.realpath(__file__))
args = sys.argv[1:]
tool = args[args.index("--tool") + 1]
code = int(args[args.index("--error-exitcode") + 1])
program = args[args.index("--print-limit") + 2:]
outputs = json.load(open(os.path.join(here, "outputs.json")))
behaviour = json.load(open(os.path.join(here, "behaviour.json")))
if program[1] == "-c":  # the probe: memcheck over a one-tensor torch program
    if behaviour.get("probe") == "unsupported":
        print(outputs["unsupported"], end="")
    else:
        print("cuset-probe 8.0")
        print(outputs["clean"], end="")
    sys.exit(0)
with open("sanitizer-calls.jsonl", "a") as log:
    log.write(json.dumps({{"argv": sys.argv, "handover": sorted(os.listdir("handover/inputs"))}}) + "\\n")
kind = behaviour.get(tool, "clean")
if kind == "hang":
    time.sleep(600)
if kind == "silent":
    sys.exit(3)
print(outputs["clean" if kind == "norun" else kind], end="")
print(json.dumps({{"status": "runtime_error" if kind == "norun" else "ran"}}))
sys.exit(0 if kind in ("clean", "norun") else code)
"""


def _fake(folder: Path, **behaviour: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "compute-sanitizer"
    exe.write_text(FAKE)
    (folder / "behaviour.json").write_text(json.dumps(behaviour))
    (folder / "outputs.json").write_text(json.dumps({"clean": CLEAN, "race": RACE, "memory": MEMORY, "sync": SYNC, "unsupported": UNSUPPORTED}))
    for path in folder.iterdir():
        path.chmod(0o755)
    folder.chmod(0o755)
    return exe


@pytest.fixture
def trials_folder():
    """A folder as the trials leave it: solution.py, task.py, handover/inputs (the sandbox user may write)."""
    with scratch(prefix="cuset-test-sanitizer-") as folder:
        (folder / "solution.py").write_text("# ModelNew\n")
        (folder / "task.py").write_text("# Model\n")
        (folder / "handover" / "inputs").mkdir(parents=True)
        (folder / "handover" / "inputs" / "trial_0.json").write_text("{}")
        for path in [folder / "handover", folder / "handover" / "inputs", folder / "handover" / "inputs" / "trial_0.json"]:
            path.chmod(0o755)
        yield folder


def _calls(folder: Path) -> list[dict]:
    log = folder / "sanitizer-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _correct() -> dict:
    return {"status": "correct", "correct": True, "message": "", "wall_s": 4.0}


def _sanitize(tmp_path, monkeypatch, folder, status="correct", tools=sanitizer.DEFAULT_TOOLS, timeout=10.0, **behaviour):
    exe = _fake(tmp_path / "bin", **behaviour)
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(exe))
    result = {**_correct(), "status": status, "correct": status == "correct"}
    return sanitizer.sanitize(result, folder, timeout=timeout, env={}, tools=tools)


def test_parse_reads_the_error_count_and_the_first_report_line():
    assert sanitizer.parse(RACE) == (1, "Error: Race reported between Write access at 0x1b0 in "
                                        "/tmp/x/solution_cuda.cu:14:block_sum(const float *, float *, int)")
    assert sanitizer.parse(MEMORY) == (3, "Invalid __global__ write of size 4 bytes")
    assert sanitizer.parse(SYNC) == (1, "Barrier error detected. Divergent thread(s) in block")
    assert sanitizer.parse(CLEAN) == (0, "")
    assert sanitizer.parse("Traceback (most recent call last):\n  boom") == (None, "")
    mixed = "program output\n" + MEMORY.replace("3 errors", "12 errors") + '{"status": "ran"}\n'
    assert sanitizer.parse(mixed) == (12, "Invalid __global__ write of size 4 bytes")


def test_the_command_wraps_the_trials_program_for_one_trial_without_poison_or_timing():
    argv = sanitizer.command("/cs", "racecheck", sanitizer.trial_program(7))
    assert argv == ["/cs", "--tool", "racecheck", "--error-exitcode", "86", "--print-limit", "20", sys.executable, "-m",
                    "cuset.evaluate.backends", "cuda", "solution.py", "task.py", "--trials", "1", "--seed", "7", "--handover", "handover",
                    "--timing-runs", "0", "--no-poison"]


def test_a_clean_candidate_stays_correct_with_every_tool_run_and_timed(tmp_path, monkeypatch, trials_folder):
    result = _sanitize(tmp_path, monkeypatch, trials_folder)
    assert result["status"] == "correct" and result["correct"] is True
    info = result["sanitizer"]
    assert (info["verdict"], info["finding"], info["note"]) == ("clean", None, "clean")
    assert [(r["tool"], r["errors"], r["ending"]) for r in info["runs"]] == [(t, 0, "clean") for t in sanitizer.DEFAULT_TOOLS]
    assert result["sanitizer_s"] == pytest.approx(sum(r["s"] for r in info["runs"]), abs=0.01) and result["sanitizer_s"] > 0
    assert result["wall_s"] == 4.0  # the trials' time is kept apart
    calls = _calls(trials_folder)
    assert [c["argv"][2] for c in calls] == list(sanitizer.DEFAULT_TOOLS)
    assert calls[0]["argv"][1:] == sanitizer.command("x", "racecheck", sanitizer.trial_program())[1:]  # in the trials' folder, on their inputs
    assert calls[0]["handover"] == ["trial_0.json"]


@pytest.mark.parametrize("tool, behaviour, status, line", [
    ("racecheck", "race", "race", "Error: Race reported between Write access at 0x1b0"),
    ("memcheck", "memory", "memory_error", "Invalid __global__ write of size 4 bytes"),
    ("synccheck", "sync", "sync_error", "Barrier error detected. Divergent thread(s) in block"),
])
def test_a_finding_is_its_own_verdict_with_the_tools_first_line(tmp_path, monkeypatch, trials_folder, tool, behaviour, status, line):
    result = _sanitize(tmp_path, monkeypatch, trials_folder, **{tool: behaviour})
    assert result["status"] == status and result["correct"] is False
    assert result["message"].startswith(f"compute-sanitizer {tool}: {line}")
    assert (result["sanitizer"]["verdict"], result["sanitizer"]["finding"]) == ("finding", tool)
    ran = list(sanitizer.DEFAULT_TOOLS[: sanitizer.DEFAULT_TOOLS.index(tool) + 1])
    assert [r["tool"] for r in result["sanitizer"]["runs"]] == ran
    assert [c["argv"][2] for c in _calls(trials_folder)] == ran  # the first finding stops the rest


def test_the_first_finding_stops_the_tools_after_it(tmp_path, monkeypatch, trials_folder):
    result = _sanitize(tmp_path, monkeypatch, trials_folder, tools=("memcheck", "racecheck", "synccheck"), memcheck="memory", racecheck="race")
    assert result["status"] == "memory_error"
    assert [c["argv"][2] for c in _calls(trials_folder)] == ["memcheck"]


def test_initcheck_is_optional_and_a_finding_of_it_is_a_memory_error(tmp_path, monkeypatch, trials_folder):
    assert "initcheck" not in sanitizer.DEFAULT_TOOLS
    result = _sanitize(tmp_path, monkeypatch, trials_folder, tools=("initcheck",), initcheck="memory")
    assert result["status"] == "memory_error" and result["sanitizer"]["finding"] == "initcheck"


def test_a_candidate_that_is_not_correct_is_never_sanitized(tmp_path, monkeypatch, trials_folder):
    result = _sanitize(tmp_path, monkeypatch, trials_folder, status="wrong_result", racecheck="race")
    assert result["status"] == "wrong_result" and _calls(trials_folder) == []
    assert result["sanitizer"]["verdict"] == "not run" and result["sanitizer_s"] == 0.0
    assert result["sanitizer"]["note"] == "not run: the candidate is wrong_result, not correct"
    assert str(tmp_path / "bin" / "compute-sanitizer") not in sanitizer._PROBED  # not even probed


def test_not_found_says_where_it_looked_and_keeps_the_verdict(monkeypatch, trials_folder, tmp_path):
    monkeypatch.delenv("CUSET_COMPUTE_SANITIZER", raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sanitizer, "CUDA_DEFAULT", str(tmp_path / "no-default"))
    looked = [str(tmp_path / "no-cuda" / "bin" / "compute-sanitizer"), str(tmp_path / "no-default" / "bin" / "compute-sanitizer"), "PATH"]
    assert sanitizer.find_executable() == (None, looked)
    result = sanitizer.sanitize(_correct(), trials_folder, timeout=10.0, env={})
    assert result["status"] == "correct" and result["correct"] is True
    info = result["sanitizer"]
    assert info["verdict"] == "not found" and info["runs"] == [] and result["sanitizer_s"] == 0.0
    assert info["note"] == f"compute-sanitizer not found (looked in {', '.join(looked)}): the verdict is the trials' alone"
    assert sanitizer.warning(probing=False).startswith("warning: compute-sanitizer not found (looked in ")


def test_an_explicit_path_that_is_not_there_is_not_found(monkeypatch, tmp_path):
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(tmp_path / "nope"))
    assert sanitizer.find_executable() == (None, [f"$CUSET_COMPUTE_SANITIZER={tmp_path / 'nope'}"])


def test_a_sanitizer_that_refuses_the_device_is_unusable_and_changes_nothing(tmp_path, monkeypatch, trials_folder):
    result = _sanitize(tmp_path, monkeypatch, trials_folder, probe="unsupported", racecheck="race")
    assert result["status"] == "correct" and _calls(trials_folder) == []
    assert result["sanitizer"]["verdict"] == "unusable"
    assert "does not work here (memcheck over a one-tensor torch program: Error: Device not supported" in result["sanitizer"]["note"]


def test_a_hanging_sanitizer_is_killed_at_its_limit_and_the_candidate_is_a_timeout(tmp_path, monkeypatch, trials_folder):
    monkeypatch.setattr(sanitizer, "MIN_WALL_S", 2.0)
    result = _sanitize(tmp_path, monkeypatch, trials_folder, timeout=0.5, tools=("racecheck", "memcheck"), racecheck="hang")
    run = result["sanitizer"]["runs"][0]
    assert run["ending"].startswith("timeout") and 2.0 <= run["s"] < 30
    assert result["status"] == "timeout" and result["correct"] is False
    assert result["message"] == ("compute-sanitizer racecheck ran past its 2 s limit: the candidate could not be checked for races, "
                                 "so it does not count as correct")
    assert result["sanitizer"]["verdict"] == "timeout" and [c["argv"][2] for c in _calls(trials_folder)] == ["racecheck"]


@pytest.mark.parametrize("behaviour, why", [
    ("silent", "no ERROR SUMMARY"),
    ("norun", "the program under memcheck did not get through its trial (runtime_error)"),
])
def test_a_sanitizer_run_that_proves_nothing_is_unchecked_not_a_finding(tmp_path, monkeypatch, trials_folder, behaviour, why):
    result = _sanitize(tmp_path, monkeypatch, trials_folder, tools=("memcheck", "synccheck"), memcheck=behaviour)
    assert result["status"] == "correct"
    assert result["sanitizer"]["verdict"] == "unchecked"
    assert result["sanitizer"]["note"].startswith(f"unchecked: memcheck ({why}")
    assert [r["ending"] for r in result["sanitizer"]["runs"]][1] == "clean"


def test_unknown_tools_are_refused_by_name(trials_folder):
    with pytest.raises(ValueError, match=r"sanitizer tools \['racecheck', 'leakcheck'\]: choose from racecheck, memcheck"):
        sanitizer.sanitize(_correct(), trials_folder, timeout=1.0, env={}, tools=("racecheck", "leakcheck"))


def test_the_stage_runs_on_cuda_only_and_the_off_flag_runs_nothing(monkeypatch, tmp_path, trials_folder):
    exe = _fake(tmp_path / "bin", racecheck="race")
    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(exe))
    off = sanitizer.stage(_correct(), "cuda", False, trials_folder, timeout=10.0, env={})
    assert off["status"] == "correct" and off["sanitizer_s"] == 0.0
    assert (off["sanitizer"]["verdict"], off["sanitizer"]["note"]) == ("off", "off (sanitizer=False, --no-sanitizer)")
    cpu = sanitizer.stage(_correct(), "cpu", True, trials_folder, timeout=10.0, env={})
    assert cpu["status"] == "correct" and cpu["sanitizer"]["verdict"] == "n/a"
    assert cpu["sanitizer"]["note"] == "n/a (cpu backend: the emulator checks races and bounds itself)"
    assert sanitizer.stage(_correct(), "compile", True, trials_folder, timeout=10.0, env={})["sanitizer"]["verdict"] == "n/a"
    assert _calls(trials_folder) == [] and str(exe) not in sanitizer._PROBED  # never invoked, not even probed
    on = sanitizer.stage(_correct(), "cuda", True, trials_folder, timeout=10.0, env={})
    assert on["status"] == "race" and len(_calls(trials_folder)) == 1


def test_check_solution_refuses_unknown_tools_and_the_cli_says_so(tmp_path, capsys):
    from cuset.cli import main
    from cuset.evaluate import check

    sol, task = tmp_path / "solution.py", tmp_path / "task.py"
    sol.write_text("# ModelNew\n")
    task.write_text("# Model\n")
    with pytest.raises(ValueError, match="sanitizer tools"):
        check.check_solution(sol, task, backend="cuda", sanitizer_tools=("nope",))
    assert main(["check", str(sol), "--task", str(task), "--backend", "cuda", "--sanitizer-tools", "nope"]) == 2
    assert "cuset check: error: sanitizer tools ['nope']: choose from racecheck" in capsys.readouterr().err


def test_cuset_check_warns_when_the_sanitizer_is_missing_also_with_json(tmp_path, monkeypatch, capsys):
    """No GPU here: the cuda check ends a runtime_error (nothing to sanitize), and the command still
    says that a correct candidate would not have been sanitized."""
    from cuset.cli import main
    from cuset.evaluate.suite import load_suite

    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(tmp_path / "nope"))
    absdiff = next(t for t in load_suite(levels=[1]) if t.id == "L1-absdiff")
    assert main(["check", str(absdiff.reference_path), "--task", str(absdiff.task_path), "--backend", "cuda", "--json"]) == 1
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert record["status"] == "runtime_error" and record["sanitizer"]["verdict"] == "not run"
    assert err.count("warning: compute-sanitizer not found (looked in $CUSET_COMPUTE_SANITIZER=") == 1


def test_eval_config_carries_the_sanitizer_settings_through_a_round_trip():
    from cuset.evaluate.evaluation import EvalConfig

    config = EvalConfig(backend="cuda", sanitizer=False, sanitizer_tools=["memcheck", "initcheck"])
    again = EvalConfig.from_dict(config.to_dict(), "test")
    assert (again.sanitizer, again.sanitizer_tools) == (False, ["memcheck", "initcheck"])
    assert (EvalConfig().sanitizer, EvalConfig().sanitizer_tools) == (True, list(sanitizer.DEFAULT_TOOLS))
    with pytest.raises(ValueError, match="sanitizer tools \\['leakcheck'\\]"):
        EvalConfig(sanitizer_tools=["leakcheck"])


def _srow(task, solution, status, verdict, seconds=0.0, bug="missing_sync", backend="cuda"):
    expect = "correct" if solution == "reference" else "wrong_result"
    return {"backend": backend, "task": task, "solution": solution, "bug": "" if solution == "reference" else bug, "expect": expect,
            "status": status, "ok": matches(backend, expect, status), "message": "", "wall_s": 1.0, "sanitizer": verdict,
            "sanitizer_s": seconds, "sanitizer_note": ""}


def test_rows_cells_and_lines_sum_up_the_sanitizer():
    assert sanitizer_fields({"sanitizer": {"verdict": "finding", "finding": "racecheck", "note": "racecheck: x"}, "sanitizer_s": 12.5}) == \
        {"sanitizer": "racecheck", "sanitizer_s": 12.5, "sanitizer_note": "racecheck: x"}
    assert sanitizer_fields({"status": "correct"}) == {}
    rows = [
        _srow("t1", "reference", "correct", "clean", 30.0),
        _srow("t1", "wrong_1", "race", "racecheck", 10.0),
        _srow("t1", "wrong_2", "wrong_result", "not run"),
        _srow("t2", "wrong_1", "memory_error", "memcheck", 20.0, bug="off_by_one_guard"),
        _srow("t2", "reference", "timeout", "timeout", 480.0),
        _srow("t1", "reference", "correct", "n/a", backend="cpu"),
    ]
    assert [sanitizer_cell(r) for r in rows] == ["clean 30 s", "racecheck 10 s", "not run", "memcheck 20 s", "timeout 480 s", ""]
    assert sanitizer_lines(rows) == [
        "- cuda sanitizer: ran over 4 candidates the trials passed: 2 findings (race 1, memory_error 1, sync_error 0), 1 timeout, "
        "0 unchecked; extra time per candidate: mean 135.0 s, median 25.0 s",
        "- cuda references correct with the sanitizer: 1/2",
        "- cuda missing_sync bugs caught: 2/2",
    ]
    off = [_srow("t1", "reference", "correct", "off")]
    off[0]["sanitizer_note"] = "off (sanitizer=False, --no-sanitizer)"
    assert sanitizer_lines(off) == ["- cuda sanitizer: ran over no candidate (off (sanitizer=False, --no-sanitizer))"]
    assert sanitizer_lines(rows[-1:]) == []


def test_the_table_has_a_sanitizer_column_and_a_caught_bug_counts_as_recorded():
    assert matches("cuda", "wrong_result", "race") and matches("cuda", "wrong_result", "wrong_result")
    assert not matches("cpu", "wrong_result", "race") and not matches("cuda", "correct", "race")
    rows = [_srow("t1", "reference", "correct", "clean", 30.0), _srow("t1", "wrong_1", "race", "racecheck", 10.0),
            _srow("t1", "reference", "correct", "n/a", backend="cpu"), _srow("t1", "wrong_1", "wrong_result", "n/a", backend="cpu")]
    backends, table = backend_table(rows)
    text = table_markdown(backends, table)
    assert "| task | solution | bug | expected | cuda | cpu | cuda sanitizer | same |" in text
    assert "| t1 | wrong_1 | missing_sync | wrong_result | race | wrong_result | racecheck 10 s | **no** |" in text
    assert "| t1 | reference | - | correct | correct | correct | clean 30 s | yes |" in text
    assert "- cuda: 2/2 solutions judged as the suite records" in text
    assert "sanitizer" not in table_markdown(*backend_table(rows[2:]))  # no column where nothing was sanitized


def test_the_suite_warns_once_before_a_cuda_run_without_a_sanitizer(monkeypatch, tmp_path, capsys):
    from cuset.evaluate.suite import verify as verify_module
    from cuset.evaluate.suite.__main__ import main as suite_main

    monkeypatch.setenv("CUSET_COMPUTE_SANITIZER", str(tmp_path / "nope"))
    monkeypatch.setattr(verify_module, "verify_task", lambda task, folder, backend, trials, timeout, sanitizer=True:
                        [_srow(task.id, "reference", "correct", "not found")])
    assert suite_main(["--verify", "--backend", "cuda", "--task", "L1-absdiff", "--task", "L1-relu6"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: compute-sanitizer not found") == 1
    assert suite_main(["--verify", "--backend", "cuda", "--task", "L1-absdiff", "--no-sanitizer"]) == 0
    assert "warning" not in capsys.readouterr().err
