"""Corrected statements stay corrected: the known false sentences never come back, and the
chapters name the paper's results they use (Leviathan et al. 2023; Chen et al. 2023)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"

# Each pattern matches a sentence that was on a page and is false (or invents a kind of number).
FALSE_STATEMENTS = {
    "S > 1 is lower modelled wall time, not fewer target steps": re.compile(
        r"\$?S\s*>\s*1\$?\s+means\s+fewer\s+(sequential\s+)?target\s+(steps|calls)", re.I
    ),
    "there are five kinds of number, not three or four": re.compile(
        r"\bone\s+of\s+(three|four)\s+kinds\b|\b(three|four)\s+kinds\s+of\s+numbers?\b", re.I
    ),
}

NAMED_RESULTS = {
    "output_count.ipynb": ["Def 3.1", "Cor 3.6", "Jensen"],
    "engineering_example.ipynb": ["Thm 3.8", "Def 3.7"],
    "tradeoffs.ipynb": [
        "Def 3.7",
        "Thm 3.8",
        "Cor 3.9",
        "Thm 3.11",
        "{cite:p}`chen2023`",
        "[2–2.5×]{.quoted}",
    ],
    "evidence.ipynb": ["Appendix A.1", "Theorem 1", "[2–2.5×]{.quoted}"],
}


def prose(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def false_statements(text: str) -> list[str]:
    return sorted(why for why, pattern in FALSE_STATEMENTS.items() if pattern.search(text))


def test_negative_control_the_old_sentences_are_caught():
    assert false_statements("$S>1$ means fewer sequential target steps; $O>1$ means more work.") == [
        "S > 1 is lower modelled wall time, not fewer target steps"
    ]
    assert false_statements("Every number in this course is one of three kinds") == [
        "there are five kinds of number, not three or four"
    ]
    assert false_statements("E[K] > 1 means fewer target calls per output token") == []


@pytest.mark.parametrize("path", sorted((*BOOK.glob("*.ipynb"), *BOOK.glob("*.md"))), ids=lambda p: p.name)
def test_no_known_false_statement_is_on_a_page(path):
    assert not false_statements(prose(path)), f"{path.name}: {false_statements(prose(path))}"


@pytest.mark.parametrize("name, results", NAMED_RESULTS.items())
def test_chapter_names_the_results_it_uses(name, results):
    text = prose(BOOK / name)
    missing = [r for r in results if r not in text]
    assert not missing, f"{name} does not name {missing}"
