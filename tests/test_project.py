"""The project's own contracts: a documented public API and a build that fails loudly."""

import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import specdec_lib

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", specdec_lib.__all__)
def test_public_name_has_docstring_with_example(name):
    doc = inspect.getdoc(getattr(specdec_lib, name)) or ""
    assert len(doc.splitlines()) >= 2, f"{name} needs a docstring"
    obj = getattr(specdec_lib, name)
    if inspect.isfunction(obj):
        assert ">>>" in doc, f"{name}'s docstring needs a runnable example"


def test_api_reference_lists_every_public_name(built_site):
    """The appendix is generated from the docstrings: one entry (an anchor) per name in ``__all__``."""
    page = (built_site / "book" / "api.html").read_text(encoding="utf-8")
    missing = [name for name in specdec_lib.__all__ if f'id="specdec_lib.{name}"' not in page]
    assert not missing, f"not on the API page: {missing}"


def test_every_page_names_both_licences(built_site, content_page):
    footer = (built_site / content_page).read_text(encoding="utf-8")
    assert "BSD 3-Clause License" in footer and "CC BY 4.0" in footer, f"{content_page}: licences not named"


@pytest.mark.slow
def test_failing_cell_fails_the_build(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    (book / "_toc.yml").write_text("format: jb-book\nroot: broken\n")
    (book / "references.bib").write_text("")
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "1 / 0"}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (book / "broken.ipynb").write_text(json.dumps(notebook))
    config = (book / "_config.yml").read_text().replace("book/references.bib", "references.bib")
    (book / "_config.yml").write_text(
        config.replace("html_static_path: [book/_static]", "html_static_path: []")
    )
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run(
        [str(jb), "build", str(book), "-W", "-n", "--keep-going"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0
    assert "ZeroDivisionError" in result.stdout + result.stderr


def test_specdec_lib_imports_without_the_build_and_grading_stack():
    """The lesson library needs numpy and scipy only: block the tooling's packages and import all of it."""
    blocked = ["sphinx", "docutils", "nbformat", "nbclient", "yaml", "ipywidgets", "matplotlib", "myst_nb"]
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None  # import raises ImportError\n"
        "import specdec_lib\n"
        "for module in pkgutil.iter_modules(specdec_lib.__path__):\n"
        "    importlib.import_module(f'specdec_lib.{module.name}')\n"
        "print(specdec_lib.verify([0], [[0.5, 0.5]] * 2, [[0.5, 0.5]], rng=0).num_accepted)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    broken = subprocess.run(
        [
            sys.executable,
            "-c",
            code.replace("import specdec_lib\n", "import specdec_course.coursework.batch\n", 1),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert broken.returncode != 0, "negative control: the grading package does need nbformat"
