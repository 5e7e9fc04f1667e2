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
    "the iid formula's error has no direction of its own: it depends on which average of β is α": re.compile(
        r"(between\s+rounds|falls\s+along\s+the\s+round)\s*:\s*the\s+iid\s+formula\s+(under|over)-predicts",
        re.I,
    ),
    "Lemma 3.3 gives D_LK = 1 − Σ min(p, q); D_LK is defined in Def 3.2": re.compile(
        r"D_\{?LK\}?\$?,\s*Lemma\s+3\.3\)|Lemma\s+3\.3\s+identifies", re.I
    ),
    "Thm 3.11 does not follow from Thm 3.8": re.compile(
        r"Cor\s+3\.9\s+and\s+Thm\s+3\.11\s+follow\s+from", re.I
    ),
}

NAMED_RESULTS = {
    "output_count.ipynb": ["Def 3.1", "Cor 3.6", "Jensen", "alpha_estimates", "accepted ÷ drafted"],
    "acceptance.ipynb": ["Def 3.1", "Def 3.2", "Lemma 3.3", "Thm 3.5", "Cor 3.6", "could not open"],
    "engineering_example.ipynb": ["Thm 3.8", "Def 3.7"],
    "tradeoffs.ipynb": [
        "Def 3.7",
        "Def 3.10",
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
    assert false_statements("### β varies between rounds: the iid formula under-predicts") == [
        "the iid formula's error has no direction of its own: it depends on which average of β is α"
    ]
    assert false_statements("total variation (the paper's D_LK, Lemma 3.3)") == [
        "Lemma 3.3 gives D_LK = 1 − Σ min(p, q); D_LK is defined in Def 3.2"
    ]
    assert false_statements("Cor 3.9 and Thm 3.11 follow from it.") == [
        "Thm 3.11 does not follow from Thm 3.8"
    ]
    assert false_statements("Cor 3.9 follows from it; Thm 3.11 does not") == []


@pytest.mark.parametrize("path", sorted((*BOOK.glob("*.ipynb"), *BOOK.glob("*.md"))), ids=lambda p: p.name)
def test_no_known_false_statement_is_on_a_page(path):
    assert not false_statements(prose(path)), f"{path.name}: {false_statements(prose(path))}"


@pytest.mark.parametrize("name, results", NAMED_RESULTS.items())
def test_chapter_names_the_results_it_uses(name, results):
    text = prose(BOOK / name)
    missing = [r for r in results if r not in text]
    assert not missing, f"{name} does not name {missing}"


# --- every cited work is listed under "Sources" ----------------------------------------------------
CITE = re.compile(r"\{cite:[pt]\}`([^`]+)`")
BIB_KEY = re.compile(r"^@\w+\{([^,]+),", re.M)


def sources_section(text: str) -> str:
    """The evidence chapter's "## Sources" section."""
    return text.split("## Sources", 1)[1].split("\n## ", 1)[0]


def unlisted(keys: set[str], sources: str) -> list[str]:
    listed = {k for group in CITE.findall(sources) for k in group.split(",")}
    return sorted(keys - listed)


def test_negative_control_an_unlisted_work_is_caught():
    sources = sources_section("## Sources\n- {cite:t}`a`\n## Where to continue\n- {cite:p}`b`")
    assert unlisted({"a", "b"}, sources) == ["b"]


def test_sources_list_every_work_the_book_cites_and_the_bibliography_holds():
    pages = sorted((*BOOK.glob("*.ipynb"), *BOOK.glob("*.md")))
    cited = {k.strip() for p in pages for group in CITE.findall(prose(p)) for k in group.split(",")}
    in_bib = set(BIB_KEY.findall((BOOK / "references.bib").read_text()))
    assert cited <= in_bib, f"cited but not in references.bib: {sorted(cited - in_bib)}"
    assert unlisted(in_bib, sources_section(prose(BOOK / "evidence.ipynb"))) == []
