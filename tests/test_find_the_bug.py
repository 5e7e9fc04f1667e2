"""Assignment 4, "Find the bug": its solution earns full marks, a wrong answer nothing, and its puzzle is fair."""

import csv

import nbformat
import pytest

from specdec_course.coursework.authoring import load_assignment
from specdec_course.coursework.batch import grade_folder
from specdec_course.coursework.submission import Limits
from specdec_lib import check_verifier
from specdec_lib.broken_samplers import BROKEN_SAMPLERS, mystery_samplers

WRONG_ANSWERS = """
passed = {"A": False, "B": True, "C": True}
first_problem = {"A": "", "B": "", "C": ""}
bugs = {"A": "first_draft_unchecked", "B": "residual_on_wrong_support", "C": "no_bonus"}
targeted_letter, targeted_pvalue, control_pvalue = "B", 0.5, 1e-9
probed_letter, kept_forbidden = "C", 0.0
"""


@pytest.mark.grading
@pytest.mark.slow
def test_solution_earns_full_marks_and_a_wrong_answer_zero(tmp_path):
    assignment = load_assignment("find_the_bug")
    wrong = nbformat.from_dict(nbformat.reads(nbformat.writes(assignment.notebook), as_version=4))
    wrong.cells.append(nbformat.v4.new_code_cell(WRONG_ANSWERS))  # every answer overwritten, wrongly
    (tmp_path / "solution.ipynb").write_text(nbformat.writes(assignment.notebook))
    (tmp_path / "wrong.ipynb").write_text(nbformat.writes(wrong))
    grade_folder(assignment, tmp_path, tmp_path / "grades.csv", Limits(time=120), jobs=2)
    with open(tmp_path / "grades.csv", newline="") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle)}
    full = sum(assignment.points.values())
    assert (int(rows["solution.ipynb"]["total"]), rows["solution.ipynb"]["error"]) == (full, "")
    assert int(rows["wrong.ipynb"]["total"]) == 0, rows["wrong.ipynb"]


def test_the_three_mysteries_are_different_slips_that_the_checks_tell_apart():
    mystery = mystery_samplers(seed=30)
    verdicts = {letter: check_verifier(sampler).passed for letter, sampler in mystery.items()}
    assert verdicts == {"A": True, "B": False, "C": False}  # A is the checker's blind spot (q3)
    hidden = {letter: sampler.__closure__[0].cell_contents for letter, sampler in mystery.items()}
    assert [hidden[k] for k in "ABC"] == [
        BROKEN_SAMPLERS[name][0]
        for name in ("residual_on_wrong_support", "bonus_from_wrong_row", "first_draft_unchecked")
    ]
