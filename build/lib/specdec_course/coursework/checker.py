"""The checker: a fresh process that runs the test cases against a submission's transferred answers.

The grader starts ``python -m specdec_course.coursework.checker`` in the sandbox and writes one JSON
object to its stdin: a nonce, the answers exported from the submission's kernel, the trusted code
of the assignment's given cells (run after the answers arrive, so the given data is the
instructor's), the test cases and the time limit. This process imports numpy, ``specdec_lib`` and
the tests' code itself. A submitted function still runs here when a test calls it, so before and
after each case the checker compares every attribute of the trusted modules (and ``builtins``,
``sys.modules``) with how they were: a case during which the submission's code replaced one
earns nothing, and the cases after it are not run. The answer, one line prefixed by the nonce, goes
to a copy of stdout; the submission's own prints go nowhere.
"""

from __future__ import annotations

import builtins
import json
import os
import sys

from .selfcheck import run_case
from .transfer import TRUSTED_PACKAGES, load

_WATCHED = TRUSTED_PACKAGES | {"builtins", "specdec_course"}


def snapshot() -> dict[tuple[str, str], int]:
    """The identity of every attribute of the watched modules and of the classes they define."""
    state = {("sys.modules", name): id(module) for name, module in list(sys.modules.items())}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in _WATCHED or module is None:
            continue
        for attr, value in list(vars(module).items()):
            state[(name, attr)] = id(value)
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                state.update(((f"{name}.{attr}", key), id(item)) for key, item in list(vars(value).items()))
    return state


def changed(before: dict, after: dict) -> list[str]:
    """The watched names whose value is no longer the one they had (names added since are fine)."""
    return sorted(
        f"{owner}.{attr}"
        for (owner, attr), ident in before.items()
        if after.get((owner, attr), ident) != ident
    )


def check(request: dict) -> dict:
    """Feedback per case (None: passed) and the answers that could not be transferred."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    problems = load(request["answers"], namespace)
    for code in request["given"]:
        exec(compile(code, "<given>", "exec"), namespace)
    feedback = []
    before = snapshot()
    for case in request["cases"]:
        result = run_case(case["code"], namespace, request["time_limit"])
        after = snapshot()
        tampered = changed(before, after)
        if tampered:
            feedback.append(
                f"your code replaced {', '.join(tampered[:3])} while it was being checked: no credit"
            )
            feedback += ["not run: an earlier check found trusted code replaced"] * (
                len(request["cases"]) - len(feedback)
            )
            break
        feedback.append(result)
        before = after
    return {"feedback": feedback, "problems": problems}


def main() -> None:
    request = json.loads(sys.stdin.read())
    answer = os.fdopen(os.dup(1), "w")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    answer.write(request["nonce"] + json.dumps(check(request)) + "\n")
    answer.flush()
    os._exit(0)  # no atexit hook the submission registered runs


if __name__ == "__main__":
    main()
