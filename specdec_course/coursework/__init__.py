"""Coursework: assignments with hidden solutions, a student edition, self-checks and batch grading.

``python -m specdec_course.coursework student`` writes the student edition, ``... check NOTEBOOK``
runs a notebook's public checks, ``... grade NAME FOLDER --out grades.csv`` grades a folder
(``batch``: one worker per file; ``submission``: one file, its notebook in a sandboxed ``kernel``,
its functions in a sandboxed ``function_host``, the tests in the worker; ``sandbox``: the limits,
namespaces and Landlock rules; ``transfer``: plain data between them), ``... scan SITE`` looks for
answer keys in a built site (``leaks``). The authoring format is described in ``authoring``; in a
student notebook, ``Grader`` gives the self-checks (``grader.check("q1")``).
"""

from .selfcheck import Grader

__all__ = ["Grader"]
