"""Command line for instructors: ``python -m specdec_course.coursework {student,check,grade,scan,site-config}``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .authoring import load_assignment, parse_test_cases
from .batch import grade_folder
from .kernel import GB
from .submission import Limits, SubmissionError, execute_and_test, read_submission

DEFAULT_STUDENT_DIR = "_build/handout"


def _student(args) -> int:
    from .student import write_student_edition

    for path in write_student_edition(args.out, args.names):
        print(path)
    return 0


def _check(args) -> int:
    notebook = Path(args.notebook)
    tests = Path(args.tests or notebook.parent / "tests" / f"{notebook.stem}.py")
    cases = parse_test_cases(tests.read_text())
    feedback, problems = execute_and_test(read_submission(notebook), cases, Limits(time=args.time_limit))
    for problem in problems:
        print(f"! {problem}")
    for case, result in zip(cases, feedback):
        print(f"{case.question}: " + ("passed" if result is None else f"FAILED - {result}"))
    return 0 if all(result is None for result in feedback) and not problems else 1


def _grade(args) -> int:
    limits = Limits(time=args.time_limit, memory=int(args.memory_limit * GB))
    try:
        grade_folder(load_assignment(args.assignment), args.submissions, args.out, limits, args.jobs)
    except KeyboardInterrupt:
        return 130
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _scan(args) -> int:
    from .authoring import assignments
    from .leaks import find_leaks, secret_lines

    secrets = set().union(*(secret_lines(a) for a in assignments()))
    leaks, files = find_leaks(args.folder, secrets)
    for leak in leaks:
        print(f"{leak.file}: {leak.line}")
    print(f"{files} files read, {len(secrets)} secret lines looked for, {len(leaks)} found", file=sys.stderr)
    return 1 if leaks else 0


def _site_config(args) -> int:
    from .student_site import student_site_config

    print(student_site_config(args.config), end="")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_course.coursework", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    student = commands.add_parser("student", help="write the student notebooks and their public checks")
    student.add_argument("names", nargs="*", help="assignments (file stems under coursework/); default: all")
    student.add_argument("--out", default=DEFAULT_STUDENT_DIR, help=f"folder (default {DEFAULT_STUDENT_DIR})")
    student.set_defaults(run=_student)
    check = commands.add_parser("check", help="run a student notebook and its public checks only")
    check.add_argument("notebook")
    check.add_argument("--tests", help="public checks file (default: tests/STEM.py next to the notebook)")
    check.add_argument("--time-limit", type=float, default=60, help="seconds for the notebook's cells")
    check.set_defaults(run=_check)
    grade = commands.add_parser("grade", help="grade every file in a folder with public and hidden tests")
    grade.add_argument("assignment", help="file stem of the source notebook under coursework/")
    grade.add_argument("submissions", help="folder of submitted files")
    grade.add_argument("--out", default="grades.csv", help="CSV file to write (default grades.csv)")
    grade.add_argument(
        "--time-limit", type=float, default=60, help="seconds per submission's cells (default 60)"
    )
    grade.add_argument(
        "--memory-limit",
        type=float,
        default=Limits.memory / GB,
        help=f"GB of memory per submission's kernel (default {Limits.memory / GB:g})",
    )
    grade.add_argument("--jobs", type=int, help="submissions graded at once (default: the machine's cores)")
    grade.set_defaults(run=_grade)
    scan = commands.add_parser(
        "scan", help="list every solution or hidden-test line found in a folder (a built site)"
    )
    scan.add_argument("folder")
    scan.set_defaults(run=_scan)
    site = commands.add_parser("site-config", help="print the book's _config.yml for the student site")
    site.add_argument("--config", default="_config.yml")
    site.set_defaults(run=_site_config)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError, SubmissionError) as exc:  # a wrong name or path: say so, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
