"""Coursework: the student edition hides solutions, self-checks explain, batch grading survives anything.

Grading starts one kernel per submission (about 2 s each here); the hostile set is graded in one
batch with a short time limit so the endless loop costs TIME_LIMIT seconds once.
"""

import csv
import time

import nbformat
import numpy as np
import pytest

from specdec_lib.broken_verifiers import BROKEN_VERIFIERS
from specdec_course.coursework import Grader
from specdec_course.coursework.__main__ import main
from specdec_course.coursework.authoring import assignments, load_assignment, solution_lines
from specdec_course.coursework.grading import grade_folder
from specdec_course.coursework.selfcheck import GRADING_ENV, run_case
from specdec_course.coursework.student import student_notebook, write_student_edition

TIME_LIMIT = 20  # seconds per submission's cells in these tests
ASSIGNMENTS = [a.name for a in assignments()]


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    out = tmp_path_factory.mktemp("handout")
    write_student_edition(out)
    return out


def _read_rows(path):
    with open(path, newline="") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def _full_marks(name):
    return sum(load_assignment(name).points.values())


def test_there_are_at_least_three_assignments_with_public_and_hidden_tests():
    assert len(ASSIGNMENTS) >= 3
    for assignment in assignments():
        kinds = {case.hidden for case in assignment.cases}
        assert kinds == {True, False}, f"{assignment.name} needs public and hidden test cases"


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_student_edition_contains_no_solution_code_or_hidden_test(name, handout):
    assignment = load_assignment(name)
    secret = {line for cell in assignment.notebook.cells if cell.cell_type in ("code", "markdown")
              for line in solution_lines(cell.source, cell.cell_type)}
    public_lines = {line.strip() for case in assignment.cases if not case.hidden for line in case.code.split("\n")}
    secret |= {line.strip() for case in assignment.cases if case.hidden
               for line in case.code.split("\n") if line.strip().startswith("assert")} - public_lines
    assert len(secret) >= 3, "the source should have distinctive solution lines to look for"
    handed_out = (handout / f"{name}.ipynb").read_text() + (handout / "tests" / f"{name}.py").read_text()
    leaked = [line for line in secret if line in handed_out]
    assert not leaked, f"{name}: student edition shows {leaked}"
    assert "YOUR CODE HERE" in handed_out
    assert "HIDDEN TEST" not in handed_out


def test_solution_search_finds_a_leak_negative_control():
    assignment = load_assignment(ASSIGNMENTS[0])
    secret = [line for cell in assignment.notebook.cells if cell.cell_type == "code"
              for line in solution_lines(cell.source)]
    leaky = nbformat.writes(assignment.notebook)  # the source itself, as if handed out by mistake
    assert any(line in leaky for line in secret)


def test_student_edition_keeps_cell_ids_and_asks_for_each_question():
    assignment = load_assignment("alpha_residual")
    notebook = student_notebook(assignment)
    source_ids = {cell.id for cell in assignment.notebook.cells}
    added = [cell.source for cell in notebook.cells if cell.id not in source_ids]
    assert added[1:] == [f'grader.check("{question}")' for question in assignment.points]
    assert added[0].startswith("from specdec_course.coursework import Grader")


def test_self_check_gives_specific_feedback_without_hidden_tests(handout, monkeypatch):
    monkeypatch.delenv(GRADING_ENV, raising=False)
    monkeypatch.chdir(handout)
    grader = Grader("alpha_residual")
    answers = {"p": np.array([0.5, 0.2, 0.2, 0.1]), "q": np.array([0.25, 0.25, 0.4, 0.1]), "GAMMA": 3,
               "alpha": 1.4, "residual": np.array([0.5, 0.5, 0, 0]), "expected_K": ...}
    assert "lies in [0, 1]; got 1.4" in repr(grader.check("q1", answers))
    assert "must get residual 0" in repr(grader.check("q2", answers))
    assert "should be a number, got Ellipsis" in repr(grader.check("q3", answers))
    answers.update(alpha=0.7, residual=np.array([1.0, 0, 0, 0]), expected_K=2.533)
    assert all(grader.check(q, answers).passed for q in ("q1", "q2", "q3"))  # public checks only: 2.533 is wrong
    exec('result = grader.check("q1")', notebook := {"grader": grader, "alpha": ...})  # as in a notebook cell
    assert "got Ellipsis" in repr(notebook["result"])
    monkeypatch.setenv(GRADING_ENV, "1")
    assert grader.check("q1", {}).feedback == ()  # while grading, self-checks do nothing


@pytest.mark.parametrize("bug", sorted(BROKEN_VERIFIERS))
def test_verifier_self_check_rejects_every_planted_bug_with_the_checker_summary(bug):
    verifier, _ = BROKEN_VERIFIERS[bug]
    public = [c for c in load_assignment("implement_verify").cases if c.question == "q2" and not c.hidden]
    feedback = [run_case(case.code, {"my_verify": verifier}) for case in public]
    assert any(f is not None and f.startswith("FAIL (") for f in feedback), feedback


STUBBORN_LOOP = """\
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignores the grader's interrupt
while True:
    pass"""


def _variant(source_nb, *, insert=None, delete=None, move_first_to_end=False):
    nb = nbformat.from_dict(source_nb)
    cells = list(nb.cells)
    if delete is not None:
        cells = [c for c in cells if delete not in c.source]
    if insert is not None:
        after, code = insert
        index = next(i for i, c in enumerate(cells) if after in c.source) + 1
        cells.insert(index, nbformat.v4.new_code_cell(code))
    if move_first_to_end:
        first_code = next(i for i, c in enumerate(cells) if c.cell_type == "code")
        cells.append(cells.pop(first_code))
    nb.cells = cells
    return nbformat.writes(nb)


@pytest.fixture(scope="module")
def hostile_grades(tmp_path_factory, handout):
    """Grade one batch: the solution, the untouched handout and one file per kind of bad submission."""
    folder = tmp_path_factory.mktemp("submissions")
    source = load_assignment("alpha_residual").notebook
    files = {
        "solution.ipynb": nbformat.writes(source),
        "untouched.ipynb": (handout / "alpha_residual.ipynb").read_text(),
        "syntax_error.ipynb": _variant(source, insert=("# SOLUTION", "alpha = = 1")),
        "endless_loop.ipynb": _variant(source, insert=("# SOLUTION", "while True:\n    pass")),
        "stubborn_loop.ipynb": _variant(source, insert=("# SOLUTION", STUBBORN_LOOP)),
        "deleted_cells.ipynb": _variant(source, delete="# BEGIN SOLUTION"),
        "reordered_cells.ipynb": _variant(source, move_first_to_end=True),
        "huge_output.ipynb": _variant(source, insert=("# SOLUTION", "print('x' * 5_000_000)")),
        "not_a_notebook.ipynb": "this is an essay, not a notebook",
        "report.pdf": "%PDF-1.4 binary\x00\x01",
        "empty.ipynb": "",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    out = folder / "grades.csv"
    start = time.perf_counter()
    returned = grade_folder(load_assignment("alpha_residual"), folder, out, time_limit=TIME_LIMIT)
    elapsed = time.perf_counter() - start
    print(f"hostile set: {len(files)} files graded in {elapsed:.1f} s")
    return _read_rows(out), returned, elapsed


def test_solution_grades_full_and_untouched_handout_grades_zero(hostile_grades):
    rows, _, _ = hostile_grades
    assert int(rows["solution.ipynb"]["total"]) == _full_marks("alpha_residual")
    assert rows["solution.ipynb"]["error"] == ""
    assert int(rows["untouched.ipynb"]["total"]) == 0


@pytest.mark.parametrize(("file", "expected_error", "expected_total"), [
    ("syntax_error.ipynb", "raised SyntaxError", 6),  # the bad cell is extra; every answer still runs
    ("endless_loop.ipynb", "time limit: still running after 20 s", 2),  # q1 answered before the loop
    ("stubborn_loop.ipynb", "the tests could not run", 0),  # the kernel ignored the interrupt
    ("deleted_cells.ipynb", "1 handed-out cell(s) deleted", 4),  # q2's answer cell is gone
    ("reordered_cells.ipynb", "cells reordered", 0),  # the data cell now runs last
    ("huge_output.ipynb", "huge output: 5.0 MB", 6),
    ("not_a_notebook.ipynb", "not a Jupyter notebook", 0),
    ("report.pdf", "not a Jupyter notebook", 0),
    ("empty.ipynb", "empty file", 0),
])
def test_bad_submission_gets_a_row_with_a_clear_error(hostile_grades, file, expected_error, expected_total):
    rows, _, _ = hostile_grades
    assert expected_error in rows[file]["error"]
    assert int(rows[file]["total"]) == expected_total


def test_every_file_gets_a_row_within_the_time_limit(hostile_grades):
    rows, returned, _ = hostile_grades
    assert len(rows) == len(returned) == 11
    assert max(g.seconds for g in returned) < 3 * TIME_LIMIT  # loops are cut at TIME_LIMIT; start-up and tests are short


@pytest.mark.parametrize("name", [n for n in ASSIGNMENTS if n != "alpha_residual"])
def test_other_assignments_grade_solution_full_and_handout_zero(name, handout, tmp_path):
    (tmp_path / "solution.ipynb").write_text(nbformat.writes(load_assignment(name).notebook))
    (tmp_path / "untouched.ipynb").write_text((handout / f"{name}.ipynb").read_text())
    grade_folder(load_assignment(name), tmp_path, tmp_path / "grades.csv", time_limit=60)
    rows = _read_rows(tmp_path / "grades.csv")
    assert (int(rows["solution.ipynb"]["total"]), rows["solution.ipynb"]["error"]) == (_full_marks(name), "")
    assert int(rows["untouched.ipynb"]["total"]) == 0


def test_check_command_runs_public_checks_only(handout, capsys):
    assert main(["check", str(handout / "alpha_residual.ipynb"), "--time-limit", "30"]) == 1
    printed = capsys.readouterr().out
    assert "q1: FAILED - alpha should be a number, got Ellipsis" in printed
    assert printed.count("FAILED") == 3  # one public case per question; hidden cases are not in the handout
