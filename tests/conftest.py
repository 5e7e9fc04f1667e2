"""Shared test data (the lesson's toy distributions), the built site, and the test tiers.

Tiers are pytest markers (registered in ``pyproject.toml``): a test that uses ``built_site`` is
``build``; the modules in ``MODULE_TIERS`` carry their tier; ``slow`` is marked where a test is.
``make check`` runs the tests with none of them, ``make test`` runs every tier.
"""

import os
from fractions import Fraction as F
from pathlib import Path

import pytest

TOY_P = [0.6, 0.3, 0.1]
TOY_Q = [0.2, 0.3, 0.5]
TOY_P_EXACT = [F(3, 5), F(3, 10), F(1, 10)]
TOY_Q_EXACT = [F(1, 5), F(3, 10), F(1, 2)]


ROOT = Path(__file__).resolve().parent.parent
MODULE_TIERS = {
    "test_site_browser.py": "browser",
    "test_jupyterlab.py": "browser",
    "test_coursework.py": "grading",
    "test_measure.py": "slow",  # times and decodes with the text models
    "test_variants.py": "slow",  # exactness checks of every variant: thousands of rounds each
}
PAGE_PARAMETERS = {  # argument -> which pages of the built site it ranges over
    "site_page": lambda page: True,
    "content_page": lambda page: page != "index.html",  # index.html only redirects to the first chapter
    "chapter_page": lambda page: page.startswith("book/"),
}


def site_folder() -> Path:
    return Path(os.environ.get("SPECDEC_HTML", ROOT / "_build" / "html"))


def site_pages(html: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to the site (assets excluded)."""
    return sorted(
        page.relative_to(html).as_posix()
        for page in html.rglob("*.html")
        if page.relative_to(html).parts[0] not in ("_static", "_sources", "_images")
    )


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The built HTML site (``_build/html``, or ``$SPECDEC_HTML``); skips with the command to build it."""
    html = site_folder()
    if not (html / "index.html").is_file():
        pytest.skip(f"no built site at {html}: run `make book`")
    return html


def pytest_generate_tests(metafunc):
    """An argument of ``PAGE_PARAMETERS`` runs the test once per such page of the built site. Without
    a site the test runs once, on a placeholder, and ``built_site`` skips it."""
    for argument, wanted in PAGE_PARAMETERS.items():
        if argument in metafunc.fixturenames:
            assert "built_site" in metafunc.fixturenames, f"{metafunc.function.__name__} needs built_site"
            html = site_folder()
            pages = site_pages(html) if (html / "index.html").is_file() else []
            metafunc.parametrize(argument, [page for page in pages if wanted(page)] or ["(no built site)"])


def pytest_collection_modifyitems(items):
    for item in items:
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.build)
        if tier := MODULE_TIERS.get(item.path.name):
            item.add_marker(getattr(pytest.mark, tier))
