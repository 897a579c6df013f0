"""Runs untrusted programs (compiled candidates, Python harnesses) in a contained process.

    from cuset.evaluate.sandbox import Limits, run, scratch

    with scratch() as tmp:
        out = run([sys.executable, "check.py"], cwd=tmp, limits=Limits(wall_s=30, memory_mb=4096))
        out.status, out.message   # "ok", "timeout", "memory_limit", ... and one human line

`run` never raises for anything the program does: every ending is an `Outcome` whose status is
one of `STATUSES`; only bad arguments raise. `Outcome.isolation` records what was applied:

- A launcher (sandbox_launcher.py beside this file, run as a script, `python -I -S
  sandbox_launcher.py SPEC_FD`, so the caller needs no thread-unsafe `preexec_fn`) unshares
  new user, pid, mount, IPC and network namespaces. Where
  the OS refuses, the run goes on without them (as root, without the user namespace first) and
  `isolation["notes"]` says what is missing.
- user namespace: RLIMIT_NPROC counts a uid's processes per user namespace, so the process
  limit holds per run even when concurrent runs use the same uid.
- pid namespace: the program is the child of a small init; when the program ends or is killed,
  the kernel kills whatever is left in the namespace (fork bombs, daemons, `setsid` escapes).
  Its /proc shows only the sandbox's processes.
- mount namespace: fresh size-limited tmpfs over /tmp, /var/tmp, /dev/shm, /run/lock, the
  caller's home and any folder the sandbox user could not search (root's 0700 /root, where
  pyenv keeps Python); the working folder (read-write), the interpreter, its environment, this
  package, the program's folder and `keep_paths` (read-only) are bound back at their own paths.
- network namespace: only a private loopback; nothing on the host or beyond is reachable.
- As root, the program runs as nobody (uid 65534) with no capabilities and no_new_privs: it can
  write only to its working folder and to the private, throwaway temp folders.
- rlimits on CPU seconds, address space, processes+threads, file size, and no core files; this
  side enforces the wall time and the output cap, and kills the whole session afterwards.
- Environment: PATH, LANG, HOME (= the working folder) and what the caller passes, nothing else.

Limitations: without a user namespace, concurrent runs under one uid share the `processes`
budget (RLIMIT_NPROC counts all of that uid's processes and threads). The private temp folders are
tmpfs, so up to `file_mb` MiB each of host memory. A program can read what the sandbox user may
read (world-readable files, the bound paths). Without a pid namespace, init is a child subreaper
that kills what the program left (double-forked, setsid'd daemons) once it ends.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATUSES = {
    "ok": "exited with code 0",
    "exit": "exited with another code (returncode)",
    "timeout": "ran past the wall-time limit or its CPU-time limit, and was killed",
    "memory_limit": "could not allocate memory (address-space limit, ASan allocation cap, OOM)",
    "process_limit": "could not create another process or thread",
    "file_limit": "tried to write a file larger than the file-size limit",
    "output_limit": "wrote more stdout+stderr than the output cap, and was killed",
    "crashed": "was killed by a signal such as SIGSEGV or SIGABRT (Outcome.signal)",
    "sandbox_error": "the sandbox failed, or the program could not be started",
}
SANDBOX_UID = SANDBOX_GID = 65534
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "can't allocate memory", "out of memory",
                  "allocation-size-too-big", "exceeds maximum supported size")
PROCESS_MARKERS = ("Resource temporarily unavailable", "can't start new thread", "fork: retry")
FILE_MARKERS = ("File too large",)

# The launcher's side is sandbox_launcher.py (stdlib only, run by path, so that this file too runs
# without the package: tests load it alone as an unprivileged user). It reads its spec (JSON)
# from the file descriptor named by its one argument.
_LAUNCHER = Path(__file__).resolve().with_name("sandbox_launcher.py")
_LAUNCHER_NAME = "cuset-sandbox"  # comm of the launcher processes (sent in the spec), so they are not counted as the program's
_DRAIN_S = 0.5  # after the launcher exits, how long its pipes may take to close
_KILL_WAIT_S = 5.0  # after a kill, how long the launcher may take to be reaped


@dataclass
class Limits:
    """Limits for one run. Memory and files in MiB, output in KiB, times in seconds."""

    cpu_s: float = field(default=10.0, metadata={"help": "CPU seconds per process (RLIMIT_CPU, rounded up): SIGXCPU, then SIGKILL a second later."})
    wall_s: float = field(default=30.0, metadata={"help": "Wall-clock seconds for the whole run; then every process of it is killed."})
    memory_mb: int | None = field(default=2048, metadata={"help": (
        "Address space per process (RLIMIT_AS). None disables it: needed for AddressSanitizer builds, which reserve "
        "terabytes of virtual memory; cap those with ASAN_OPTIONS=max_allocation_size_mb=N:allocator_may_return_null=1.")})
    processes: int = field(default=64, metadata={"help": "Processes plus threads of the sandbox user (RLIMIT_NPROC); thread pools (OpenMP, torch) count."})
    file_mb: int = field(default=64, metadata={"help": "Largest file a process may write (RLIMIT_FSIZE); also the size of each private temp folder."})
    output_kb: int = field(default=1024, metadata={"help": "stdout+stderr kept; producing more ends the run as output_limit."})
    network: bool = field(default=False, metadata={"help": "True shares the host's network; False gives a private one with only loopback."})

    def __post_init__(self) -> None:
        for name, unit in (("cpu_s", "seconds"), ("wall_s", "seconds")):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
                raise ValueError(f"Limits.{name} must be a positive number of {unit}, got {value!r}.")
        for name, low in (("processes", 1), ("file_mb", 1), ("output_kb", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"Limits.{name} must be an integer >= {low}, got {value!r}.")
        if self.memory_mb is not None and (isinstance(self.memory_mb, bool) or not isinstance(self.memory_mb, int) or self.memory_mb < 32):
            raise ValueError(f"Limits.memory_mb must be an integer >= 32 (MiB) or None for no address-space limit "
                             f"(AddressSanitizer builds), got {self.memory_mb!r}.")
        if not isinstance(self.network, bool):
            raise ValueError(f"Limits.network must be True or False, got {self.network!r}.")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict; `Limits(**d)` reads it back."""
        return asdict(self)


@dataclass
class Outcome:
    """What happened to one run. `status` is a key of STATUSES; `message` is one human line."""

    status: str
    message: str
    returncode: int | None = None  # exit code, or -N when killed by signal N (subprocess's convention)
    signal: str | None = None  # e.g. "SIGSEGV" when a signal ended the program
    stdout: str = ""  # decoded, at most Limits.output_kb KiB together with stderr
    stderr: str = ""
    stdout_bytes: int = 0  # bytes produced, kept or not
    stderr_bytes: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0  # user+system seconds of the processes that were reaped or seen at a kill
    isolation: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable."""
        return asdict(self)


@contextmanager
def scratch(prefix: str = "cuset-", parent: Path | None = None) -> Iterator[Path]:
    """A new empty folder the sandbox user can write to (owned by it when we are root), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent)).resolve()
    try:
        if os.geteuid() == 0:
            os.chown(path, SANDBOX_UID, SANDBOX_GID)
        yield path
    finally:
        _remove(path)


def run(argv: Sequence[str | os.PathLike], *, cwd: Path, limits: Limits, env: dict[str, str] | None = None,
        stdin: bytes | None = None, keep_paths: Sequence[Path] = ()) -> Outcome:
    """Runs `argv` contained and under `limits`, in `cwd`; never raises for what the program does.

    cwd: the working folder, the only place where the program's writes last; as root it must be
        writable by uid 65534, which a `scratch()` folder is.
    env: variables added to the scrubbed environment (PATH, LANG, HOME=cwd), e.g. PYTHONPATH.
    stdin: bytes fed to the program (default: /dev/null).
    keep_paths: files or folders the program reads that a private temp folder or home would hide
        (bound read-only); the interpreter, its environment, this package and the program's own
        folder are kept without asking.
    """
    argv = [os.fspath(a) for a in argv]
    if not argv:
        raise ValueError("run() needs a program: argv is empty.")
    cwd = Path(cwd).resolve()
    if not cwd.is_dir():
        raise ValueError(f"cwd {cwd} is not a folder; make one with sandbox.scratch().")
    missing = [str(p) for p in keep_paths if not Path(p).exists()]
    if missing:
        raise ValueError(f"keep_paths {missing} do not exist; pass only paths the program reads.")
    spec = _spec(argv, cwd, limits, _environment(cwd, env or {}), [Path(p).resolve() for p in keep_paths])
    started = time.monotonic()
    report_r, report_w = os.pipe()
    spec["report_fd"] = report_w
    try:
        with _data_file(stdin) as stdin_file, _data_file(json.dumps(spec).encode()) as spec_file:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", str(_LAUNCHER), str(spec_file.fileno())], stdin=stdin_file,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(report_w, spec_file.fileno()),
                                    cwd="/", env={}, start_new_session=True)
    except OSError as exc:
        os.close(report_r)
        return Outcome("sandbox_error", f"cannot start the sandbox launcher: {exc}", isolation=_isolation(spec, limits, []))
    finally:
        os.close(report_w)
    try:
        watched = _watch(proc, report_r, limits, started)
    finally:
        _kill(proc.pid, launchers=True)
        for stream in (proc.stdout, proc.stderr):
            stream.close()
        os.close(report_r)
        if proc.returncode is None:
            proc.returncode = os.waitstatus_to_exitcode(os.waitpid(proc.pid, 0)[1])
    return _outcome(watched, spec, limits)


def name_ending(returncode: int, stderr: str, limits: Limits, cpu_s: float = 0.0) -> tuple[str, str | None, str]:
    """(status, signal name, message) for a program that ended by itself; returncode < 0 means killed by -returncode.

    Limits show up as signals (SIGXCPU, SIGXFSZ) or as errors the program prints before it
    exits or aborts (MemoryError, std::bad_alloc, ASan's allocation-size-too-big, EAGAIN on fork).
    """
    sig = _signal_name(-returncode) if returncode < 0 else None
    tail = stderr[-4096:]
    detail = f": {_last_line(tail)}" if tail.strip() else ""
    if returncode == 0:
        return "ok", None, "exited with code 0"
    if sig == "SIGXCPU" or (sig == "SIGKILL" and cpu_s >= math.ceil(limits.cpu_s)):
        return "timeout", sig, f"CPU time limit of {limits.cpu_s:g} s exceeded ({sig})"
    if sig == "SIGXFSZ":
        return "file_limit", sig, f"wrote a file past the {limits.file_mb} MiB file-size limit (SIGXFSZ)"
    cap = f" under the {limits.memory_mb} MiB address-space limit" if limits.memory_mb else ""
    for status, markers, what in (("memory_limit", MEMORY_MARKERS, f"ran out of memory{cap}"),
                                  ("process_limit", PROCESS_MARKERS, f"could not start a process or thread (limit {limits.processes})"),
                                  ("file_limit", FILE_MARKERS, f"wrote a file past the {limits.file_mb} MiB file-size limit")):
        if any(marker in tail for marker in markers):
            return status, sig, f"{what}: {_last_line(tail, markers)}"
    if sig:
        return "crashed", sig, f"killed by {sig}{detail}"
    return "exit", None, f"exited with code {returncode}{detail}"


# --- the caller's side ------------------------------------------------------------------------

@dataclass
class _Watched:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    counts: dict[str, int] = field(default_factory=lambda: {"stdout": 0, "stderr": 0})
    reason: str | None = None  # "timeout" or "output_limit" when we killed the run
    tasks_at_kill: int = 0
    cpu_at_kill: float = 0.0
    launcher_cpu: float = 0.0
    reports: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    launcher_code: int | None = None


def _environment(cwd: Path, extra: dict[str, str]) -> dict[str, str]:
    bad = [k for k, v in extra.items() if not isinstance(k, str) or not isinstance(v, str) or not k or "=" in k]
    if bad:
        raise ValueError(f"env must map names to strings; bad entries: {bad}.")
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": str(cwd), **extra}


def _spec(argv: list[str], cwd: Path, limits: Limits, env: dict[str, str], keep: list[Path]) -> dict[str, Any]:
    """Everything the launcher needs, as JSON-able data."""
    root = os.geteuid() == 0
    uid, gid = (SANDBOX_UID, SANDBOX_GID) if root else (os.getuid(), os.getgid())
    reads = [Path(sys.prefix), Path(sys.base_prefix), Path(__file__).resolve().parents[2], *keep]
    program = shutil.which(argv[0], path=env["PATH"]) if "/" not in argv[0] else str(cwd / argv[0])
    if program and os.path.exists(program):
        reads.append(Path(os.path.realpath(program)).parent)
    masks, binds = _plan_view(cwd, reads, uid, gid)
    cpu = math.ceil(limits.cpu_s)
    memory = None if limits.memory_mb is None else limits.memory_mb * 2**20
    return {
        "argv": argv, "cwd": str(cwd), "env": env, "network": limits.network, "drop_to": [uid, gid] if root else None,
        "launcher_name": _LAUNCHER_NAME, "masks": masks, "binds": binds, "tmpfs_mb": limits.file_mb, "backstop_s": math.ceil(limits.wall_s) + 10,
        "rlimits": {"CPU": [cpu, cpu + 1], "AS": [memory, memory], "NPROC": [limits.processes] * 2,
                    "FSIZE": [limits.file_mb * 2**20] * 2, "CORE": [0, 0]},
    }


def _plan_view(cwd: Path, reads: list[Path], uid: int, gid: int) -> tuple[list[tuple[str, int]], list[tuple[str, bool]]]:
    """Which folders get a private tmpfs (path, mode) and which paths are bound back over them (path, writable)."""
    masks: dict[Path, int] = {}
    for name in PRIVATE_DIRS:
        path = Path(os.path.realpath(name))
        if path.is_dir():
            masks[path] = 0o1777
    home = Path(os.path.expanduser("~")).resolve()
    if home.is_dir() and home != Path("/") and os.path.expanduser("~") != "~":
        masks.setdefault(home, 0o755)
    wanted: dict[Path, bool] = {cwd: True}
    for path in reads:
        if path.exists():
            wanted[path.resolve()] = wanted.get(path.resolve(), False)
    for path in wanted:
        if not any(_under(path, m) for m in masks):
            blocker = _unsearchable_ancestor(path, uid, gid)
            if blocker is not None:
                masks[blocker] = 0o755
    masks = {m: mode for m, mode in masks.items() if not any(o != m and _under(m, o) for o in masks)}
    hidden = {p: w for p, w in wanted.items() if any(_under(p, m) for m in masks)}
    hidden = {p: w for p, w in hidden.items() if w or not any(o != p and _under(p, o) for o in hidden)}  # read-only inside another: visible already
    binds = sorted(((str(p), w) for p, w in hidden.items()), key=lambda b: b[0].count("/"))
    return sorted((str(m), mode) for m, mode in masks.items()), binds


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _unsearchable_ancestor(path: Path, uid: int, gid: int) -> Path | None:
    if uid == 0:
        return None
    for folder in reversed(path.parents):
        try:
            st = folder.stat()
        except OSError:
            return None
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit and folder != Path("/"):
            return folder
    return None


@contextmanager
def _data_file(data: bytes | None) -> Iterator[Any]:
    """A file holding `data` (DEVNULL for None): unlike a pipe, feeding it never blocks, and it has no size limit."""
    if data is None:
        yield subprocess.DEVNULL
        return
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        yield f


def _watch(proc: subprocess.Popen, report_fd: int, limits: Limits, started: float) -> _Watched:
    """Reads output and reports until the launcher is reaped and its pipes close; kills at the wall time or output cap."""
    w = _Watched()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr.fileno(), selectors.EVENT_READ, "stderr")
    sel.register(report_fd, selectors.EVENT_READ, "report")
    pidfd = None
    with suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)
        sel.register(pidfd, selectors.EVENT_READ, "exit")
    cap, deadline, stop_at, report = limits.output_kb * 1024, started + limits.wall_s, math.inf, bytearray()
    try:
        while True:
            now = time.monotonic()
            if proc.returncode is None and w.reason is None and now >= deadline:
                w.tasks_at_kill, w.cpu_at_kill = _kill(proc.pid, launchers=False)
                w.reason, stop_at = "timeout", now + _KILL_WAIT_S
            streams_open = any(key.data != "exit" for key in sel.get_map().values())
            if now >= stop_at or (proc.returncode is not None and not streams_open):
                break
            wake = deadline if proc.returncode is None and w.reason is None else stop_at
            events = sel.select(max(0.0, min(wake - now, 0.05 if pidfd is None else 1.0)))
            for key, _ in events:
                if key.data == "exit":
                    sel.unregister(key.fd)
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data == "report":
                    report += chunk[: 2**16 - len(report)]
                else:
                    kept = len(w.stdout) + len(w.stderr)
                    getattr(w, key.data).extend(chunk[: max(0, cap - kept)])
                    w.counts[key.data] += len(chunk)
                    if sum(w.counts.values()) > cap and w.reason is None and proc.returncode is None:
                        w.tasks_at_kill, w.cpu_at_kill = _kill(proc.pid, launchers=False)
                        w.reason, stop_at = "output_limit", time.monotonic() + _KILL_WAIT_S
            if proc.returncode is None and _reap(proc, w, started, block=False):
                stop_at = min(stop_at, time.monotonic() + _DRAIN_S)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
    if proc.returncode is None:
        _kill(proc.pid, launchers=True)
        _reap(proc, w, started, block=True)
    for line in bytes(report).splitlines():
        with suppress(ValueError):
            w.reports.append(json.loads(line))
    return w


def _reap(proc: subprocess.Popen, w: _Watched, started: float, block: bool) -> bool:
    """Reaps the launcher if it ended; records the CPU seconds of everything it (transitively) waited for."""
    pid, status, usage = os.wait4(proc.pid, 0 if block else os.WNOHANG)
    if not pid:
        return False
    proc.returncode = w.launcher_code = os.waitstatus_to_exitcode(status)
    w.launcher_cpu, w.wall_s = usage.ru_utime + usage.ru_stime, time.monotonic() - started
    return True


def _sandbox_tasks(sid: int) -> list[tuple[int, bool, int, float]]:
    """(pid, is a launcher process, threads, CPU seconds) of the live processes in session `sid` and in its pid namespace."""
    tick, found, namespace = os.sysconf("SC_CLK_TCK"), {}, None
    for second_pass in (False, True):
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in found:
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    raw = f.read()
                comm, parts = raw[raw.find(b"(") + 1: raw.rfind(b")")], raw[raw.rfind(b")") + 2:].split()  # parts[0]: field 3
                launcher = comm == _LAUNCHER_NAME.encode()
                if second_pass:
                    if os.readlink(f"/proc/{name}/ns/pid") != namespace:
                        continue
                elif int(parts[3]) != sid:
                    continue
                elif launcher and namespace is None:
                    inner = os.readlink(f"/proc/{name}/ns/pid_for_children")
                    namespace = inner if inner != os.readlink(f"/proc/{name}/ns/pid") else None
            except (OSError, ValueError, IndexError):
                continue
            if parts[0] != b"Z":
                found[int(name)] = (int(name), launcher, int(parts[17]), sum(int(x) for x in parts[11:15]) / tick)
        if namespace is None:
            break
    return list(found.values())


def _kill(sid: int, launchers: bool) -> tuple[int, float]:
    """SIGKILLs the program's processes (in the launcher's session or pid namespace), with `launchers` the launcher too.

    Killing only the program lets the launcher's init reap and kill whatever escaped the session,
    then report. Returns the program's threads and CPU seconds just before, to tell a fork bomb
    at the process limit from a plain timeout.
    """
    before = tasks = _sandbox_tasks(sid)
    for _ in range(100):
        if launchers:
            with suppress(OSError):
                os.killpg(sid, signal.SIGKILL)
        targets = [pid for pid, launcher, *_ in tasks if (launchers or not launcher) and pid != os.getpid()]
        if not targets:
            break
        for pid in targets:
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
        tasks = _sandbox_tasks(sid)
    program = [(threads, cpu) for _, launcher, threads, cpu in before if not launcher]
    return sum(t for t, _ in program), sum(c for _, c in program)


def _isolation(spec: dict[str, Any], limits: Limits, reports: list[dict[str, Any]]) -> dict[str, Any]:
    applied = next((r for r in reversed(reports) if r.get("event") == "isolation"), None)
    notes = [r["message"] for r in reports if r.get("event") == "note"] + (applied["notes"] if applied else [])
    namespaces = applied["namespaces"] if applied else []
    uid = spec["drop_to"][0] if spec["drop_to"] else os.getuid()
    if "net" in namespaces:
        network = "private: loopback only"
    else:
        network = "host (Limits.network=True)" if limits.network else "host: a network namespace was not permitted"
    return {
        "uid": uid,
        "privileges": "dropped to nobody, no capabilities, no_new_privs" if spec["drop_to"] else "the caller's user, no_new_privs",
        "namespaces": namespaces,
        "network": network,
        "private_dirs": applied["masked"] if applied else [],
        "bound": applied["bound"] if applied else [],
        "rlimits": {"cpu_s": spec["rlimits"]["CPU"][0], "memory_mb": limits.memory_mb, "processes": limits.processes,
                    "file_mb": limits.file_mb, "core": 0},
        "env": sorted(spec["env"]),
        "notes": notes if applied else [*notes, "the launcher reported no isolation"],
    }


def _outcome(w: _Watched, spec: dict[str, Any], limits: Limits) -> Outcome:
    by_event = {r.get("event"): r for r in w.reports}
    stderr = w.stderr.decode(errors="replace")
    ended = by_event.get("exit")
    cpu = ended["cpu_s"] if ended else max(w.launcher_cpu, w.cpu_at_kill)
    returncode = os.waitstatus_to_exitcode(ended["status"]) if ended else None
    sig = _signal_name(-returncode) if returncode is not None and returncode < 0 else None
    if "setup_error" in by_event:
        status, message = "sandbox_error", f"sandbox setup failed: {by_event['setup_error']['message']}"
    elif w.reason == "output_limit":
        status, message = "output_limit", f"output passed the {limits.output_kb} KiB cap ({sum(w.counts.values())} bytes seen); killed"
    elif w.reason == "timeout" and w.tasks_at_kill >= limits.processes - 1:
        status, message = "process_limit", f"reached the limit of {limits.processes} processes/threads and ran past {limits.wall_s:g} s; killed"
    elif w.reason == "timeout":
        status, message = "timeout", f"wall time limit of {limits.wall_s:g} s exceeded; killed"
    elif "exec_error" in by_event:
        error = by_event["exec_error"]
        status = "process_limit" if error["errno"] == 11 else "sandbox_error"
        message = f"cannot start {spec['argv'][0]}: {error['message']}"
    elif ended is None:
        status, message = "sandbox_error", f"the sandbox launcher ended without a result (code {w.launcher_code})"
    else:
        status, sig, message = name_ending(returncode, stderr, limits, cpu)
    return Outcome(status=status, message=message, returncode=returncode, signal=sig,
                   stdout=w.stdout.decode(errors="replace"), stderr=stderr,
                   stdout_bytes=w.counts["stdout"], stderr_bytes=w.counts["stderr"], wall_s=round(w.wall_s, 3),
                   cpu_s=round(cpu, 3), isolation=_isolation(spec, limits, w.reports))


def _signal_name(number: int) -> str:
    with suppress(ValueError):
        return signal.Signals(number).name
    return f"signal {number}"


def _last_line(text: str, markers: Sequence[str] = ("SUMMARY:",)) -> str:
    """The last line naming one of `markers` (a sanitizer's SUMMARY by default), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line for line in lines if any(m in line for m in markers)]
    return (marked or lines or [""])[-1][:200]


def _remove(path: Path) -> None:
    """rmtree that also removes folders the program made unreadable (root ignores modes anyway)."""
    if os.geteuid() != 0:
        with suppress(OSError):
            os.chmod(path, 0o700)
        for folder, subdirs, _ in os.walk(path):
            for name in subdirs:
                sub = os.path.join(folder, name)
                if not os.path.islink(sub):
                    with suppress(OSError):
                        os.chmod(sub, 0o700)
    shutil.rmtree(path, ignore_errors=True)
