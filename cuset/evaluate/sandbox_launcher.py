"""The sandbox's launcher: the side of cuset.evaluate.sandbox that runs in the contained process.

    python -I -S -B sandbox_launcher.py SPEC_FD    # started by cuset.evaluate.sandbox.run(), never by hand

It reads the run's spec (JSON, made by sandbox.run) from file descriptor SPEC_FD, unshares new
user, pid, mount, IPC and network namespaces where the OS permits (else goes on without them and
reports what is missing), starts a small init as pid 1 of the new pid namespace, builds the
private view of the file system (size-limited tmpfs temp folders, read-only binds), drops to
uid 65534 as root, applies the rlimits and execs the program. What happened is reported on the
spec's report pipe as JSON lines (isolation, notes, the program's exit, setup errors).

Standard library only, and run by path with -I -S: nothing of the package, the venv's site
packages or the caller's environment is imported here.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from contextlib import suppress
from typing import Any

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 15, 36, 38
_RETRY = 99  # exit code of the namespaced branch when its namespaces could not be set up (nothing ran)


def _launch() -> None:
    """The launcher: tries the namespaced branch, and runs without namespaces where it could not be set up.

    Process tree: launcher -> (unshares) -> init, pid 1 of the new pid namespace -> the program.
    """
    import ctypes

    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("This file is the sandbox's launcher, started by cuset.evaluate.sandbox.run(); call that instead.")
    with os.fdopen(int(sys.argv[1]), "rb") as f:
        spec = json.load(f)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        libc.prctl(PR_SET_NAME, spec["launcher_name"].encode(), 0, 0, 0)
        code = _in_child(libc, lambda: _namespaced(libc, spec))
        if code == _RETRY:  # the program may run as our user: keep it out of our /proc/PID/fd (the report pipe)
            libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
            code = _in_child(libc, lambda: _init(libc, spec, []))
    except BaseException as exc:
        _report(spec["report_fd"], event="setup_error", message=f"{type(exc).__name__}: {exc}")
        code = 125
    os._exit(code)


def _in_child(libc: Any, body: Any) -> int:
    """Runs body() (which ends with os._exit) in a child that dies with us; returns its exit code."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() in (parent, 0):  # 0: the parent is outside our new pid namespace
                body()
        finally:
            os._exit(125)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return code if code >= 0 else 128 - code


def _namespaced(libc: Any, spec: dict[str, Any]) -> None:
    """Enters new namespaces and runs init as pid 1 of the new pid namespace.

    A user namespace comes first: RLIMIT_NPROC counts a uid's processes per user namespace, so
    the limit holds per run, and it is what lets a user other than root create the others. As
    root, where the kernel refuses user namespaces, the others are tried alone.
    """
    wanted = {"mount": CLONE_NEWNS, "pid": CLONE_NEWPID, "ipc": CLONE_NEWIPC, "user": CLONE_NEWUSER}
    if not spec["network"]:
        wanted["net"] = CLONE_NEWNET
    errors = []
    for names in [sorted(wanted), *([sorted(set(wanted) - {"user"})] if os.geteuid() == 0 else [])]:
        try:
            _unshare(libc, sum(wanted[n] for n in names), spec["drop_to"])
        except OSError as exc:
            errors.append(f"{exc.strerror or exc}")
            continue
        except RuntimeError as exc:  # inside a user namespace we could not map: start again without namespaces
            errors.append(str(exc))
            break
        os._exit(_in_child(libc, lambda names=names: _init(libc, spec, names)))
    _report(spec["report_fd"], event="note", message=f"namespaces not permitted ({'; '.join(errors)}): "
            "no private temp folders, /proc or network")
    os._exit(_RETRY)


def _unshare(libc: Any, flags: int, drop_to: list[int] | None) -> None:
    """unshare(2) (OSError if refused); a new user namespace maps our ids, and as root those we drop to (RuntimeError if not)."""
    import ctypes

    uid, gid = os.getuid(), os.getgid()
    maps = {"uid_map": f"{uid} {uid} 1\n", "gid_map": f"{gid} {gid} 1\n"}
    if drop_to:
        maps = {"uid_map": f"0 0 1\n{drop_to[0]} {drop_to[0]} 1\n", "gid_map": f"0 0 1\n{drop_to[1]} {drop_to[1]} 1\n"}
    helper = None
    if flags & CLONE_NEWUSER and drop_to:  # two-line maps need a writer with CAP_SETUID outside the new namespace
        go_r, go_w = os.pipe()
        target, helper = os.getpid(), os.fork()
        if helper == 0:
            code = 1
            try:
                os.close(go_w)
                if os.read(go_r, 1) == b"1":
                    for name, text in maps.items():
                        with open(f"/proc/{target}/{name}", "w") as f:
                            f.write(text)
                code = 0
            finally:
                os._exit(code)
        os.close(go_r)
    try:
        failed = libc.unshare(flags) != 0
        errno = ctypes.get_errno()
    finally:
        if helper is not None:
            os.write(go_w, b"0" if failed else b"1")
            os.close(go_w)
            mapped = os.waitpid(helper, 0)[1] == 0
    if failed:
        raise OSError(errno, os.strerror(errno))
    if flags & CLONE_NEWUSER:
        try:
            if not drop_to:
                for name, text in (("setgroups", "deny"), *maps.items()):
                    with open(f"/proc/self/{name}", "w") as f:
                        f.write(text)
            elif not mapped:
                raise OSError("the helper could not write them")
        except OSError as exc:
            raise RuntimeError(f"cannot map ids into the new user namespace: {exc}") from None


def _init(libc: Any, spec: dict[str, Any], namespaces: list[str]) -> None:
    """Sets up the view, forks the program, reaps every process, reports how the program ended."""
    fd, notes = spec["report_fd"], []
    try:
        signal.signal(signal.SIGALRM, lambda *_: os._exit(124))  # ends the run even if the caller vanished
        signal.alarm(spec["backstop_s"])
        view = {"masked": [], "bound": []}
        if "pid" not in namespaces and libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            notes.append("not a child subreaper: processes that call setsid can outlive the run")
        if namespaces:
            view = _private_view(libc, spec, notes)
            try:
                _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            except OSError as exc:
                notes.append(f"/proc shows the host's processes: {exc}")
            try:
                if "net" in namespaces:
                    _loopback_up()
            except OSError as exc:
                notes.append(f"the private loopback is down: {exc}")
        nproc = spec["rlimits"]["NPROC"]
        if "user" in namespaces and not spec["drop_to"]:  # this process and its parent count in the new namespace too
            spec["rlimits"]["NPROC"] = [n + 2 for n in nproc]
        elif not spec["drop_to"]:  # RLIMIT_NPROC counts every process of our user: allow `processes` more
            spec["rlimits"]["NPROC"] = [n + _threads_of(os.getuid()) for n in nproc]
        _report(fd, event="isolation", namespaces=namespaces, notes=notes, **view)
        child = os.fork()
    except BaseException as exc:
        if namespaces:
            _report(fd, event="note", message=f"namespaces set up but not usable ({type(exc).__name__}: {exc})")
            os._exit(_RETRY)
        _report(fd, event="setup_error", message=f"{type(exc).__name__}: {exc}")
        os._exit(125)
    if child == 0:
        _exec(libc, spec)
    cpu = 0.0
    while True:
        pid, status, usage = os.wait4(-1, 0)
        cpu += usage.ru_utime + usage.ru_stime
        if pid == child:
            break
    if "pid" not in namespaces:  # without a pid namespace to end, kill what is left ourselves
        _kill_descendants()
    _report(fd, event="exit", status=status, cpu_s=cpu)
    os._exit(0)


def _kill_descendants() -> None:
    """As a child subreaper: SIGKILLs children until none is left (each one's orphans become ours)."""
    me = os.getpid()
    while True:
        with suppress(OSError), open(f"/proc/{me}/task/{me}/children") as f:
            for kid in f.read().split():
                with suppress(OSError):
                    os.kill(int(kid), signal.SIGKILL)
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            return


def _private_view(libc: Any, spec: dict[str, Any], notes: list[str]) -> dict[str, list[str]]:
    """tmpfs over the masked folders, then the bound paths back at their own place."""
    held = [(os.open(path, os.O_PATH | os.O_CLOEXEC), path, writable) for path, writable in spec["binds"]]
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    for path, mode in spec["masks"]:
        _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o},size={spec['tmpfs_mb']}m")
    umask = os.umask(0o022)
    for handle, path, writable in held:
        if not os.path.lexists(path):
            if stat.S_ISDIR(os.fstat(handle).st_mode):
                os.makedirs(path)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
        _mount(libc, f"/proc/self/fd/{handle}", path, None, MS_BIND | MS_REC)
        if not writable:
            have = os.statvfs(path).f_flag  # a remount must repeat the locked flags, or a user namespace refuses it
            flags = (have & (MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048)) | ((1 << 21) if have & 4096 else 0)
            try:
                _mount(libc, None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)
            except OSError as exc:
                notes.append(f"{path} is bound writable: {exc}")
        os.close(handle)
    os.umask(umask)
    return {"masked": [path for path, _ in spec["masks"]], "bound": [path for _, path, _ in held]}


def _exec(libc: Any, spec: dict[str, Any]) -> None:
    """The program's process: limits, nobody, scrubbed environment, exec. Never returns."""
    import resource

    fd = spec["report_fd"]
    try:
        os.chdir(spec["cwd"])
        for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these, and exec keeps ignored signals
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        for name, wanted in spec["rlimits"].items():
            which = getattr(resource, "RLIMIT_" + name)
            ceiling = resource.getrlimit(which)[1]  # never above what we have: raising a hard limit needs root
            soft, hard = (ceiling if v is None else v if ceiling == resource.RLIM_INFINITY else min(v, ceiling) for v in wanted)
            resource.setrlimit(which, (soft, hard))
        if spec["drop_to"]:
            uid, gid = spec["drop_to"]
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError("prctl(PR_SET_NO_NEW_PRIVS or PR_SET_PDEATHSIG) failed")
        os.set_inheritable(fd, False)
    except BaseException as exc:
        _report(fd, event="setup_error", message=f"{type(exc).__name__}: {exc}")
        os._exit(125)
    try:
        os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
    except OSError as exc:
        _report(fd, event="exec_error", errno=exc.errno, message=exc.strerror or str(exc))
    os._exit(127)


def _threads_of(uid: int) -> int:
    """Threads of all processes of `uid`: what RLIMIT_NPROC compares with its limit."""
    total = 0
    for name in os.listdir("/proc"):
        with suppress(OSError, ValueError, IndexError):
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                with open(f"/proc/{name}/stat", "rb") as f:
                    total += int(f.read().rsplit(b")", 1)[1].split()[17])
    return total


def _mount(libc: Any, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    import ctypes

    encode = lambda s: None if s is None else s.encode()  # noqa: E731
    if libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _loopback_up() -> None:
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sh", fcntl.ioctl(s, 0x8913, struct.pack("16sh22x", b"lo", 0))[:18])[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sh22x", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP


def _report(fd: int, **message: Any) -> None:
    if "message" in message:
        message["message"] = str(message["message"])[:1000]
    with suppress(OSError):
        os.write(fd, (json.dumps(message) + "\n").encode())


if __name__ == "__main__":
    _launch()
