"""No answer key on a site: the built book holds no assignment solution or hidden test in any file, and
the student site (``make book-student``) leaves out every exercise solution, plain and gated, and
instructor notes.

The scan reads the built site (the ``built_site`` fixture).
"""

import html
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from specdec_course.coursework.authoring import assignments
from specdec_course.coursework.leaks import find_leaks, secret_lines
from specdec_course.coursework.student_site import student_site_config

SECRETS = {a.name: secret_lines(a) for a in assignments()}


def test_built_site_holds_no_solution_or_hidden_test_line_in_any_file(built_site):
    leaks, files = find_leaks(built_site, set().union(*SECRETS.values()))
    print(
        f"scanned {files} files under {built_site} for {sum(map(len, SECRETS.values()))} secret lines: {len(leaks)} found"
    )
    assert files > 100 and all(len(lines) >= 5 for lines in SECRETS.values())
    assert leaks == [], leaks[:5]


def test_built_site_offers_each_student_handout(built_site):
    zips = {path.stem: path for path in built_site.glob("_downloads/*/*.zip")}
    assert sorted(zips) == sorted(SECRETS)
    for name, path in zips.items():
        with zipfile.ZipFile(path) as bundle:
            assert sorted(bundle.namelist()) == sorted([f"{name}.ipynb", f"tests/{name}.py"])
            assert "YOUR CODE HERE" in bundle.read(f"{name}.ipynb").decode()
    assert not list(built_site.glob("_downloads/*/*.ipynb")), (
        "a notebook download other than the chapters' own"
    )


def test_scan_finds_a_planted_line_in_every_form_negative_control(tmp_path):
    """One solution line and one hidden-test line, planted as a page, a source, a notebook and a zip member."""
    solution, hidden = "residual = positive / positive.sum()", "assert paper_gamma == 6"
    assert solution in SECRETS["alpha_residual"] and hidden in SECRETS["choose_gamma"]
    highlighted = "".join(f'<span class="n">{html.escape(token)}</span> ' for token in solution.split())
    (tmp_path / "page.html").write_text(f"<html><pre>{highlighted}</pre></html>")
    (tmp_path / "_sources").mkdir()
    (tmp_path / "_sources" / "page.ipynb.txt").write_text(f"text\n{hidden}\n")
    (tmp_path / "page.ipynb").write_text(json.dumps({"cells": [{"source": [f"x = 1\n    {solution}\n"]}]}))
    with zipfile.ZipFile(tmp_path / "handout.zip", "w") as bundle:
        bundle.writestr(
            "tests/x.py", nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(hidden)]))
        )
    (tmp_path / "harmless.txt").write_text("residual = positive.sum()  # not a secret line")
    leaks, files = find_leaks(tmp_path, {solution, hidden})
    assert files == 5
    assert sorted((leak.file, leak.line) for leak in leaks) == [
        ("_sources/page.ipynb.txt", hidden),
        ("handout.zip!tests/x.py", hidden),
        ("page.html", solution),
        ("page.ipynb", solution),
    ]


HEADER = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
"""
PAGE = """\
# Page

```{exercise} Sum
:label: ex-page-1
EXERCISE_TEXT
```

```{solution-start} ex-page-1
:class: dropdown
```
```{code-cell} python
print("GATED_" + "SOLUTION_OUTPUT")
```
```{solution-end}
```

```{solution} ex-page-1
:class: dropdown
PLAIN_SOLUTION_TEXT
```

```{container} instructor-only
INSTRUCTOR_NOTE
```
"""
PAGE_SECRETS = ("GATED_SOLUTION_OUTPUT", "PLAIN_SOLUTION_TEXT", "INSTRUCTOR_NOTE")


def _build(book: Path, *config_args) -> str:
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run(
        [str(jb), "build", str(book), "-W", "-n", "--keep-going", *config_args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    out = Path(config_args[-1]) if config_args else book
    return (out / "_build" / "html" / "page.html").read_text()


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    book = tmp_path_factory.mktemp("book")
    (book / "page.md").write_text(HEADER + PAGE)
    (book / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (book / "_config.yml").write_text(
        "title: T\nonly_build_toc_files: true\nexclude_patterns: [_build, student]\n"
        "execute:\n  execute_notebooks: force\nsphinx:\n  extra_extensions: [sphinx_exercise]\n"
    )
    return book


@pytest.mark.slow
def test_full_site_shows_solutions_negative_control(book):
    html = _build(book)
    assert all(secret in html for secret in PAGE_SECRETS)


@pytest.mark.slow
def test_student_site_omits_solutions_and_instructor_notes(book):
    config = book / "student.yml"
    config.write_text(student_site_config(book / "_config.yml"))
    html = _build(book, "--config", str(config), "--path-output", str(book / "student"))
    assert "EXERCISE_TEXT" in html and "(student edition)" in html
    assert [secret for secret in PAGE_SECRETS if secret in html] == []
