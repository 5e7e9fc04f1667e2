"""Shared test data: the lesson's toy distributions, in float and exact form."""

import os
from fractions import Fraction as F
from pathlib import Path

import pytest

TOY_P = [0.6, 0.3, 0.1]
TOY_Q = [0.2, 0.3, 0.5]
TOY_P_EXACT = [F(3, 5), F(3, 10), F(1, 10)]
TOY_Q_EXACT = [F(1, 5), F(3, 10), F(1, 2)]


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The built HTML site (``_build/html``, or ``$SPECDEC_HTML``); skips with the command to build it."""
    html = Path(os.environ.get("SPECDEC_HTML", ROOT / "_build" / "html"))
    if not (html / "index.html").is_file():
        pytest.skip(f"no built site at {html}: run `make book`")
    return html
