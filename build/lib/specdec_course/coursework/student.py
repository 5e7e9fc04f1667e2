"""The student edition of an assignment: placeholders instead of solutions, public checks only.

For each source notebook it writes ``OUT/NAME.ipynb`` and ``OUT/tests/NAME.py`` (the public
test cases, readable), or the same two files as one ``OUT/NAME.zip`` handout (what the site
offers for download). Hidden test cases appear in neither. In the notebook, each question's
public test cells become one ``grader.check("q1")`` cell, and a first code cell creates the
``grader``. Kept cells keep their cell ids, so grading can tell deleted or moved cells apart.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import nbformat

from .authoring import Assignment, assignments, is_test_cell, parse_test_cases, without_solutions

SETUP_CELL_ID = "grader-setup"


def public_tests_text(assignment: Assignment) -> str:
    """The public test cases, in the same header format as the source's test cells."""
    intro = (
        f'"""Public checks for {assignment.name}: run them with grader.check("q1") in the notebook.\n\n'
        'Grading also runs hidden checks that are not in this file."""\n\n'
    )
    return intro + "\n\n".join(case.code.rstrip() for case in assignment.cases if not case.hidden) + "\n"


def student_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    """The source notebook with solutions replaced, hidden tests removed, outputs cleared."""
    cells = []
    checked = set()
    for cell in assignment.notebook.cells:
        if is_test_cell(cell):
            for case in parse_test_cases(cell.source):
                if not case.hidden and case.question not in checked:
                    checked.add(case.question)
                    cells.append(
                        nbformat.v4.new_code_cell(
                            f'grader.check("{case.question}")', id=f"check-{case.question}"
                        )
                    )
            continue
        new = nbformat.from_dict(dict(cell))
        if cell.cell_type in ("code", "markdown"):
            new.source = without_solutions(cell.source, cell.cell_type)
        if cell.cell_type == "code":
            new.outputs, new.execution_count = [], None
        cells.append(new)
    setup = nbformat.v4.new_code_cell(
        f'from specdec_course.coursework import Grader\n\ngrader = Grader("{assignment.name}")  # reads tests/{assignment.name}.py',
        id=SETUP_CELL_ID,
    )
    cells.insert(1 if cells and cells[0].cell_type == "markdown" else 0, setup)
    return nbformat.v4.new_notebook(cells=cells, metadata=assignment.notebook.metadata)


def write_student_edition(out_dir, names=None) -> list[Path]:
    """Write the student notebooks and their public tests under ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    (out_dir / "tests").mkdir(parents=True, exist_ok=True)
    written = []
    for assignment in assignments():
        if names and assignment.name not in names:
            continue
        notebook_path = out_dir / f"{assignment.name}.ipynb"
        tests_path = out_dir / "tests" / f"{assignment.name}.py"
        nbformat.write(student_notebook(assignment), notebook_path)
        tests_path.write_text(public_tests_text(assignment))
        written += [notebook_path, tests_path]
    return written


def write_handout_zips(out_dir) -> list[Path]:
    """Replace ``out_dir`` by one ``NAME.zip`` per assignment (notebook and tests/NAME.py), byte-reproducible."""
    out_dir = Path(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    written = []
    for assignment in assignments():
        members = {
            f"{assignment.name}.ipynb": nbformat.writes(student_notebook(assignment)) + "\n",
            f"tests/{assignment.name}.py": public_tests_text(assignment),
        }
        path = out_dir / f"{assignment.name}.zip"
        with zipfile.ZipFile(path, "w") as bundle:
            for name, text in members.items():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # no build time inside
                info.external_attr = 0o644 << 16
                bundle.writestr(info, text, compress_type=zipfile.ZIP_DEFLATED)
        written.append(path)
    return written
