"""The sandbox contains and names each hostile candidate from the issue: an infinite loop, a fork
bomb, a 50 GB allocation, a write outside the temporary folder, a network connection, a segfault,
1 GB of output; and nothing of a run survives it.

Every program gets a unique CUSET_TEST_TOKEN in its environment, which its children inherit, so
`_survivors` finds any process of a run that is still alive afterwards. The fork bombs refuse to
start when RLIMIT_NPROC is not set, so a broken sandbox cannot take the test machine down.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cuset.evaluate import sandbox
from cuset.evaluate.sandbox import Limits, name_ending, run, scratch

ROOT = os.geteuid() == 0
PY = sys.executable
REPO = Path(__file__).resolve().parents[2]

SOURCES = {
    "segv.c": "int main(void) { volatile int *p = 0; *p = 1; return 0; }\n",
    "bomb.c": """#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct rlimit r;
    if (getrlimit(RLIMIT_NPROC, &r) != 0 || r.rlim_cur > 256) return 99;  /* never bomb an unlimited user */
    for (;;) if (fork() == 0 && argc > 1) setsid();
}
""",
    "alloc.cc": """#include <cstdio>
#include <cstring>
int main() {
    size_t n = 50ull << 30;
    char *p = new char[n];
    memset(p, 1, n);
    std::printf("%d\\n", p[n - 1]);
}
""",
    "asan.c": """#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    size_t n = 50ull << 30;
    char *p = malloc(n);
    memset(p, 1, n);
    printf("%d\\n", p[n - 1]);
    return 0;
}
""",
}
BUILD = {"segv": ["gcc", "-O0"], "bomb": ["gcc", "-O0"], "alloc": ["g++", "-O0"], "asan": ["gcc", "-O0", "-g", "-fsanitize=address"]}
PY_BOMB = "import os, resource\nassert resource.getrlimit(resource.RLIMIT_NPROC)[0] <= 256\nwhile True:\n    os.fork()\n"
PY_DAEMONS = """import os, time
for _ in range(4):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
time.sleep(0.2)
print("parent done")
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The native test programs, compiled into a folder only root could reach (the sandbox binds it back)."""
    if not (shutil.which("gcc") and shutil.which("g++")):
        pytest.skip("gcc/g++ not installed")
    folder = tmp_path_factory.mktemp("bin")
    folder.chmod(0o755)
    built = {}
    for source, text in SOURCES.items():
        name = source.split(".")[0]
        (folder / source).write_text(text)
        subprocess.run([*BUILD[name], str(folder / source), "-o", str(folder / name)], check=True, capture_output=True)
        built[name] = folder / name
    return built


@pytest.fixture
def token() -> str:
    return uuid.uuid4().hex


def _survivors(token: str) -> list[int]:
    """Live processes whose environment holds `token`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if token.encode() in Path(f"/proc/{name}/environ").read_bytes():
                    found.append(int(name))
            except OSError:
                pass
    return found


def _run(argv: list, token: str, limits: Limits | None = None, **kwargs) -> sandbox.Outcome:
    env = {"CUSET_TEST_TOKEN": token, **kwargs.pop("env", {})}
    with scratch() as tmp:
        outcome = run(argv, cwd=tmp, limits=limits or Limits(wall_s=10), env=env, **kwargs)
    assert _survivors(token) == []
    return outcome


def test_limits_validate_with_helpful_messages() -> None:
    with pytest.raises(ValueError, match="cpu_s must be a positive number"):
        Limits(cpu_s=0)
    with pytest.raises(ValueError, match="memory_mb must be an integer >= 32 .* or None"):
        Limits(memory_mb=8)
    with pytest.raises(ValueError, match="processes must be an integer"):
        Limits(processes=2.5)
    limits = Limits(memory_mb=None, network=True)
    assert Limits(**json.loads(json.dumps(limits.to_dict()))) == limits


def test_bad_arguments_raise(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="argv is empty"):
        run([], cwd=tmp_path, limits=Limits())
    with pytest.raises(ValueError, match="not a folder"):
        run(["true"], cwd=tmp_path / "missing", limits=Limits())
    with pytest.raises(ValueError, match="keep_paths"):
        run(["true"], cwd=tmp_path, limits=Limits(), keep_paths=[tmp_path / "missing"])


def test_ok_run_returns_output_and_serialises(token: str) -> None:
    code = "import os, sys; data = sys.stdin.read(); print(data.upper(), os.getuid(), len([p for p in os.listdir('/proc') if p.isdigit()]))"
    outcome = _run([PY, "-c", code], token, stdin=b"hello")
    assert (outcome.status, outcome.returncode, outcome.signal) == ("ok", 0, None)
    text, uid, processes = outcome.stdout.split()
    assert text == "HELLO"
    assert json.loads(json.dumps(outcome.to_dict()))["stdout"] == outcome.stdout
    isolation = outcome.isolation
    if ROOT:
        assert int(uid) == isolation["uid"] == sandbox.SANDBOX_UID
        assert set(isolation["namespaces"]) == {"user", "mount", "pid", "net", "ipc"}, isolation["notes"]
        assert int(processes) <= 2  # its pid namespace holds only init and the program
        assert "/tmp" in isolation["private_dirs"]
    assert isolation["rlimits"]["processes"] == Limits().processes


def test_nonzero_exit_code_is_passed_through(token: str) -> None:
    outcome = _run([PY, "-c", "import sys; print('partial'); sys.exit('bad input')"], token)
    assert (outcome.status, outcome.returncode) == ("exit", 1)
    assert outcome.stdout == "partial\n" and "bad input" in outcome.message


@pytest.mark.parametrize(("limits", "signal_name"), [(Limits(wall_s=1, cpu_s=30), "SIGKILL"), (Limits(wall_s=10, cpu_s=1), "SIGXCPU")],
                         ids=["wall", "cpu"])
def test_infinite_loop_times_out(token: str, limits: Limits, signal_name: str) -> None:
    started = time.monotonic()
    outcome = _run([PY, "-c", "while True: pass"], token, limits)
    assert outcome.status == "timeout" and outcome.signal == signal_name
    assert time.monotonic() - started < min(limits.wall_s, limits.cpu_s + 5.0) + 2.0  # CPU seconds pass slower on a busy machine
    assert "time limit" in outcome.message


def test_sleeping_daemons_are_killed_when_the_program_exits(token: str) -> None:
    outcome = _run([PY, "-c", PY_DAEMONS], token)  # _run asserts that none of the setsid'd sleepers survives
    assert outcome.status == "ok" and outcome.stdout == "parent done\n"


@pytest.mark.parametrize("bomb", ["python", "c", "c-setsid"])
def test_fork_bomb_is_contained(token: str, programs: dict[str, Path], bomb: str) -> None:
    argv = {"python": [PY, "-c", PY_BOMB], "c": [programs["bomb"]], "c-setsid": [programs["bomb"], "setsid"]}[bomb]
    started = time.monotonic()
    outcome = _run(argv, token, Limits(wall_s=1.5, processes=16))
    assert outcome.status == "process_limit", outcome.message
    assert time.monotonic() - started < 5.0


def test_concurrent_runs_do_not_share_the_process_budget(token: str, programs: dict[str, Path]) -> None:
    """Each run counts its processes in its own user namespace, so a fork bomb next door costs nothing."""
    with ThreadPoolExecutor(1) as pool:
        bomb = pool.submit(_run, [programs["bomb"]], token, Limits(wall_s=2, processes=32))
        time.sleep(0.7)  # the bomb is at its limit by now
        small = _run([PY, "-c", "import threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()"],
                     uuid.uuid4().hex, Limits(processes=4))
        assert bomb.result().status == "process_limit"
    if "user" not in small.isolation["namespaces"]:
        pytest.skip("no user namespaces here: concurrent runs share the sandbox uid's process count")
    assert small.status == "ok" and small.stdout == "thread\n", small.message


@pytest.mark.parametrize("language", ["python", "c++"])
def test_50_gb_allocation_is_memory_limit(token: str, programs: dict[str, Path], language: str) -> None:
    argv = [PY, "-c", "data = bytearray(50 * 2**30)"] if language == "python" else [programs["alloc"]]
    outcome = _run(argv, token, Limits(memory_mb=512))
    assert outcome.status == "memory_limit", outcome.message
    assert "512 MiB" in outcome.message


def test_asan_build_runs_without_address_limit_and_names_its_cap(token: str, programs: dict[str, Path]) -> None:
    outcome = _run([programs["asan"]], token, Limits(memory_mb=None), env={"ASAN_OPTIONS": "max_allocation_size_mb=1024"})
    assert outcome.status == "memory_limit", outcome.message
    assert "allocation-size-too-big" in outcome.message


def test_writes_outside_the_working_folder_do_not_land(token: str) -> None:
    targets = [REPO / f"leak-{token}", Path(f"/tmp/leak-{token}"), Path(f"/var/tmp/leak-{token}"),
               Path(f"/dev/shm/leak-{token}"), Path(os.path.expanduser("~")) / f"leak-{token}"]
    code = """import json, sys
result = {}
for path in sys.argv[1:] + ["inside.txt"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        result[path] = "written"
    except OSError as exc:
        result[path] = exc.strerror
print(json.dumps(result))
"""
    with scratch() as tmp:
        outcome = run([PY, "-c", code, *map(str, targets)], cwd=tmp, limits=Limits(), env={"CUSET_TEST_TOKEN": token})
        assert (tmp / "inside.txt").read_text() == "x"
    result = json.loads(outcome.stdout)
    assert result["inside.txt"] == "written"
    if "mount" not in outcome.isolation["namespaces"]:
        for target in targets:
            target.unlink(missing_ok=True)
        pytest.skip("no mount namespace here: only the file permissions of the sandbox's uid protect the host")
    assert [t for t in targets if t.exists()] == []
    if ROOT:  # the repository (bound read-only when it lies under a private temp folder) and the caller's home
        assert result[str(targets[0])] in ("Permission denied", "Read-only file system")
        assert result[str(targets[-1])] in ("Permission denied", "Read-only file system")


def test_keep_paths_are_readable_and_the_rest_of_tmp_is_hidden(token: str, tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text("SHAPE = (4, 4)\n")
    (tmp_path / "secret.txt").write_text("not for candidates")
    code = "import os, sys; print(open(sys.argv[1]).read().strip(), os.path.exists(sys.argv[2]))"
    outcome = _run([PY, "-c", code, tmp_path / "task.py", tmp_path / "secret.txt"], token, keep_paths=[tmp_path / "task.py"])
    if "mount" not in outcome.isolation["namespaces"]:
        pytest.skip("no mount namespace here: /tmp is shared")
    assert outcome.stdout == "SHAPE = (4, 4) False\n", outcome.stderr
    assert str(tmp_path / "task.py") in outcome.isolation["bound"]


def test_network_connection_fails_and_reaches_nothing(token: str) -> None:
    code = """import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).sendall(b"leak")
    print("connected")
except OSError as exc:
    print("refused:", exc)
"""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = str(listener.getsockname()[1])
        outcome = _run([PY, "-c", code, port], token)
        if "net" not in outcome.isolation["namespaces"]:
            pytest.skip("no network namespace here")
        assert outcome.stdout.startswith("refused:"), outcome.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()
        assert outcome.isolation["network"] == "private: loopback only"
        shared = _run([PY, "-c", code, port], token, Limits(network=True))  # the same test sees a leak
        assert shared.stdout == "connected\n"
        listener.setblocking(True)
        listener.accept()[0].close()


def test_segfault_is_crashed_with_signal_named(token: str, programs: dict[str, Path]) -> None:
    outcome = _run([programs["segv"]], token)
    assert (outcome.status, outcome.signal, outcome.returncode) == ("crashed", "SIGSEGV", -11)
    assert "SIGSEGV" in outcome.message


def test_gigabyte_of_output_is_cut_quickly_without_buffering(token: str) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    outcome = _run(["head", "-c", "1G", "/dev/zero"], token, Limits(output_kb=64))
    assert outcome.status == "output_limit"
    assert len(outcome.stdout) + len(outcome.stderr) <= 64 * 1024 < outcome.stdout_bytes
    assert time.monotonic() - started < 3.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 50 * 1024  # KiB


def test_big_file_is_file_limit() -> None:
    with scratch() as tmp:
        outcome = run([PY, "-c", "open('big', 'wb').write(b'x' * 4 * 2**20)"], cwd=tmp, limits=Limits(file_mb=1))
        assert (tmp / "big").stat().st_size <= 2**20
    assert outcome.status == "file_limit", outcome.message


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUSET_SECRET", "s3cret")
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    with scratch() as tmp:
        outcome = run([PY, "-c", code], cwd=tmp, limits=Limits(), env={"OMP_NUM_THREADS": "1"})
        seen = json.loads(outcome.stdout)
        assert seen["HOME"] == str(tmp)
    assert "s3cret" not in outcome.stdout
    assert set(seen) <= {"PATH", "LANG", "HOME", "OMP_NUM_THREADS", "LC_CTYPE"}  # LC_CTYPE: Python's C-locale coercion
    assert seen["OMP_NUM_THREADS"] == "1"


def test_missing_program_is_sandbox_error(token: str) -> None:
    outcome = _run(["/nonexistent/program"], token)
    assert outcome.status == "sandbox_error" and "No such file" in outcome.message


@pytest.mark.parametrize(("returncode", "stderr", "status", "signal_name"), [
    (0, "", "ok", None),
    (1, "Traceback (most recent call last):\nValueError: shapes differ", "exit", None),
    (-11, "", "crashed", "SIGSEGV"),
    (-24, "", "timeout", "SIGXCPU"),
    (-25, "", "file_limit", "SIGXFSZ"),
    (-6, "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", "memory_limit", "SIGABRT"),
    (1, "==1==ERROR: AddressSanitizer: requested allocation size 0xc80000000\nSUMMARY: AddressSanitizer: allocation-size-too-big", "memory_limit", None),
    (1, "RuntimeError: DefaultCPUAllocator: can't allocate memory: you tried to allocate 53687091200 bytes.", "memory_limit", None),
    (1, "BlockingIOError: [Errno 11] Resource temporarily unavailable", "process_limit", None),
    (1, "OSError: [Errno 27] File too large", "file_limit", None),
])
def test_name_ending(returncode: int, stderr: str, status: str, signal_name: str | None) -> None:
    named, sig, message = name_ending(returncode, stderr, Limits())
    assert (named, sig) == (status, signal_name)
    assert message and "\n" not in message


# --- without root: inside a user namespace, and where no namespace is permitted ---------------

RUNNER = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("sandbox", sys.argv[1])
sandbox = sys.modules["sandbox"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sandbox)
results = {}
for name, code in json.loads(sys.argv[2]).items():
    with sandbox.scratch() as tmp:
        limits = sandbox.Limits(wall_s=3, processes=16)
        results[name] = sandbox.run([sys.executable, "-c", code], cwd=tmp, limits=limits, env={"CUSET_TEST_TOKEN": sys.argv[3]}).to_dict()
print(json.dumps(results))
"""
CASES = {"ok": "import os; print(os.getuid())", "bomb": PY_BOMB, "daemons": PY_DAEMONS}
SYSTEM_PY = "/usr/bin/python3"  # world-readable, unlike the venv's pyenv interpreter under /root
needs_root = pytest.mark.skipif(not ROOT or not os.path.exists(SYSTEM_PY), reason=f"needs root and {SYSTEM_PY}")
# Made by root, as an unprivileged user would be: uid 65534 inside a user namespace that may create no namespaces.
NO_NAMESPACES = r"""
import ctypes, os, sys
assert ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0  # CLONE_NEWUSER
print("ready", flush=True)
sys.stdin.readline()  # the parent maps root and nobody meanwhile
open("/proc/sys/user/max_user_namespaces", "w").write("0")
os.setgroups([]); os.setgid(65534); os.setuid(65534)
os.execv(sys.argv[1], sys.argv[1:])
"""


def _as_nobody(token: str, namespaces: bool) -> dict[str, dict]:
    args = [SYSTEM_PY, "-c", RUNNER, sandbox.__file__, json.dumps(CASES), token]
    if namespaces:
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *args],
                              capture_output=True, text=True, timeout=60, cwd="/")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    proc = subprocess.Popen([PY, "-c", NO_NAMESPACES, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        assert proc.stdout.readline() == "ready\n"
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{proc.pid}/{name}").write_text("0 0 1\n65534 65534 1\n")
        out, _ = proc.communicate("go\n", timeout=60)
    finally:
        proc.kill()
    return json.loads(out)


@needs_root
@pytest.mark.parametrize("namespaces", [True, False], ids=["user-namespace", "no-namespaces"])
def test_unprivileged_caller_is_still_contained(token: str, namespaces: bool) -> None:
    results = _as_nobody(token, namespaces)
    assert _survivors(token) == []
    assert results["ok"]["status"] == "ok" and results["ok"]["stdout"] == "65534\n"
    isolation = results["ok"]["isolation"]
    if namespaces:
        assert set(isolation["namespaces"]) == {"user", "mount", "pid", "net", "ipc"}, isolation["notes"]
    else:
        assert isolation["namespaces"] == [] and "not permitted" in isolation["notes"][0]
        assert isolation["network"] == "host: a network namespace was not permitted"
    assert results["bomb"]["status"] == "process_limit", results["bomb"]["message"]
    assert results["daemons"]["status"] == "ok"

