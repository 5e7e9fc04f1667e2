"""Run one command contained: limits, its own namespaces, and Landlock rules it cannot undo.

``python -m specdec_course.coursework.sandbox --memory BYTES --workdir DIR [options] -- CMD ...``
is how grading starts a submission's kernel and the process that runs its functions. In order:

1. The launcher dies with the process that started it (``PR_SET_PDEATHSIG``), so a grader that is
   killed takes its sandboxes with it.
2. Limits per process: address space (an allocation past it raises ``MemoryError``), CPU seconds,
   file size, no core dumps, and a number of processes (``RLIMIT_NPROC``; Linux does not apply
   it to root).
3. Where the kernel lets an ordinary user create namespaces: a new user, PID, mount, network and
   IPC namespace. The command becomes PID 1 of its own PID namespace, sees only its own processes
   in a fresh ``/proc``, and every process it starts dies with it (the kernel ends a PID
   namespace whose first process exits); the launcher stays outside, forwards the grader's
   interrupt and ends the namespace when it is ended itself. The network namespace holds only a
   loopback that is down. Where namespaces are refused, the command gets its own session and the
   grader ends that session's processes instead (``sweep``).
4. Landlock (Linux 5.13+), for good, for the command and every child: read and run only the
   folders given with ``--read-dir`` (the system, Python, the course packages), read only the
   ``--read`` files, list only the ``--list-dir`` folders, write only ``DIR``, create sockets in
   ``--socket-dir`` (nothing else there); with Landlock ABI 4+ no TCP ``bind`` or ``connect`` at
   all, with ABI 6+ no signal to any process outside the sandbox and no connection to an abstract
   Unix socket outside it.

Then it replaces itself by ``CMD``. ``--probe`` prints which of these the running kernel offers.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every Linux architecture
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_MAKE_SOCK = 1 << 9
_ALL_ABI1 = (1 << 13) - 1  # execute … make_sym: every file-system right of Landlock's first version
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_BIND_TCP, _CONNECT_TCP = 1, 2  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2  # ABI 6
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x20000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/opt")
ROW_ENV = "SPECDEC_GRADING_ROW"  # every sandboxed process of one submission carries its row's token


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock version the running kernel offers (0: none, e.g. not Linux or too old)."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(version, 0)


def readable_dirs() -> list[Path]:
    """Folders a sandboxed Python may read: the system, the interpreter, site-packages, the course packages."""
    import site

    import specdec_course
    import specdec_lib

    found = [
        *map(Path, SYSTEM_DIRS),
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.executable).resolve().parent.parent,
        *map(Path, site.getsitepackages()),
        Path(specdec_lib.__file__).parent,
        Path(specdec_course.__file__).parent,
    ]
    return [path for path in dict.fromkeys(p.resolve() for p in found) if path.exists()]


def package_roots() -> list[Path]:
    """The folders that hold ``specdec_lib`` and ``specdec_course`` (the sandbox's PYTHONPATH)."""
    import specdec_course
    import specdec_lib

    return list(
        dict.fromkeys(Path(m.__file__).resolve().parent.parent for m in (specdec_lib, specdec_course))
    )


# --- Landlock -----------------------------------------------------------------------------------


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def restrict(
    *,
    read_dirs=(),
    read_files=(),
    list_dirs=(),
    write_dirs=(),
    socket_dirs=(),
    abi: int | None = None,
) -> None:
    """Landlock this process and its future children for good (a second call only narrows further)."""
    abi = landlock_abi() if abi is None else abi
    if not abi:
        return
    handled = _ALL_ABI1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    fields = [handled]
    if abi >= 4:
        fields.append(_BIND_TCP | _CONNECT_TCP)  # handled with no rule: no TCP at all
    if abi >= 6:
        fields.append(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    libc = _libc()
    ruleset = libc.syscall(
        _SYS_CREATE_RULESET, attr, ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    def allow(path, access: int) -> None:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not os.path.isdir(path):
                access &= _EXECUTE | _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0)
            if libc.syscall(_SYS_ADD_RULE, ruleset, 1, ctypes.byref(_PathBeneath(access, fd)), 0) < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    for folder in read_dirs:
        allow(folder, _EXECUTE | _READ_FILE | _READ_DIR)
    allow("/dev", _READ_FILE | _WRITE_FILE)  # /dev/null, /dev/urandom
    for folder in list_dirs:
        allow(folder, _READ_DIR)
    for path in read_files:
        allow(path, _READ_FILE)
    for folder in write_dirs:
        allow(folder, handled)
    for folder in socket_dirs:
        allow(folder, _MAKE_SOCK)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


# --- namespaces -----------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _enter_namespaces() -> bool:
    """Unshare user, mount, network, IPC and (for children) PID namespaces; False where refused."""
    if not sys.platform.startswith("linux"):
        return False
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWPID
    if _libc().unshare(flags) < 0:
        return False
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    return True


def _mount_own_proc() -> None:
    """In the new PID namespace: a /proc that shows only this namespace's processes."""
    libc = _libc()
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) < 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    if libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) < 0:
        raise OSError(ctypes.get_errno(), "mount proc")


def _stay_outside(child: int) -> None:
    """The launcher's part: forward an interrupt to the namespace's first process, end it when ended."""
    signal.signal(signal.SIGINT, lambda *_: os.kill(child, signal.SIGINT))
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: os.kill(child, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _processes_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            count += entry.stat().st_uid == uid
        except OSError:
            continue
    return count


def probe() -> dict:
    """What this machine offers a sandbox: the Landlock version, and whether namespaces can be created."""
    child = os.fork()
    if child == 0:
        os._exit(0 if _enter_namespaces() else 1)
    _, status = os.waitpid(child, 0)
    return {"landlock": landlock_abi(), "namespaces": os.waitstatus_to_exitcode(status) == 0}


def features() -> dict:
    """``probe()`` run in a fresh process (forking a threaded grader is not safe)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "specdec_course.coursework.sandbox", "--probe"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"landlock": landlock_abi(), "namespaces": False}


def missing_features(found: dict) -> list[str]:
    """Warnings for what the sandbox cannot do on this machine (empty: everything is in place)."""
    warnings = []
    if not found.get("landlock"):
        warnings.append(
            "no Landlock on this system: submissions can read and write every file you can "
            "(the hidden tests in coursework/ included), use the network and signal your processes"
        )
    elif found["landlock"] < 6:
        warnings.append(
            f"Landlock ABI {found['landlock']} (6 needed for signal and abstract-socket scoping; "
            f"4 for TCP rules): a submission can signal other processes"
            + ("" if found["landlock"] >= 4 else " and reach the network")
        )
    if not found.get("namespaces"):
        warnings.append(
            "this system refuses unprivileged namespaces (e.g. kernel.unprivileged_userns_clone=0 or "
            "an AppArmor rule): a submission's processes share /proc with yours, and one that leaves "
            "its session may outlive its row until its CPU limit ends it"
        )
    return warnings


def sweep(token: str) -> int:
    """SIGKILL every process whose environment carries ``ROW_ENV=token``; return how many."""
    marker = f"{ROW_ENV}={token}".encode()
    killed = 0
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except OSError:
            continue
    return killed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m specdec_course.coursework.sandbox", description=__doc__)
    parser.add_argument("--probe", action="store_true", help="print what this machine offers, as JSON")
    parser.add_argument("--memory", type=int, help="bytes of address space per process")
    parser.add_argument("--cpu", type=int, help="seconds of CPU time per process")
    parser.add_argument(
        "--processes", type=int, help="processes it may run at once (RLIMIT_NPROC; not for root)"
    )
    parser.add_argument("--file-size", type=int, help="bytes any one written file may reach")
    parser.add_argument("--workdir", type=Path, help="the one folder it may write")
    parser.add_argument(
        "--read-dir", type=Path, action="append", default=[], help="a folder it may read and run"
    )
    parser.add_argument("--read", type=Path, action="append", default=[], help="one more file it may read")
    parser.add_argument("--list-dir", type=Path, action="append", default=[], help="a folder it may list")
    parser.add_argument(
        "--socket-dir", type=Path, action="append", default=[], help="a folder to bind sockets in"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe()))
        return
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    limits = {
        resource.RLIMIT_AS: args.memory,
        resource.RLIMIT_CPU: args.cpu,
        resource.RLIMIT_FSIZE: args.file_size,
        resource.RLIMIT_CORE: 0,
    }
    for kind, value in limits.items():
        if value is not None:
            resource.setrlimit(kind, (value, value))
    inside = _enter_namespaces()
    if args.processes:  # counted per user namespace, so in a new one only this sandbox's processes count
        allowed = args.processes + (0 if inside else _processes_of(os.getuid()))
        resource.setrlimit(resource.RLIMIT_NPROC, (allowed, allowed))
    if inside:
        child = os.fork()
        if child:
            _stay_outside(child)
        _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _mount_own_proc()
    if os.getsid(0) != os.getpid():
        os.setsid()  # its own session: kill(0, …) reaches only its own processes
    workdir = args.workdir.resolve()
    restrict(
        read_dirs=[p.resolve() for p in args.read_dir],
        read_files=[p.resolve() for p in args.read],
        list_dirs=[p.resolve() for p in args.list_dir],
        write_dirs=[workdir],
        socket_dirs=[p.resolve() for p in args.socket_dir],
    )
    os.chdir(workdir)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
