"""Answer keys on a public build: find the assignments' solution and hidden-test lines in a folder.

``python -m specdec_course.coursework scan _build/html`` reads every file under the folder, zip
members included, and lists each secret line it finds (exit status 1 when there is one). A secret
line is a line of a solution block, a one-line answer or a hidden test case that the source
notebook shows nowhere else (not in its public tests, not outside its solutions), and that is
distinctive enough to search for: three or more words and not an import. Matching compares words
only, so a line is found however a page shows it: highlighted HTML with entities, JSON-escaped in a
notebook, or rendered markdown.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import zipfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from .authoring import Assignment, is_test_cell, solution_lines, without_solutions

_ONE_LINE_MARKER = re.compile(r"\s*# SOLUTION\s*$")
_TAG = re.compile(r"<[^>]*>")
_NON_WORD = re.compile(r"\W+")
MIN_WORDS = 3


def words(text: str) -> str:
    """The text as its words, single-spaced and padded, for matching that ignores markup and escapes.

    >>> words('assert r.shape == (4,), f"got {r.shape}"')
    ' assert r shape 4 f got r shape '
    """
    return " " + _NON_WORD.sub(" ", text).strip() + " "


def _distinctive(line: str) -> bool:
    return len(words(line).split()) >= MIN_WORDS and not re.match(r"(import|from)\s", line)


def secret_lines(assignment: Assignment) -> set[str]:
    """Solution lines and hidden-test lines of one assignment that no student may see (stripped)."""
    public, secret = set(), set()
    for cell in assignment.notebook.cells:
        if cell.cell_type in ("code", "markdown") and not is_test_cell(cell):
            public |= {line.strip() for line in without_solutions(cell.source, cell.cell_type).split("\n")}
            secret |= {_ONE_LINE_MARKER.sub("", line) for line in solution_lines(cell.source, cell.cell_type)}
    for case in assignment.cases:
        body = {line.strip() for line in case.code.split("\n")[1:]}  # the header line says only "hidden"
        if case.hidden:
            secret |= body
        else:
            public |= body
    return {line for line in secret - public if _distinctive(line)}


def _texts(name: str, data: bytes):
    """Every way a file can show a line: its text, HTML without tags and entities, decoded JSON, zip members."""
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(BytesIO(data)) as bundle:
                for member in bundle.namelist():
                    yield from _texts(f"{name}!{member}", bundle.read(member))
            return
        except zipfile.BadZipFile:
            pass
    text = data.decode("utf-8", errors="replace")
    yield name, text
    if name.endswith((".html", ".htm", ".xml", ".svg")):
        yield name, html.unescape(_TAG.sub("", text))
    if name.endswith((".ipynb", ".json")):
        with contextlib.suppress(ValueError):
            yield name, "\n".join(_strings(json.loads(text)))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@dataclass(frozen=True)
class Leak:
    """A secret line found in a file (``zip!member`` for a file inside a zip)."""

    file: str
    line: str


def find_leaks(folder, secrets) -> tuple[list[Leak], int]:
    """Every secret line found under ``folder``, and how many files were read."""
    folder = Path(folder)
    wanted = {line: words(line) for line in secrets}
    leaks, files = set(), 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        files += 1
        for name, text in _texts(path.relative_to(folder).as_posix(), path.read_bytes()):
            found = words(text)
            leaks |= {Leak(name, line) for line, key in wanted.items() if key in found}
    return sorted(leaks, key=lambda leak: (leak.file, leak.line)), files
