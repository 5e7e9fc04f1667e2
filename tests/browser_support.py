"""What the two browser suites share: finding Chromium, skipping (or failing in CI) without it,
launching it, and opening pages that are closed after the test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("SPECDEC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_unavailable() -> str | None:
    """Why the browser tests cannot run here, or None when Playwright and Chromium are both present."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -r requirements.txt)"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    return None


def skip_or_fail(suite: str, reason: str | None) -> None:
    """Skip (``-ra`` lists the reason in pytest's summary); under SPECDEC_REQUIRE_BROWSER=1 (CI), fail."""
    if reason is None:
        return
    if os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"SPECDEC_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(f"{suite}: {reason}")


def launched_chromium():
    """Yield a headless Chromium (for a module-scoped fixture); closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def opener(make):
    """Yield a function that opens ``make(path)`` (an object with ``close()``); all are closed afterwards."""
    opened = []

    def open_one(path):
        opened.append(make(path))
        return opened[-1]

    yield open_one
    for thing in opened:
        thing.close()
