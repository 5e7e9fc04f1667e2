"""A submission's notebook in a sandboxed kernel, and the sandbox command every submitted code runs under.

The kernel is started through ``sandbox`` in a scratch folder: it may write only ``run/`` (which holds
the notebook), bind its Jupyter sockets only in ``sockets/`` (Unix sockets, so it needs no TCP),
and read only the system, Python and the course packages. Its environment is a few fixed
variables (none of the grader's), its stdout and stderr go to a log file in the scratch folder
(never to the instructor's terminal). After its cells, the kernel writes the names the tests read
to ``run/answers.json`` (``transfer.export``); the grader opens that file without following links,
refuses anything but a regular file and reads at most ``MAX_ANSWER_BYTES``. When the row ends the
kernel is shut down and every process it started is ended (its PID namespace, or ``sandbox.sweep``).
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
import sys
import time
from pathlib import Path

import nbformat
import zmq
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync

from . import sandbox
from .sandbox import ROW_ENV, package_roots, readable_dirs, sweep
from .selfcheck import GRADING_ENV

MAX_ANSWER_BYTES = 20_000_000
MAX_OUTPUT_BYTES = 1_000_000  # cell output beyond this is reported (all output is discarded anyway)
MAX_FILE_BYTES = 200_000_000  # any one file a sandboxed process writes
PROCESSES = 64  # processes and threads one sandbox may run at once
GB = 1e9
SEND_SECONDS = 10  # a request the kernel does not take within this is a kernel that stopped answering


def sandbox_command(workdir: Path, memory: int, cpu_seconds: float, *, read=(), sockets=(), read_dirs=None):
    """The command prefix that runs a program in ``sandbox`` with these limits and folders."""
    return [
        sys.executable,
        sandbox.__file__,  # by path: the launcher needs none of the packages, so it starts in milliseconds
        f"--memory={memory}",
        f"--cpu={math.ceil(cpu_seconds)}",
        f"--processes={PROCESSES}",
        f"--file-size={MAX_FILE_BYTES}",
        f"--workdir={workdir}",
        *(f"--read-dir={path}" for path in (readable_dirs() if read_dirs is None else read_dirs)),
        *(f"--list-dir={path}" for path in package_roots()),
        *(f"--read={path}" for path in read),
        *(f"--socket-dir={path}" for path in sockets),
        "--",
    ]


def sandbox_environment(home: Path, token: str) -> dict[str, str]:
    """The whole environment of a sandboxed process: nothing of the grader's but where the packages are."""
    home = str(home)
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "MPLCONFIGDIR": home,
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_RUNTIME_DIR": home,
        "XDG_CACHE_HOME": home,
        "PYTHONPATH": os.pathsep.join(map(str, package_roots())),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        GRADING_ENV: "1",
        ROW_ENV: token,
    }


class _SandboxedKernel(AsyncKernelManager):
    """A kernel started through ``sandbox``."""

    prefix: list[str] = []

    def format_kernel_cmd(self, extra_arguments=None):
        return [*self.prefix, *super().format_kernel_cmd(extra_arguments)]


class _QuietClient(NotebookClient):
    """Keeps only error outputs (grading never shows output) and counts the bytes it dropped.

    A kernel whose sockets the submission broke must not hang the grader: a message that cannot
    be sent within ``SEND_SECONDS`` raises ``zmq.Again`` instead of blocking for ever.
    """

    output_bytes = 0

    async def async_start_new_kernel_client(self):
        client = await super().async_start_new_kernel_client()
        for channel in (client.shell_channel, client.control_channel, client.stdin_channel):
            channel.socket.setsockopt(zmq.SNDTIMEO, SEND_SECONDS * 1000)
        return client

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "error":
            return super().output(outs, msg, display_id, cell_index)
        content = msg["content"]
        self.output_bytes += len(content.get("text", "")) + sum(
            len(str(v)) for v in content.get("data", {}).values()
        )
        return None


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.split("\n") if line.strip()), "")[:40]


def read_capped(path: Path, limit: int = MAX_ANSWER_BYTES) -> str:
    """A regular file's text, opened without following a link or blocking; ``OSError`` otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path.name} is larger than {limit / 1e6:.0f} MB")
    return data.decode("utf-8")


def run_notebook(code: list[str], names: list[str], limits, scratch: Path, token: str):
    """Run the code cells in a sandboxed kernel, then export ``names``; return (problems, answers JSON or None)."""
    run, sockets = scratch / "run", scratch / "sockets"
    run.mkdir()
    sockets.mkdir()
    cells = [nbformat.v4.new_code_cell(source) for source in code]
    export = nbformat.v4.new_code_cell(
        f'__import__("specdec_course.coursework.transfer", fromlist=["_"]).export(globals(), {names!r}, "answers.json")'
    )
    km = _SandboxedKernel(
        kernel_name="python3",
        transport="ipc",
        ip=str(sockets / "kernel"),
        connection_file=str(scratch / "kernel.json"),
    )
    km.prefix = sandbox_command(
        run, limits.memory, 3 * limits.time + 60, read=[km.connection_file], sockets=[sockets]
    )
    client = _QuietClient(
        nbformat.v4.new_notebook(cells=[*cells, export]),
        km=km,
        allow_errors=True,
        resources={"metadata": {"path": str(run)}},
    )
    problems, answers = [], None
    with open(scratch / "kernel.log", "wb") as log:
        try:
            with client.setup_kernel(env=sandbox_environment(run, token), stdout=log, stderr=log, stdin=None):
                problems, responsive = _run_code_cells(client, cells, limits)
                if client.output_bytes > MAX_OUTPUT_BYTES:
                    problems.append(f"huge output: {client.output_bytes / 1e6:.1f} MB printed (discarded)")
                if responsive:
                    client.timeout = math.ceil(limits.time) + 10
                    try:
                        client.execute_cell(export, len(cells))
                        answers = read_capped(run / "answers.json")
                    except (CellTimeoutError, OSError, ValueError) as exc:
                        problems.append(f"the answers could not be read ({str(exc)[:80]})")
        except DeadKernelError:
            problems.append(
                f"the kernel died (memory limit of {limits.memory / GB:g} GB exceeded, "
                "or the code ended the process)"
            )
        except zmq.ZMQError:
            problems.append("the kernel stopped answering (its code broke its connection to the grader)")
        finally:
            end_kernel(km, client.kc, token)
    return problems, answers


def end_kernel(km, kc, token: str) -> None:
    """Shut the kernel down at once, close the client's sockets and end every process of this row."""
    with contextlib.suppress(Exception):  # already dead, or never started
        run_sync(km.shutdown_kernel)(now=True)
    if kc is not None:  # nbclient leaves a client open when the manager was passed in, as here
        kc.stop_channels()
    sweep(token)


def _run_code_cells(client, cells, limits):
    """Execute the cells within one time budget; return (problems, whether the kernel still answers)."""
    problems: list[str] = []
    deadline = time.monotonic() + limits.time
    for index, cell in enumerate(cells):
        client.timeout = max(1, math.ceil(deadline - time.monotonic()))
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:
            problems.append(
                f"time limit: still running after {limits.time:g} s in code cell {index + 1} "
                f"({_first_line(cell.source)!r}); later cells not run"
            )
            run_sync(client.km.interrupt_kernel)()
            return problems, _answers(client)
        error = next((out for out in cell.outputs if out.output_type == "error"), None)
        if error and error.ename == "MemoryError":
            problems.append(
                f"memory limit exceeded ({limits.memory / GB:g} GB): code cell {index + 1} "
                f"({_first_line(cell.source)!r}) raised MemoryError"
            )
        elif error and not problems:  # report the first error only: later ones usually follow from it
            problems.append(
                f"code cell {index + 1} ({_first_line(cell.source)!r}) raised {error.ename}: {error.evalue}"
            )
    return problems, True


def _answers(client, seconds=10) -> bool:
    """True if the kernel runs a trivial cell within ``seconds`` (after an interrupt it may not)."""
    client.timeout = seconds
    try:
        client.execute_cell(nbformat.v4.new_code_cell("pass"), 0)
    except (CellTimeoutError, zmq.ZMQError):
        return False
    return True
