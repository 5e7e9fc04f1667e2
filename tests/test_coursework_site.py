"""The student site (``make book-student``) leaves out every solution, plain and gated, and instructor notes."""

import subprocess
import sys
from pathlib import Path

import pytest

from specdec_course.coursework.student_site import student_site_config

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
SECRETS = ("GATED_SOLUTION_OUTPUT", "PLAIN_SOLUTION_TEXT", "INSTRUCTOR_NOTE")


def _build(book: Path, *config_args) -> str:
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going", *config_args],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    out = Path(config_args[-1]) if config_args else book
    return (out / "_build" / "html" / "page.html").read_text()


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    book = tmp_path_factory.mktemp("book")
    (book / "page.md").write_text(HEADER + PAGE)
    (book / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (book / "_config.yml").write_text("title: T\nonly_build_toc_files: true\nexclude_patterns: [_build, student]\n"
                                      "execute:\n  execute_notebooks: force\nsphinx:\n  extra_extensions: [sphinx_exercise]\n")
    return book


def test_full_site_shows_solutions_negative_control(book):
    html = _build(book)
    assert all(secret in html for secret in SECRETS)


def test_student_site_omits_solutions_and_instructor_notes(book):
    config = book / "student.yml"
    config.write_text(student_site_config(book / "_config.yml"))
    html = _build(book, "--config", str(config), "--path-output", str(book / "student"))
    assert "EXERCISE_TEXT" in html and "(student edition)" in html
    assert [secret for secret in SECRETS if secret in html] == []
