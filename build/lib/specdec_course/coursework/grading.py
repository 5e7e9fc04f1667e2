"""Batch grading: each submission runs in its own sandboxed kernel, the tests in a fresh checker.

A bad submission never stops the run. It gets a row whose ``error`` column says what was
wrong (empty, not a notebook, a cell that raised, the time or memory limit, huge output, deleted
or moved cells) and the points its tests still earned.

Trust: the submission's notebook runs in a kernel in a temporary folder that holds only that
notebook, under an address-space limit and, where Linux offers Landlock, unable to read anything
but Python and the course packages or to write outside that folder (``sandbox``). The hidden
tests never enter that kernel. After its cells, the kernel exports the names the tests read as
plain data and function source (``transfer``); a fresh checker process, sandboxed the same way,
rebuilds them and runs the public and hidden tests with its own numpy, ``specdec_lib`` and grader
(``checker``). Whatever the submission patched, printed or wrote in its kernel is gone by then.
Submissions are graded in parallel worker processes; the CSV is rewritten after each one, so an
interrupted run keeps every finished row and a rerun grades only the rest.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync

from .authoring import Assignment, TestCase, is_test_cell, without_solutions
from .sandbox import landlock_abi
from .selfcheck import GRADING_ENV
from .transfer import free_names

MAX_FILE_BYTES = 20_000_000  # a larger file is refused unread (also the limit for exported answers)
MAX_OUTPUT_BYTES = 1_000_000  # cell output beyond this is reported (all output is discarded anyway)
MESSAGE_CHARS = 200  # error text kept per problem
GB = 1e9


@dataclass(frozen=True)
class Limits:
    """Per submission: seconds for its code cells (each test case gets as many) and bytes of memory."""

    time: float = 60
    memory: int = int(2 * GB)


class SubmissionError(Exception):
    """The file cannot be graded at all (empty, too large, not a notebook)."""


@dataclass
class GradedSubmission:
    """One CSV row: points per question, the time it took, and every problem found."""

    file: str
    scores: dict[str, int]
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    sha256: str = ""

    @property
    def total(self) -> int:
        return sum(self.scores.values())

    @property
    def error(self) -> str:
        return "; ".join(p.replace("\n", " ")[:MESSAGE_CHARS] for p in self.problems)


class _QuietClient(NotebookClient):
    """Keeps only error outputs (grading never shows output) and counts the bytes it dropped."""

    output_bytes = 0

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "error":
            return super().output(outs, msg, display_id, cell_index)
        content = msg["content"]
        self.output_bytes += len(content.get("text", "")) + sum(
            len(str(v)) for v in content.get("data", {}).values()
        )
        return None


def read_submission(path: Path) -> nbformat.NotebookNode:
    """Read a submission, or raise ``SubmissionError`` saying why it cannot be graded."""
    size = path.stat().st_size
    if size == 0:
        raise SubmissionError("empty file (0 bytes)")
    if size > MAX_FILE_BYTES:
        raise SubmissionError(f"file too large ({size / 1e6:.1f} MB; limit {MAX_FILE_BYTES / 1e6:.0f} MB)")
    try:
        return nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    except Exception as exc:  # json, unicode and schema errors all mean the same to a grader
        raise SubmissionError(f"not a Jupyter notebook ({type(exc).__name__}: {str(exc)[:80]})") from None


def structure_problems(submission, source) -> list[str]:
    """The source's cells (by cell id; test cells aside) missing from the submission or out of order.

    The student edition keeps these ids; its grader and check cells are not counted.

    >>> from nbformat.v4 import new_code_cell as c, new_notebook as nb
    >>> structure_problems(nb(cells=[c(id="b"), c(id="a")]), nb(cells=[c(id="a"), c(id="b"), c(id="z")]))
    ['1 handed-out cell(s) deleted', 'cells reordered']
    """
    expected_ids = [cell.get("id") for cell in source.cells if not is_test_cell(cell)]
    position = {cell_id: i for i, cell_id in enumerate(expected_ids)}
    seen = [position[cell.get("id")] for cell in submission.cells if cell.get("id") in position]
    if not seen:
        return ["none of the handed-out cell ids found (cells copied into a new notebook?)"]
    problems = []
    if len(set(seen)) < len(expected_ids):
        problems.append(f"{len(expected_ids) - len(set(seen))} handed-out cell(s) deleted")
    if seen != sorted(seen):
        problems.append("cells reordered")
    return problems


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.split("\n") if line.strip()), "")[:40]


def _sandbox(workdir: Path, memory: int, cpu_seconds: float, *read) -> list[str]:
    """The command prefix that runs a program in ``sandbox`` with these limits."""
    return [
        sys.executable,
        "-m",
        "specdec_course.coursework.sandbox",
        "--memory",
        str(memory),
        "--cpu",
        str(math.ceil(cpu_seconds)),
        "--workdir",
        str(workdir),
        *(f"--read={path}" for path in read),
        "--",
    ]


def _environment(workdir: Path) -> dict[str, str]:
    home = str(workdir)
    return {
        **os.environ,
        GRADING_ENV: "1",
        "HOME": home,
        "TMPDIR": home,
        "MPLCONFIGDIR": home,
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_RUNTIME_DIR": home,
        "XDG_CACHE_HOME": home,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


class _SandboxedKernel(AsyncKernelManager):
    """A kernel started through ``sandbox`` (memory limit, readable and writable folders)."""

    prefix: list[str] = []

    def format_kernel_cmd(self, extra_arguments=None):
        return [*self.prefix, *super().format_kernel_cmd(extra_arguments)]


def given_code(assignment: Assignment) -> list[str]:
    """The source's code cells with no solution and no test: the data and imports every student gets."""
    return [
        cell.source
        for cell in assignment.notebook.cells
        if cell.cell_type == "code"
        and not is_test_cell(cell)
        and without_solutions(cell.source) == cell.source
    ]


def execute_and_test(submission, cases: list[TestCase], limits: Limits, given=()):
    """Run the submission's code cells in a sandboxed kernel, then the cases in a checker; return (feedback, problems).

    The code cells share ``limits.time`` seconds (kernel start-up not counted); then each test
    case may run for ``limits.time`` seconds more. ``given`` code runs in the checker after the
    answers arrive (grading passes the source's given cells, so the data is the instructor's).
    """
    code = [nbformat.v4.new_code_cell(cell.source) for cell in submission.cells if cell.cell_type == "code"]
    names = sorted(set().union(*(free_names(case.code) for case in cases)))
    export = nbformat.v4.new_code_cell(
        f'__import__("specdec_course.coursework.transfer", fromlist=["_"]).export(globals(), {names!r}, "answers.json")'
    )
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        run = Path(scratch) / "run"  # the kernel's folder: the notebook and nothing else
        run.mkdir()
        nbformat.write(submission, run / "submission.ipynb")
        km = _SandboxedKernel(kernel_name="python3", connection_file=str(Path(scratch) / "kernel.json"))
        km.prefix = _sandbox(run, limits.memory, 3 * limits.time + 60, km.connection_file)
        client = _QuietClient(
            nbformat.v4.new_notebook(cells=[*code, export]),
            km=km,
            allow_errors=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(run)}},
        )
        with client.setup_kernel(env=_environment(run)):
            problems, responsive = _run_code_cells(client, code, limits)
            if client.output_bytes > MAX_OUTPUT_BYTES:
                problems.append(f"huge output: {client.output_bytes / 1e6:.1f} MB printed (discarded)")
            answers = None
            if responsive:
                client.timeout = math.ceil(limits.time) + 10
                try:
                    client.execute_cell(export, len(code))
                    path = run / "answers.json"
                    if path.stat().st_size <= MAX_FILE_BYTES:
                        answers = path.read_text()
                except (CellTimeoutError, OSError, ValueError):
                    pass
    if answers is None:
        problems.append("the tests could not run (the kernel stayed busy or crashed)")
        return ["not run"] * len(cases), problems
    feedback, untransferred = run_checker(answers, cases, limits, given)
    problems += [
        f"{name} could not be checked ({why})" for name, why in untransferred.items() if name in names
    ]
    return feedback, problems


def run_checker(answers: str, cases: list[TestCase], limits: Limits, given=()):
    """Run the cases against exported answers in a fresh sandboxed process; return (feedback, problems by name)."""
    nonce = secrets.token_hex(16)
    request = {
        "nonce": nonce,
        "answers": answers,
        "given": list(given),
        "time_limit": limits.time,
        "cases": [asdict(case) for case in cases],
    }
    seconds = limits.time * (len(cases) + 1) + 30
    with tempfile.TemporaryDirectory(prefix="check-") as scratch:
        try:
            done = subprocess.run(
                [
                    *_sandbox(Path(scratch), limits.memory, seconds),
                    sys.executable,
                    "-m",
                    "specdec_course.coursework.checker",
                ],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                timeout=seconds,
                env=_environment(Path(scratch)),
                start_new_session=True,
            )
            reply = next(
                (line[len(nonce) :] for line in done.stdout.splitlines() if line.startswith(nonce)), None
            )
        except subprocess.TimeoutExpired:
            reply = None
    if reply is None:
        return ["not run: the checks did not finish (time or memory limit, or the process was ended)"] * len(
            cases
        ), {}
    result = json.loads(reply)
    return result["feedback"], result["problems"]


def _run_code_cells(client, code, limits: Limits):
    """Execute the cells within one time budget; return (problems, whether the kernel still answers)."""
    problems: list[str] = []
    time_limit = limits.time
    deadline = time.monotonic() + time_limit
    for index, cell in enumerate(code):
        client.timeout = max(1, math.ceil(deadline - time.monotonic()))
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:
            problems.append(
                f"time limit: still running after {time_limit:g} s in code cell {index + 1} "
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
    except CellTimeoutError:
        return False
    return True


def grade_submission(path: Path, assignment: Assignment, limits: Limits = Limits()) -> GradedSubmission:
    """Grade one file; never raises for anything the file contains."""
    start = time.perf_counter()
    graded = GradedSubmission(path.name, {question: 0 for question in assignment.points})
    try:
        graded.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        submission = read_submission(path)
        graded.problems += structure_problems(submission, assignment.notebook)
        feedback, problems = execute_and_test(
            submission, list(assignment.cases), limits, given_code(assignment)
        )
        graded.problems += problems
        for case, result in zip(assignment.cases, feedback):
            if result is None:
                graded.scores[case.question] += case.points
    except SubmissionError as exc:
        graded.problems.append(str(exc))
    except DeadKernelError:
        graded.problems.append(
            f"the kernel died (memory limit of {limits.memory / GB:g} GB exceeded, "
            "or the code ended the process)"
        )
    except Exception as exc:  # a grader bug must cost one row, not the whole batch
        graded.problems.append(f"grader error: {type(exc).__name__}: {exc}")
    graded.seconds = time.perf_counter() - start
    return graded


def submission_files(folder: Path) -> list[Path]:
    """Every visible file in the folder (not only .ipynb: a wrong file type also gets a row)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def _header(assignment: Assignment) -> list[str]:
    return ["file", *assignment.points, "total", "seconds", "error", "sha256"]


def _row(graded: GradedSubmission) -> list:
    return [
        graded.file,
        *graded.scores.values(),
        graded.total,
        f"{graded.seconds:.1f}",
        graded.error,
        graded.sha256,
    ]


def _finished_rows(out: Path, assignment: Assignment) -> dict[str, GradedSubmission]:
    """Rows of an earlier run of the same assignment in ``out`` (none if it is missing or has other columns)."""
    try:
        with open(out, newline="") as handle:
            reader = csv.reader(handle)
            if next(reader, None) != _header(assignment):
                return {}
            rows = [dict(zip(_header(assignment), row)) for row in reader]
    except OSError:
        return {}
    return {
        row["file"]: GradedSubmission(
            row["file"],
            {q: int(row[q]) for q in assignment.points},
            float(row["seconds"]),
            [row["error"]] if row["error"] else [],
            row["sha256"],
        )
        for row in rows
    }


def _partial(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _write_rows(out: Path, assignment: Assignment, rows: list[GradedSubmission]) -> None:
    """Replace ``out`` in one step (a crash leaves the old file or the new one, never half of one)."""
    partial = _partial(out)
    with open(partial, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(_header(assignment))
        writer.writerows(_row(graded) for graded in rows)
    os.replace(partial, out)


def _worker_ignores_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt means


def _grade_job(job):
    return grade_submission(*job)


def grade_folder(
    assignment: Assignment, folder, out, limits: Limits = Limits(), jobs: int | None = None, log=sys.stderr
) -> list[GradedSubmission]:
    """Grade every file in ``folder`` with ``jobs`` worker processes; one CSV row each, in file order.

    ``out`` is rewritten after each submission. Rows already in ``out`` for the same file (same
    SHA-256) and assignment are kept, not regraded, so an interrupted run resumes where it stopped.
    Progress goes to ``log``.
    """
    out = Path(out)
    ours = {out.resolve(), _partial(out).resolve()}
    files = [f for f in submission_files(Path(folder)) if f.resolve() not in ours]
    earlier = _finished_rows(out, assignment)
    rows = {}
    for path in files:
        row = earlier.get(path.name)
        if row and row.sha256 == hashlib.sha256(path.read_bytes()).hexdigest():
            rows[path.name] = row
    todo = [path for path in files if path.name not in rows]
    order = {path.name: i for i, path in enumerate(files)}
    full = sum(assignment.points.values())
    if not landlock_abi():
        print(
            "warning: no Landlock on this system: submissions run with a memory limit but can read and write "
            "every file you can (the hidden tests in coursework/ included)",
            file=log,
            flush=True,
        )
    if rows:
        print(f"resuming {out}: {len(rows)} of {len(files)} already graded", file=log, flush=True)
    _write_rows(out, assignment, sorted(rows.values(), key=lambda g: order[g.file]))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_worker_ignores_ctrl_c)
    try:
        for graded in pool.imap_unordered(_grade_job, [(path, assignment, limits) for path in todo]):
            rows[graded.file] = graded
            _write_rows(out, assignment, sorted(rows.values(), key=lambda g: order[g.file]))
            print(
                f"[{len(rows)}/{len(files)}] {graded.file}: {graded.total}/{full} in {graded.seconds:.1f} s"
                + (f" — {graded.error}" if graded.error else ""),
                file=log,
                flush=True,
            )
    except KeyboardInterrupt:
        print(
            f"interrupted: {out} holds the {len(rows)} finished rows; run the same command again to grade "
            f"the other {len(files) - len(rows)}",
            file=log,
            flush=True,
        )
        raise
    finally:
        pool.terminate()
        pool.join()
    return sorted(rows.values(), key=lambda g: order[g.file])
