"""Grading throughput: submissions per minute at --jobs 1 and --jobs 2, and their ratio.

``python benchmarks/bench_grading.py [--count 100]`` writes COUNT generated submissions of
``alpha_residual`` (two in five correct, two in five partly correct, one in five hostile: a numpy
patch, a fake score, a 20 GB allocation against the 2 GB limit, a file that is not a notebook), grades
the folder once at each --jobs, and prints the rates measured in this one run. Each submission costs a
sandboxed kernel (its tests run in the worker, which starts once per --jobs slot), so the ratio says
how well two workers use the machine's cores. The machine may be shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from specdec_course.coursework.authoring import load_assignment
from specdec_course.coursework.batch import grade_folder
from specdec_course.coursework.student import student_notebook
from specdec_course.coursework.submission import Limits

HOSTILE = [
    "import numpy\nnumpy.allclose = lambda *args, **kwargs: True",
    'print("alpha_residual: 6/6 points")',
    "blocks = [np.ones(10**8) for _ in range(25)]  # 20 GB, 800 MB at a time",
]


def submissions(count: int) -> dict[str, str]:
    """COUNT notebooks by file name: correct, partly correct and hostile, in a fixed mix."""
    assignment = load_assignment("alpha_residual")
    correct = nbformat.writes(assignment.notebook)
    partly = student_notebook(assignment)
    for cell in partly.cells:
        cell.source = cell.source.replace(
            "alpha = ...  # YOUR CODE HERE", "alpha = float(np.minimum(p, q).sum())"
        )
    files = {}
    for i in range(count):
        kind = ("correct", "correct", "partly", "partly", "hostile")[i % 5]
        if kind == "hostile":
            attack = i // 5 % (len(HOSTILE) + 1)
            if attack == len(HOSTILE):
                files[f"{i:03d}_not_a_notebook.ipynb"] = "an essay"
                continue
            notebook = nbformat.reads(correct if attack == 2 else nbformat.writes(partly), as_version=4)
            notebook.cells.insert(2, nbformat.v4.new_code_cell(HOSTILE[attack]))
            files[f"{i:03d}_hostile.ipynb"] = nbformat.writes(notebook)
        else:
            files[f"{i:03d}_{kind}.ipynb"] = correct if kind == "correct" else nbformat.writes(partly)
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    args = parser.parse_args(argv)
    assignment = load_assignment("alpha_residual")
    rates = {}
    with tempfile.TemporaryDirectory() as scratch, open(os.devnull, "w") as devnull:
        folder = Path(scratch) / "submissions"
        folder.mkdir()
        for name, text in submissions(args.count).items():
            (folder / name).write_text(text)
        for jobs in (1, 2):
            out = Path(scratch) / f"grades-{jobs}.csv"
            start = time.perf_counter()
            rows = grade_folder(assignment, folder, out, Limits(time=30), jobs=jobs, log=devnull)
            minutes = (time.perf_counter() - start) / 60
            rates[jobs] = len(rows) / minutes
            full = sum(r.total == sum(assignment.points.values()) for r in rows)
            print(
                f"--jobs {jobs}: {len(rows)} submissions in {minutes * 60:.1f} s = {rates[jobs]:.1f} per minute "
                f"({full} with full marks)",
                flush=True,
            )
    print(
        f"ratio --jobs 2 / --jobs 1: {rates[2] / rates[1]:.2f} (machine: {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
