"""Coursework: the student edition hides solutions, self-checks explain, batch grading survives anything.

Grading starts one sandboxed kernel per submission (a few seconds each here); the hostile set,
tamperers and a memory hog included, is graded in one batch at --jobs 2 with a short time limit,
so the endless loops cost TIME_LIMIT seconds once. The red team's attacks on the grader itself
(other rows, the terminal, the network, submitted functions) are in test_grading_attacks.py.
"""

import csv
import os
import signal
import subprocess
import sys
import time

import nbformat
import numpy as np
import pytest

from specdec_course.coursework import Grader
from specdec_course.coursework.__main__ import main
from specdec_course.coursework.authoring import assignments, load_assignment
from specdec_course.coursework.batch import grade_folder
from specdec_course.coursework.kernel import GB
from specdec_course.coursework.leaks import secret_lines, words
from specdec_course.coursework.sandbox import landlock_abi
from specdec_course.coursework.selfcheck import GRADING_ENV, run_case
from specdec_course.coursework.student import student_notebook, write_student_edition
from specdec_course.coursework.submission import Limits
from specdec_lib.broken_verifiers import BROKEN_VERIFIERS

TIME_LIMIT = 20  # seconds per submission's cells in these tests
LIMITS = Limits(time=TIME_LIMIT, memory=int(2 * GB))
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
    secret = secret_lines(load_assignment(name))
    assert len(secret) >= 3, "the source should have distinctive solution lines to look for"
    handed_out = (handout / f"{name}.ipynb").read_text() + (handout / "tests" / f"{name}.py").read_text()
    leaked = [line for line in secret if words(line) in words(handed_out)]
    assert not leaked, f"{name}: student edition shows {leaked}"
    assert "YOUR CODE HERE" in handed_out
    assert "HIDDEN TEST" not in handed_out


def test_solution_search_finds_a_leak_negative_control():
    assignment = load_assignment(ASSIGNMENTS[0])
    leaky = words(nbformat.writes(assignment.notebook))  # the source itself, as if handed out by mistake
    assert all(words(line) in leaky for line in secret_lines(assignment))


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
    answers = {
        "p": np.array([0.5, 0.2, 0.2, 0.1]),
        "q": np.array([0.25, 0.25, 0.4, 0.1]),
        "GAMMA": 3,
        "alpha": 1.4,
        "residual": np.array([0.5, 0.5, 0, 0]),
        "expected_K": ...,
    }
    assert "lies in [0, 1]; got 1.4" in repr(grader.check("q1", answers))
    assert "must get residual 0" in repr(grader.check("q2", answers))
    assert "should be a number, got Ellipsis" in repr(grader.check("q3", answers))
    answers.update(alpha=0.7, residual=np.array([1.0, 0, 0, 0]), expected_K=2.533)
    assert all(
        grader.check(q, answers).passed for q in ("q1", "q2", "q3")
    )  # public checks only: 2.533 is wrong
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


def test_answers_cross_to_the_grader_as_plain_data_and_impostors_do_not(tmp_path):
    from specdec_course.coursework.transfer import export, load_data, read_answers

    class AlwaysEqual(float):
        def __eq__(self, other):
            return True

    answers = {
        "x": np.arange(6.0).reshape(2, 3).T,
        "k": np.int64(3),
        "c": [1, (2.5, None, ...)],
        "d": {1: "a"},
        "nan": float("nan"),
        "np": np,
        "fake": AlwaysEqual(0.1),
        "os": os,
    }
    export(answers, list(answers), tmp_path / "answers.json")
    got = {}
    values, problems = read_answers((tmp_path / "answers.json").read_text())
    load_data(values, got, problems)
    assert np.array_equal(got["x"], answers["x"]) and type(got["k"]) is np.int64 and got["k"] == 3
    assert (got["c"], got["d"], got["np"]) == ([1, (2.5, None, ...)], {1: "a"}, np) and got["nan"] != got[
        "nan"
    ]
    assert sorted(problems) == ["fake", "os"] and "AlwaysEqual" in problems["fake"]  # neither crosses
    assert "fake" not in got and "os" not in got


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


# Tamperers: alpha is right (q1: 2 points), the residual is uniform (wrong: 0), expected_K = 2.5 is a
# number in range but wrong (q3: its public point only), so their real answers deserve 3 of 6.
# Each adds one attack after its answers; graded in the submission's own kernel, each attack
# would have earned more (in brackets).
TAMPERING = {
    "patches_numpy.ipynb": """\
import numpy
numpy.allclose = lambda *args, **kwargs: True""",  # [4]
    "patches_specdec_lib.ipynb": """\
import specdec_lib
specdec_lib.expected_output_count = lambda alpha, gamma: expected_K
specdec_lib.acceptance_rate = lambda p, q: alpha""",  # [4]
    "patches_builtins.ipynb": """\
import builtins
builtins.abs = lambda x: 0""",  # [4]
    "patches_grader.ipynb": """\
import specdec_course.coursework.submission as submission, specdec_course.coursework.selfcheck as selfcheck
selfcheck.run_case = lambda *args, **kwargs: None
submission.run_tests = lambda answers, cases, *args, **kwargs: ([None] * len(cases), {})""",  # [6]
    "fake_score.ipynb": """\
import glob
print("alpha_residual: 6/6 points, every test passed")
for path in glob.glob("/tmp/**/grades.csv", recursive=True) + glob.glob("/work/**/grades.csv", recursive=True):
    try:
        with open(path, "a") as handle:
            handle.write("fake_score.ipynb,2,2,2,6,0.0,,FORGED\\n")
    except OSError:
        pass""",
    "reads_hidden_tests.ipynb": """\
import json
from specdec_course.coursework.authoring import COURSEWORK_DIR
try:  # run the instructor's notebook, solutions and all
    source = json.loads((COURSEWORK_DIR / "alpha_residual.ipynb").read_text())
    for cell in source["cells"]:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]))
except OSError as exc:
    print(exc)""",  # [6]
}
MEMORY_HOG = "blocks = [np.ones(10**8) for _ in range(25)]  # 20 GB, 800 MB at a time"


def _tamperer(handout_text, attack):
    nb = nbformat.reads(handout_text, as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace(
            "alpha = ...  # YOUR CODE HERE", "alpha = float(np.minimum(p, q).sum())"
        )
        cell.source = cell.source.replace(
            "...  # YOUR CODE HERE\nresidual", "residual = np.full(4, 0.25)\nresidual"
        )
        cell.source = cell.source.replace("expected_K = ...  # YOUR CODE HERE", "expected_K = 2.5")
    nb.cells.append(nbformat.v4.new_code_cell(attack))
    return nbformat.writes(nb)


@pytest.fixture(scope="module")
def hostile_grades(tmp_path_factory, handout):
    """Grade one batch: the solution, the untouched handout, tamperers, a memory hog and every other kind of bad file."""
    folder = tmp_path_factory.mktemp("submissions")
    source = load_assignment("alpha_residual").notebook
    handout_text = (handout / "alpha_residual.ipynb").read_text()
    files = {
        "solution.ipynb": nbformat.writes(source),
        "untouched.ipynb": handout_text,
        "syntax_error.ipynb": _variant(source, insert=("# SOLUTION", "alpha = = 1")),
        "endless_loop.ipynb": _variant(source, insert=("# SOLUTION", "while True:\n    pass")),
        "stubborn_loop.ipynb": _variant(source, insert=("# SOLUTION", STUBBORN_LOOP)),
        "deleted_cells.ipynb": _variant(source, delete="# BEGIN SOLUTION"),
        "reordered_cells.ipynb": _variant(source, move_first_to_end=True),
        "huge_output.ipynb": _variant(source, insert=("# SOLUTION", "print('x' * 5_000_000)")),
        "memory_hog.ipynb": _variant(source, insert=("GAMMA = 3", MEMORY_HOG)),
        "not_a_notebook.ipynb": "this is an essay, not a notebook",
        "report.pdf": "%PDF-1.4 binary\x00\x01",
        "empty.ipynb": "",
        **{name: _tamperer(handout_text, attack) for name, attack in TAMPERING.items()},
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    out = folder / "grades.csv"
    start = time.perf_counter()
    returned = grade_folder(load_assignment("alpha_residual"), folder, out, LIMITS, jobs=2)
    elapsed = time.perf_counter() - start
    print(f"hostile set: {len(files)} files graded in {elapsed:.1f} s at --jobs 2\n{out.read_text()}")
    return _read_rows(out), returned, out.read_text()


def test_solution_grades_full_and_untouched_handout_grades_zero(hostile_grades):
    rows, _, _ = hostile_grades
    assert int(rows["solution.ipynb"]["total"]) == _full_marks("alpha_residual")
    assert rows["solution.ipynb"]["error"] == ""
    assert int(rows["untouched.ipynb"]["total"]) == 0


@pytest.mark.parametrize(
    ("file", "expected_error", "expected_total"),
    [
        ("syntax_error.ipynb", "raised SyntaxError", 6),  # the bad cell is extra; every answer still runs
        ("endless_loop.ipynb", "time limit: still running after 20 s", 2),  # q1 answered before the loop
        ("stubborn_loop.ipynb", "the tests could not run", 0),  # the kernel ignored the interrupt
        ("deleted_cells.ipynb", "1 handed-out cell(s) deleted", 4),  # q2's answer cell is gone
        ("reordered_cells.ipynb", "cells reordered", 0),  # the data cell now runs last
        ("huge_output.ipynb", "huge output: 5.0 MB", 6),
        (
            "memory_hog.ipynb",
            "memory limit exceeded (2 GB): code cell 2",
            6,
        ),  # the hog fails, the answers run
        ("not_a_notebook.ipynb", "not a Jupyter notebook", 0),
        ("report.pdf", "not a Jupyter notebook", 0),
        ("empty.ipynb", "empty file", 0),
    ],
)
def test_bad_submission_gets_a_row_with_a_clear_error(hostile_grades, file, expected_error, expected_total):
    rows, _, _ = hostile_grades
    assert expected_error in rows[file]["error"]
    assert int(rows[file]["total"]) == expected_total


@pytest.mark.parametrize("file", sorted(TAMPERING))
def test_tampering_earns_only_what_the_real_answers_deserve(hostile_grades, file):
    if file == "reads_hidden_tests.ipynb" and not landlock_abi():
        pytest.skip("this kernel offers no Landlock, so a submission can read coursework/ (the grader warns)")
    rows, _, _ = hostile_grades
    assert (rows[file]["q1"], rows[file]["q2"], rows[file]["q3"], rows[file]["total"]) == ("2", "0", "1", "3")


def test_tamperers_cannot_write_into_the_grades(hostile_grades):
    rows, _, text = hostile_grades
    assert "FORGED" not in text and len(text.strip().split("\n")) == len(rows) + 1


def test_tamperer_negative_control_its_attack_works_where_it_runs(handout, tmp_path):
    """Run in one plain kernel, as grading once did, the numpy patch passes the hidden residual check."""
    from nbclient import NotebookClient

    hidden_q2 = next(c for c in load_assignment("alpha_residual").cases if c.hidden and c.question == "q2")
    nb = nbformat.reads(
        _tamperer((handout / "alpha_residual.ipynb").read_text(), TAMPERING["patches_numpy.ipynb"]),
        as_version=4,
    )
    nb.cells = [c for c in nb.cells if c.cell_type == "code" and "grader" not in c.source]
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "from specdec_course.coursework.selfcheck import run_case\n"
            f"print(run_case({hidden_q2.code!r}, globals()))"
        )
    )
    NotebookClient(
        nb, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    assert nb.cells[-1].outputs[0]["text"].strip() == "None"  # passed: the residual was never computed


def test_every_file_gets_a_row_within_the_time_limit(hostile_grades):
    rows, returned, _ = hostile_grades
    assert len(rows) == len(returned) == 18
    assert (
        max(g.seconds for g in returned) < 3 * TIME_LIMIT + 30
    )  # loops are cut at TIME_LIMIT; start-up and tests are short


def test_interrupted_grading_keeps_finished_rows_and_resumes(handout, tmp_path):
    """Ctrl-C (SIGINT) after the first row; the rerun grades only the other files."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "a_solution.ipynb").write_text(nbformat.writes(load_assignment("alpha_residual").notebook))
    (folder / "b_untouched.ipynb").write_text((handout / "alpha_residual.ipynb").read_text())
    (folder / "c_empty.ipynb").write_text("")
    out = tmp_path / "grades.csv"
    command = [
        sys.executable,
        "-m",
        "specdec_course.coursework",
        "grade",
        "alpha_residual",
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--time-limit",
        str(TIME_LIMIT),
    ]
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(_read_rows(out) if out.exists() else {}) < 1:
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)
    _, log = first.communicate(timeout=60)
    assert first.returncode == 130, log
    kept = _read_rows(out)
    assert list(kept) == ["a_solution.ipynb"] and "interrupted" in log
    second = subprocess.run(command, stderr=subprocess.PIPE, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "1 of 3 already graded" in second.stderr and "a_solution.ipynb" not in second.stderr
    rows = _read_rows(out)
    assert list(rows) == [
        "a_solution.ipynb",
        "b_untouched.ipynb",
        "c_empty.ipynb",
    ]  # file order, not finishing order
    assert rows["a_solution.ipynb"] == kept["a_solution.ipynb"]  # the same row, seconds and all: not regraded
    assert [rows[f]["total"] for f in rows] == [str(_full_marks("alpha_residual")), "0", "0"]


@pytest.mark.parametrize("name", [n for n in ASSIGNMENTS if n not in ("alpha_residual", "implement_verify")])
def test_other_assignments_grade_solution_full_and_handout_zero(name, handout, tmp_path):
    (tmp_path / "solution.ipynb").write_text(nbformat.writes(load_assignment(name).notebook))
    (tmp_path / "untouched.ipynb").write_text((handout / f"{name}.ipynb").read_text())
    grade_folder(load_assignment(name), tmp_path, tmp_path / "grades.csv", Limits(time=60), jobs=2)
    rows = _read_rows(tmp_path / "grades.csv")
    assert (int(rows["solution.ipynb"]["total"]), rows["solution.ipynb"]["error"]) == (_full_marks(name), "")
    assert int(rows["untouched.ipynb"]["total"]) == 0


def test_check_command_runs_public_checks_only(handout, capsys):
    assert main(["check", str(handout / "alpha_residual.ipynb"), "--time-limit", "30"]) == 1
    printed = capsys.readouterr().out
    assert "q1: FAILED - alpha should be a number, got Ellipsis" in printed
    assert printed.count("FAILED") == 3  # one public case per question; hidden cases are not in the handout
