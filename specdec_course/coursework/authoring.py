"""The authoring format of an assignment's source (instructor) notebook, and how to read it.

The markers follow otter-grader's conventions, so an instructor who knows otter can read them:

* ``# BEGIN SOLUTION`` … ``# END SOLUTION`` lines in a code cell enclose solution code;
  ``name = value  # SOLUTION`` marks a one-line answer. In a markdown cell
  ``<!-- BEGIN SOLUTION -->`` … ``<!-- END SOLUTION -->`` encloses a written answer.
* A code cell whose first line is ``# TEST q1: 2 points`` is one public test case of
  question ``q1``; ``# HIDDEN TEST q1: 2 points`` is a hidden one (points default to 1).
  A test case is plain Python that raises ``AssertionError`` with a message saying what
  is wrong. It imports what it needs itself and reads only the student's answers: plain data,
  and functions it may call with plain data (numbers, arrays, a numpy ``Generator``).
* Submitted functions run where ``specdec_lib``'s verifiers (``verify*``) refuse to run, so an
  assignment that asks for a verifier cannot be answered by calling one. An assignment whose
  functions may call them sets ``"coursework": {"library_verifiers": "allowed"}`` in the
  notebook's metadata.

In the source notebook every cell runs as written, so nbval checks that the solutions
pass their own tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

COURSEWORK_DIR = Path(__file__).resolve().parents[2] / "coursework"  # nbformat is imported only to read one
TEST_HEADER = re.compile(r"^# (HIDDEN )?TEST (\w+)(?:\s*:\s*(\d+) points?)?\s*$", re.MULTILINE)
CODE_PLACEHOLDER = "...  # YOUR CODE HERE"
ANSWER_PLACEHOLDER = "*Write your answer here.*"
_MARKERS = {
    "code": ("# BEGIN SOLUTION", "# END SOLUTION"),
    "markdown": ("<!-- BEGIN SOLUTION -->", "<!-- END SOLUTION -->"),
}
_ONE_LINE_ANSWER = re.compile(r"^(\s*[^#=]+?=\s*).+?\s*# SOLUTION\s*$")


@dataclass(frozen=True)
class TestCase:
    """One test case: plain Python run in the student's namespace; passing earns ``points``."""

    question: str
    points: int
    hidden: bool
    code: str


def parse_test_cases(text: str) -> list[TestCase]:
    """Split text at ``# TEST``/``# HIDDEN TEST`` header lines into test cases.

    >>> [(c.question, c.points, c.hidden) for c in parse_test_cases(
    ...     "# TEST q1: 2 points\\nassert x\\n# HIDDEN TEST q2\\nassert y\\n")]
    [('q1', 2, False), ('q2', 1, True)]
    """
    headers = list(TEST_HEADER.finditer(text))
    cases = []
    for header, following in zip(headers, headers[1:] + [None]):
        end = following.start() if following else len(text)
        cases.append(
            TestCase(
                question=header[2],
                points=int(header[3] or 1),
                hidden=bool(header[1]),
                code=text[header.start() : end].rstrip() + "\n",
            )
        )
    return cases


def is_test_cell(cell) -> bool:
    """True for a code cell whose first line is a test header."""
    return cell.cell_type == "code" and TEST_HEADER.match(cell.source.split("\n", 1)[0]) is not None


def without_solutions(source: str, cell_type: str = "code") -> str:
    """The cell source with every solution block and one-line answer replaced by a placeholder.

    >>> print(without_solutions("def f(x):\\n    # BEGIN SOLUTION\\n    return 2 * x\\n    # END SOLUTION"))
    def f(x):
        ...  # YOUR CODE HERE
    >>> without_solutions("alpha = 0.6  # SOLUTION")
    'alpha = ...  # YOUR CODE HERE'
    """
    begin, end = _MARKERS[cell_type]
    placeholder = CODE_PLACEHOLDER if cell_type == "code" else ANSWER_PLACEHOLDER
    out, inside = [], False
    for line in source.split("\n"):
        marker = line.strip()
        if marker == begin:
            if inside:
                raise ValueError(f"source: nested {begin!r}")
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + placeholder)
        elif marker == end:
            if not inside:
                raise ValueError(f"source: {end!r} without {begin!r}")
            inside = False
        elif not inside:
            one_line = _ONE_LINE_ANSWER.match(line) if cell_type == "code" else None
            out.append(one_line[1] + CODE_PLACEHOLDER if one_line else line)
    if inside:
        raise ValueError(f"source: {begin!r} without {end!r}")
    return "\n".join(out)


def solution_lines(source: str, cell_type: str = "code") -> list[str]:
    """The stripped lines a student must not see: inside solution blocks, or one-line answers."""
    kept = set(without_solutions(source, cell_type).split("\n"))
    begin, end = _MARKERS[cell_type]
    return [
        line.strip()
        for line in source.split("\n")
        if line not in kept and line.strip() and line.strip() not in (begin, end)
    ]


@dataclass(frozen=True)
class Assignment:
    """A source notebook read once: its name, cells and test cases."""

    name: str
    notebook: object  # an nbformat.NotebookNode
    cases: tuple[TestCase, ...]

    @property
    def points(self) -> dict[str, int]:
        """Maximum points per question, in the order the questions first appear."""
        totals: dict[str, int] = {}
        for case in self.cases:
            totals[case.question] = totals.get(case.question, 0) + case.points
        return totals


def load_assignment(name_or_path) -> Assignment:
    """Read ``coursework/NAME.ipynb`` (or a notebook path) and collect its test cases."""
    path = Path(name_or_path)
    if path.suffix != ".ipynb":
        path = COURSEWORK_DIR / f"{name_or_path}.ipynb"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in COURSEWORK_DIR.glob("*.ipynb")))
        raise ValueError(f"assignment: no source notebook {path} (known assignments: {known})")
    import nbformat  # slow to import (its schema validator), and the student's kernel never needs it

    return read_assignment(path.stem, nbformat.read(path, as_version=4))


def read_assignment(name: str, notebook) -> Assignment:
    """An assignment from its source notebook, already read."""
    cases = [case for cell in notebook.cells if is_test_cell(cell) for case in parse_test_cases(cell.source)]
    return Assignment(name, notebook, tuple(cases))


def assignments() -> list[Assignment]:
    """Every assignment under ``coursework/``, by file name."""
    return [load_assignment(path) for path in sorted(COURSEWORK_DIR.glob("*.ipynb"))]
