"""Run a command under a memory limit, able to read only what Python needs and write one folder.

``python -m specdec_course.coursework.sandbox --memory BYTES [--cpu S] --workdir DIR [--read FILE] -- CMD ...``
sets ``RLIMIT_AS`` (an allocation past it raises ``MemoryError``) and ``RLIMIT_CPU``, then, where the Linux kernel
offers Landlock (5.13+), restricts the process and its children for good: they may read and run
only the system folders, the Python installation and the two course packages, and read and write
only ``DIR``. Everything else (the instructor's ``coursework/`` notebooks with their hidden tests,
other submissions, the grades file) cannot be opened. Then it replaces itself by ``CMD``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import site
import sys
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every Linux architecture
_PR_SET_NO_NEW_PRIVS = 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_ALL_ABI1 = (1 << 13) - 1  # execute … make_sym: every file-system right of Landlock's first version
_REFER, _TRUNCATE = 1 << 13, 1 << 14
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/opt")


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
    import specdec_course
    import specdec_lib

    found = [
        *map(Path, SYSTEM_DIRS),
        Path(sys.prefix),
        Path(sys.base_prefix),
        *map(Path, site.getsitepackages()),
        Path(specdec_lib.__file__).parent,
        Path(specdec_course.__file__).parent,
    ]
    return [path for path in dict.fromkeys(found) if path.exists()]


def _restrict(workdir: Path, read_files: list[Path], abi: int) -> None:
    handled = _ALL_ABI1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    libc = _libc()
    ruleset_attr = ctypes.c_uint64(handled)
    ruleset = libc.syscall(
        _SYS_CREATE_RULESET, ctypes.byref(ruleset_attr), ctypes.c_size_t(8), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    def allow(path: Path, access: int) -> None:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            rule = PathBeneath(access, fd)
            if libc.syscall(_SYS_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0) < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    read = _EXECUTE | _READ_FILE | _READ_DIR
    for folder in readable_dirs():
        allow(folder, read)
    allow(Path("/dev"), read | _WRITE_FILE)  # /dev/null, /dev/urandom
    allow(workdir, handled)
    for path in read_files:
        allow(path, _READ_FILE)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m specdec_course.coursework.sandbox", description=__doc__)
    parser.add_argument("--memory", type=int, required=True, help="bytes of address space")
    parser.add_argument(
        "--cpu", type=int, help="seconds of CPU time (a process that outlives its grader ends)"
    )
    parser.add_argument("--workdir", type=Path, required=True, help="the one folder it may write")
    parser.add_argument("--read", type=Path, action="append", default=[], help="one more file it may read")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    resource.setrlimit(resource.RLIMIT_AS, (args.memory, args.memory))
    if args.cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu))
    abi = landlock_abi()
    if abi:
        _restrict(args.workdir.resolve(), [p.resolve() for p in args.read], abi)
    os.chdir(args.workdir)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
