"""Batch grading: run each submission in its own kernel, apply public and hidden tests, write a CSV.

A bad submission never stops the run. It gets a row whose ``error`` column says what was
wrong (empty, not a notebook, a cell that raised, the time limit, huge output, deleted or
moved cells) and the points its tests still earned. Grading runs the student's code: it
survives crashes and endless loops, it does not stop deliberate cheating.
"""

from __future__ import annotations

import csv
import json
import math
import os
import secrets
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync

from .authoring import Assignment, TestCase, is_test_cell
from .selfcheck import GRADING_ENV

MAX_FILE_BYTES = 20_000_000  # a larger file is refused unread
MAX_OUTPUT_BYTES = 1_000_000  # cell output beyond this is reported (all output is discarded anyway)
MESSAGE_CHARS = 200  # error text kept per problem


class SubmissionError(Exception):
    """The file cannot be graded at all (empty, too large, not a notebook)."""


@dataclass
class GradedSubmission:
    """One CSV row: points per question, the time it took, and every problem found."""

    file: str
    scores: dict[str, int]
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

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
        self.output_bytes += len(content.get("text", "")) + sum(len(str(v)) for v in content.get("data", {}).values())
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


def execute_and_test(submission, cases: list[TestCase], time_limit: float):
    """Run the submission's code cells, then the test cases; return (feedback per case, problems).

    The code cells share ``time_limit`` seconds (kernel start-up not counted); then each test
    case may run for ``time_limit`` seconds more.
    """
    code = [nbformat.v4.new_code_cell(cell.source) for cell in submission.cells if cell.cell_type == "code"]
    with tempfile.TemporaryDirectory(prefix="grade-") as workdir:
        result_path = Path(workdir) / f"results-{secrets.token_hex(8)}.json"
        test_cell = nbformat.v4.new_code_cell(
            '__import__("specdec_course.coursework.selfcheck", fromlist=["_"]).run_cases_to_file('
            f"{json.dumps([asdict(case) for case in cases])!r}, globals(), {str(result_path)!r}, {time_limit!r})")
        client = _QuietClient(nbformat.v4.new_notebook(cells=[*code, test_cell]), kernel_name="python3",
                              allow_errors=True, shutdown_kernel="immediate", resources={"metadata": {"path": workdir}})
        with client.setup_kernel(env={**os.environ, GRADING_ENV: "1"}):
            problems, responsive = _run_code_cells(client, code, time_limit)
            if client.output_bytes > MAX_OUTPUT_BYTES:
                problems.append(f"huge output: {client.output_bytes / 1e6:.1f} MB printed (discarded)")
            feedback = None
            if responsive:
                client.timeout = math.ceil(time_limit) * len(cases) + 10
                try:
                    client.execute_cell(test_cell, len(code))
                    feedback = json.loads(result_path.read_text())
                except (CellTimeoutError, OSError, ValueError):
                    pass
            if feedback is None:
                problems.append("the tests could not run (the kernel stayed busy or crashed)")
                feedback = ["not run"] * len(cases)
    return feedback, problems


def _run_code_cells(client, code, time_limit):
    """Execute the cells within one time budget; return (problems, whether the kernel still answers)."""
    problems: list[str] = []
    deadline = time.monotonic() + time_limit
    for index, cell in enumerate(code):
        client.timeout = max(1, math.ceil(deadline - time.monotonic()))
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:
            problems.append(f"time limit: still running after {time_limit:g} s in code cell {index + 1} "
                            f"({_first_line(cell.source)!r}); later cells not run")
            run_sync(client.km.interrupt_kernel)()
            return problems, _answers(client)
        error = next((out for out in cell.outputs if out.output_type == "error"), None)
        if error and not problems:  # report the first error only: later ones usually follow from it
            problems.append(f"code cell {index + 1} ({_first_line(cell.source)!r}) raised {error.ename}: {error.evalue}")
    return problems, True


def _answers(client, seconds=10) -> bool:
    """True if the kernel runs a trivial cell within ``seconds`` (after an interrupt it may not)."""
    client.timeout = seconds
    try:
        client.execute_cell(nbformat.v4.new_code_cell("pass"), 0)
    except CellTimeoutError:
        return False
    return True


def grade_submission(path: Path, assignment: Assignment, time_limit: float) -> GradedSubmission:
    """Grade one file; never raises for anything the file contains."""
    start = time.perf_counter()
    graded = GradedSubmission(path.name, {question: 0 for question in assignment.points})
    try:
        submission = read_submission(path)
        graded.problems += structure_problems(submission, assignment.notebook)
        feedback, problems = execute_and_test(submission, list(assignment.cases), time_limit)
        graded.problems += problems
        for case, result in zip(assignment.cases, feedback):
            if result is None:
                graded.scores[case.question] += case.points
    except SubmissionError as exc:
        graded.problems.append(str(exc))
    except DeadKernelError:
        graded.problems.append("the kernel died (out of memory, or the code exited the process)")
    except Exception as exc:  # a grader bug must cost one row, not the whole batch
        graded.problems.append(f"grader error: {type(exc).__name__}: {exc}")
    graded.seconds = time.perf_counter() - start
    return graded


def submission_files(folder: Path) -> list[Path]:
    """Every visible file in the folder (not only .ipynb: a wrong file type also gets a row)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def grade_folder(assignment: Assignment, folder, out, time_limit: float = 60, log=sys.stderr):
    """Grade every file in ``folder``, write one CSV row each to ``out``, report progress to ``log``."""
    files = [f for f in submission_files(Path(folder)) if f.resolve() != Path(out).resolve()]
    questions = list(assignment.points)
    rows = []
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", *questions, "total", "seconds", "error"])
        for i, path in enumerate(files, 1):
            graded = grade_submission(path, assignment, time_limit)
            writer.writerow([graded.file, *(graded.scores[q] for q in questions), graded.total,
                             f"{graded.seconds:.1f}", graded.error])
            handle.flush()
            print(f"[{i}/{len(files)}] {graded.file}: {graded.total}/{sum(assignment.points.values())} "
                  f"in {graded.seconds:.1f} s" + (f" — {graded.error}" if graded.error else ""), file=log, flush=True)
            rows.append(graded)
    return rows
