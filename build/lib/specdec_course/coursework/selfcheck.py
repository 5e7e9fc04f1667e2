"""Running test cases: ``grader.check("q1")`` in the student's kernel, and the grader's checker.

A test case is run in a copy of the student's namespace, so it can read their answers but
not change them. A failing case yields feedback that says what is wrong: the assertion's
message, or a plain explanation of the exception it raised.
"""

from __future__ import annotations

import os
import signal
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .authoring import parse_test_cases

GRADING_ENV = "SPECDEC_COURSEWORK_GRADING"  # set while batch grading: self-checks then do nothing
CASE_TIME_LIMIT = 60  # seconds one test case may run in a self-check


class CaseTimeout(Exception):
    """A test case ran past its time limit."""


@contextmanager
def _time_limit(seconds):
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def interrupt(signum, frame):
        raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_case(code: str, namespace: dict, time_limit: float | None = CASE_TIME_LIMIT) -> str | None:
    """Run one test case against a copy of ``namespace``; None if it passes, else feedback.

    >>> run_case("assert x == 2, f'x should be 2, got {x}'", {"x": 3})
    'x should be 2, got 3'
    >>> run_case("assert x == 2", {})
    "name 'x' is not defined: run the cell that defines it (or restore it if it was deleted)"
    >>> run_case("assert x == 2", {"x": 2}) is None
    True
    """
    try:
        with _time_limit(time_limit):
            exec(compile(code, "<test>", "exec"), dict(namespace))
    except AssertionError as exc:
        return str(exc) or f"this check failed: {_failing_line(exc, code)}"
    except NameError as exc:
        return f"{exc}: run the cell that defines it (or restore it if it was deleted)"
    except CaseTimeout:
        return f"your code ran for more than {time_limit} s during this check (an endless loop?)"
    except (Exception, SystemExit) as exc:  # any crash of the student's code is feedback, not a grader error
        return f"{type(exc).__name__} while checking your answer: {exc}"
    return None


def _failing_line(exc: BaseException, code: str) -> str:
    lines = code.split("\n")
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == "<test>" and 0 < frame.lineno <= len(lines):
            return lines[frame.lineno - 1].strip()
    return "an assertion without a message"


@dataclass(frozen=True)
class CheckResult:
    """What ``grader.check`` shows: per public case, passed or the feedback."""

    question: str
    feedback: tuple[str | None, ...]

    @property
    def passed(self) -> bool:
        return all(f is None for f in self.feedback)

    def __repr__(self) -> str:
        if not self.feedback:
            return f"{self.question}: no public checks"
        if self.passed:
            return f"{self.question}: all {len(self.feedback)} public checks passed"
        failed = [f for f in self.feedback if f is not None]
        lines = [f"{self.question}: {len(failed)} of {len(self.feedback)} public checks failed"]
        return "\n".join(lines + [f"  - {f}" for f in failed])


class Grader:
    """Self-checks for a student notebook: ``grader = Grader("alpha_residual"); grader.check("q1")``.

    Reads the public test cases from ``tests/NAME.py`` next to the notebook (the student
    edition writes it). Hidden test cases exist only in the instructor's source notebook.
    """

    def __init__(self, name: str, tests_dir="tests"):
        self.path = Path(tests_dir) / f"{name}.py"

    def check(self, question: str, namespace: dict | None = None) -> CheckResult:
        """Run the public test cases of ``question`` against the caller's variables."""
        if os.environ.get(GRADING_ENV):
            return CheckResult(question, ())
        if not self.path.is_file():
            raise FileNotFoundError(
                f"{self.path}: the public checks file is missing; keep the tests/ "
                "folder that came with this notebook next to it"
            )
        if namespace is None:
            import inspect

            namespace = inspect.currentframe().f_back.f_globals
        cases = [c for c in parse_test_cases(self.path.read_text()) if c.question == question]
        if not cases:
            raise ValueError(f"question: no public checks for {question!r} in {self.path}")
        return CheckResult(question, tuple(run_case(c.code, namespace) for c in cases))
