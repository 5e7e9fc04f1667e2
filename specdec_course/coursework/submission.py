"""Grading one submission: its notebook in a sandboxed kernel, its functions in a sandboxed host, the tests here.

A bad submission gets a row whose ``error`` says what was wrong (empty, not a notebook, a cell that
raised, the time or memory limit, huge output, deleted or moved cells) and the points its tests
still earned; nothing in the file can raise out of ``grade_submission``.

Trust: no submitted code ever runs in this process. The notebook runs in a kernel (``kernel``),
which exports the names the tests read as plain data and function source (``transfer``). Here
the data is decoded as data; each submitted function becomes a ``HostedFunction`` that runs it in
a separate sandboxed process (``function_host``) and returns only plain data. The given cells of
the instructor's notebook and the test cases, public and hidden, run in this process, so their
assertions decide, and their text reaches no submitted code and no row.

``python -m specdec_course.coursework.submission`` is a worker of the batch runner (``batch``): it
reads the assignment and then one file path per line from stdin, and writes each row as one line
of JSON to stdout.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import secrets
import stat
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from .authoring import Assignment, TestCase, is_test_cell, read_assignment, without_solutions
from .function_host import FunctionHost, HostedFunction
from .kernel import GB, run_notebook, sandbox_command, sandbox_environment
from .sandbox import package_roots, readable_dirs
from .selfcheck import run_case
from .transfer import free_names, is_code, load_data, read_answers

MAX_FILE_BYTES = 20_000_000  # a larger file is refused unread
MESSAGE_CHARS = 200  # error text kept per problem


@dataclass(frozen=True)
class Limits:
    """Per submission: seconds for its code cells (each test case gets as many) and bytes of memory per process."""

    time: float = 60
    memory: int = int(2 * GB)


class SubmissionError(Exception):
    """The file cannot be graded at all (empty, too large, not a notebook, not a regular file)."""


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


def read_bytes(path: Path) -> bytes:
    """A submitted file's bytes: a regular file (no link followed), at most ``MAX_FILE_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        kind = "a symbolic link" if path.is_symlink() else exc.strerror
        raise SubmissionError(f"not graded: {kind} (only regular files are)") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError("not graded: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise SubmissionError(
                f"file too large ({info.st_size / 1e6:.1f} MB; limit {MAX_FILE_BYTES / 1e6:.0f} MB)"
            )
        return handle.read(MAX_FILE_BYTES + 1)


def parse_submission(data: bytes) -> nbformat.NotebookNode:
    """The notebook in ``data``, or ``SubmissionError`` saying why it cannot be graded."""
    if not data:
        raise SubmissionError("empty file (0 bytes)")
    if len(data) > MAX_FILE_BYTES:
        raise SubmissionError(f"file too large (limit {MAX_FILE_BYTES / 1e6:.0f} MB)")
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as exc:  # json, unicode and schema errors all mean the same to a grader
        raise SubmissionError(f"not a Jupyter notebook ({type(exc).__name__}: {str(exc)[:80]})") from None


def read_submission(path: Path) -> nbformat.NotebookNode:
    """Read a submission, or raise ``SubmissionError`` saying why it cannot be graded."""
    return parse_submission(read_bytes(Path(path)))


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


def given_code(assignment: Assignment) -> list[str]:
    """The source's code cells with no solution and no test: the data and imports every student gets."""
    return [
        cell.source
        for cell in assignment.notebook.cells
        if cell.cell_type == "code"
        and not is_test_cell(cell)
        and without_solutions(cell.source) == cell.source
    ]


def library_verifiers_allowed(assignment: Assignment) -> bool:
    """Whether the source notebook's metadata lets submitted functions call ``specdec_lib``'s verifiers."""
    return assignment.notebook.metadata.get("coursework", {}).get("library_verifiers") == "allowed"


def run_tests(
    answers: str, cases: list[TestCase], limits: Limits, scratch: Path, token: str, given=(), verifiers=False
):
    """Run the cases here against exported answers; return (feedback per case, problems by name).

    Plain data is decoded into the tests' namespace, then ``given`` (trusted) code runs, then each
    submitted function enters as a ``HostedFunction`` whose host starts before the first case.
    """
    values, problems = read_answers(answers)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    load_data(values, namespace, problems)
    for code in given:
        exec(compile(code, "<given>", "exec"), namespace)
    code_names = [name for name, data in values.items() if is_code(data)]
    host = None
    if code_names:
        home = scratch / "host"
        home.mkdir()
        library = {root / name for root in package_roots() for name in ("specdec_lib", "specdec_course")}
        host_dirs = [d for d in readable_dirs() if d not in library]
        setup = {
            "answers": answers,
            "given": list(given),
            "library_verifiers": verifiers,
            "read_dirs": list(map(str, host_dirs)),
        }
        command = [
            *sandbox_command(home, limits.memory, limits.time * (len(cases) + 1) + 30),
            sys.executable,
            "-m",
            "specdec_course.coursework.function_host",
        ]
        log = open(scratch / "host.log", "wb")  # noqa: SIM115 (closed with the host below)
        host = FunctionHost(command, sandbox_environment(home, token), setup, limits.time, log)
        for name in code_names:
            namespace[name] = HostedFunction(host, name)
    feedback = []
    try:
        if host is not None:
            try:
                problems.update(host.ready_problems())
            except Exception as exc:
                problems.update({name: f"its process did not start ({exc})" for name in code_names})
        for case in cases:
            feedback.append(run_case(case.code, namespace, limits.time))
    finally:
        if host is not None:
            host.close()
            host.log.close()
    return feedback, problems


def execute_and_test(submission, cases: list[TestCase], limits: Limits, given=(), verifiers=False):
    """Run the submission's code cells in a sandboxed kernel, then the cases here; return (feedback, problems).

    The code cells share ``limits.time`` seconds (kernel start-up not counted); then each test
    case may run for ``limits.time`` seconds more. ``given`` code runs before the tests (grading
    passes the source's given cells, so the data is the instructor's).
    """
    code = [cell.source for cell in submission.cells if cell.cell_type == "code"]
    names = sorted(set().union(*(free_names(case.code) for case in cases)))
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        problems, answers = run_notebook(code, names, limits, scratch, token)
        if answers is None:
            problems.append("the tests could not run (the kernel stayed busy or crashed)")
            return ["not run"] * len(cases), problems
        try:
            feedback, untransferred = run_tests(answers, cases, limits, scratch, token, given, verifiers)
        except ValueError as exc:
            problems.append(f"the exported answers could not be read ({str(exc)[:80]})")
            return ["not run"] * len(cases), problems
    problems += [
        f"{name} could not be checked ({why})" for name, why in untransferred.items() if name in names
    ]
    return feedback, problems


def grade_submission(path: Path, assignment: Assignment, limits: Limits = Limits()) -> GradedSubmission:
    """Grade one file; never raises for anything the file contains."""
    start = time.perf_counter()
    path = Path(path)
    graded = GradedSubmission(path.name, {question: 0 for question in assignment.points})
    try:
        data = read_bytes(path)
        graded.sha256 = hashlib.sha256(data).hexdigest()
        submission = parse_submission(data)
        graded.problems += structure_problems(submission, assignment.notebook)
        feedback, problems = execute_and_test(
            submission,
            list(assignment.cases),
            limits,
            given_code(assignment),
            library_verifiers_allowed(assignment),
        )
        graded.problems += problems
        for case, result in zip(assignment.cases, feedback):
            if result is None:
                graded.scores[case.question] += case.points
    except SubmissionError as exc:
        graded.problems.append(str(exc))
    except Exception as exc:  # a grader bug must cost one row, not the whole batch
        graded.problems.append(f"grader error: {type(exc).__name__}: {exc}")
    graded.seconds = time.perf_counter() - start
    return graded


def main() -> None:
    """Worker: read the job (assignment, limits), then grade each path on stdin; one JSON row per line out."""
    results = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # only the rows go to the batch runner
    job = json.loads(sys.stdin.readline())
    assignment = read_assignment(job["assignment"], nbformat.reads(job["notebook"], as_version=4))
    limits = Limits(**job["limits"])
    for line in sys.stdin:
        graded = grade_submission(Path(json.loads(line)), assignment, limits)
        results.write(json.dumps(asdict(graded)) + "\n")
        results.flush()


if __name__ == "__main__":
    main()
