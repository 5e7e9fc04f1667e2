"""The book stays correct and readable: known false sentences never return, the quiz spreads its
answers, every glued number carries its kind, and figure-only cells are folded.

Sources are the book's notebooks and markdown pages (``book/``); the rendered checks read the built
site (the ``built_site`` fixture), as ``test_book_content.py`` does. Each scanner has a negative control: a planted defect it must report.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

KINDS = ("derived", "assumed", "simulated", "measured", "quoted")

# Sentences an expert review found false or misattributed (issue 11), and internal words that
# readers never need. Each entry: (pattern, why it is wrong).
FALSE_SENTENCES = [
    (
        r"fewer sequential target steps",
        "S > 1 is lower modelled wall time including the draft; fewer target calls is E[K] > 1",
    ),
    (r"equals p only when", "false: s ≠ q can still give p (p=[.5,.5,0], q=[.25,.25,.5], s=[.3,.3,.4])"),
    (r"Theorem 1 in their Appendix", "Leviathan et al.'s proof is Appendix A.1; Theorem 1 is Chen et al.'s"),
    (
        r"Leviathan(?:(?!Chen)[^\n]){0,80}\bTheorem 1\b",
        "Theorem 1 is Chen et al.'s numbering, not Leviathan et al.'s",
    ),
    (r"counts? the correction and bonus as \"?free\"?", "contradicts the bonus costing no extra target call"),
    (r"\bthe lesson's\b", "internal word: readers never see the lesson document"),
    (r"\blab models?\b", "internal word: say which models"),
    (
        r"Why not otter-grader|hide_solutions",
        "a tooling note: it belongs in the README, not on a reader page",
    ),
]

NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
KINDS_OF = re.compile(r"\b(two|three|four|five|six) kinds of \w+", re.IGNORECASE)
LIST_ITEM = re.compile(r"^\s*(\d+)\.\s", re.MULTILINE)


def false_sentences(text: str) -> list[str]:
    """The known false or internal phrases in ``text``, and any "N kinds of …" followed by a list of another length."""
    found = [
        f"{pattern!r}: {why}" for pattern, why in FALSE_SENTENCES if re.search(pattern, text, re.IGNORECASE)
    ]
    for match in KINDS_OF.finditer(text):
        following = text[match.end() :].split("\n#", 1)[0]  # up to the next heading
        items = LIST_ITEM.findall(following)
        if items and len(items) != NUMBER_WORDS[match.group(1).lower()]:
            found.append(f"{match.group(0)!r} is followed by a list of {len(items)}")
    return found


def book_sources() -> list[Path]:
    return sorted((*BOOK.glob("*.ipynb"), *BOOK.glob("*.md")))


def notebooks() -> list[Path]:
    return sorted(BOOK.glob("*.ipynb"))


def source_text(path: Path) -> str:
    """What an author wrote: a page's markdown, or a notebook's markdown and code cells."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    return "\n\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)


# --- (a) the known false sentences ---------------------------------------------------------------


def test_scanner_finds_planted_false_sentences():
    assert false_sentences("So S > 1 means fewer sequential target steps.")
    assert false_sentences("The output equals p only when s = q.")
    assert false_sentences("as proved in Leviathan et al. 2023, Theorem 1.")
    assert false_sentences("This chapter collects three kinds of evidence:\n\n1. a\n2. b\n3. c\n4. d\n")
    assert false_sentences("Take the lesson's toy.")
    assert not false_sentences(
        "This chapter collects three kinds of evidence:\n\n1. a\n2. b\n3. c\n\nThen more."
    )
    assert not false_sentences(
        "Chen et al.'s Theorem 1 proves it; Leviathan et al. prove it in Appendix A.1."
    )


@pytest.mark.parametrize("path", book_sources(), ids=lambda p: p.name)
def test_known_false_sentences_never_come_back(path):
    found = false_sentences(source_text(path))
    assert not found, f"{path.name}:\n" + "\n".join(found)


# --- (b) the quiz ---------------------------------------------------------------------------------

QUIZ_ANSWER = re.compile(r'class="quiz-answer"[^>]*><p><strong>([A-Z])\.')
QUIZ_OPTION = re.compile(r'<details class="quiz-option"')


def quiz_cards(path: Path) -> list[tuple[int, int]]:
    """(answer position, number of options) of every quiz card a notebook displays."""
    cards = []
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            if 'class="quiz"' in html:
                cards.append(
                    (ord(QUIZ_ANSWER.search(html).group(1)) - ord("A"), len(QUIZ_OPTION.findall(html)))
                )
    return cards


def unused_positions(cards) -> list[int]:
    """Option positions that some question offers but no question has as its answer."""
    offered = set(range(max((n for _, n in cards), default=0)))
    return sorted(offered - {answer for answer, _ in cards})


def test_spread_checker_reports_a_position_never_correct():
    assert unused_positions([(0, 3), (1, 3), (0, 3)]) == [2]
    assert unused_positions([(0, 3), (1, 3), (2, 4), (3, 4)]) == []


def test_quiz_has_enough_questions_and_spreads_its_answers():
    cards = quiz_cards(BOOK / "quiz.ipynb")
    assert len(cards) >= 15, f"the quiz shows {len(cards)} questions; at least 15 expected"
    assert not unused_positions(cards), (
        f"positions never correct: {unused_positions(cards)}; answers {Counter(a for a, _ in cards)}"
    )
    most = Counter(a for a, _ in cards).most_common(1)[0][1]
    assert most <= len(cards) / 2, "more than half the answers sit in one position"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_headings_carry_no_number_of_their_own(path):
    # the book numbers sections itself; "## 1. Title" would render as "9.1. 1. Title"
    numbered = [line for line in source_text(path).splitlines() if re.match(r"#{1,6}\s+\d+[.)]\s", line)]
    assert not numbered, f"{path.name}: headings numbered by hand: {numbered}"


# --- (c) the kind of every glued number in the built site ----------------------------------------

GLUED = ("pasted-text", "pasted-inline")


def unmarked_glued_numbers(soup: BeautifulSoup) -> list[str]:
    """Glued values (myst-nb's pasted spans) that contain a digit and sit inside no kind span."""
    bad = []
    for span in soup.find_all(class_=GLUED):
        text = span.get_text(" ", strip=True)
        if not re.search(r"\d", text):
            continue
        marked = any(set(parent.get("class") or ()) & set(KINDS) for parent in span.parents if parent.name)
        if not marked:
            bad.append(text)
    return bad


def test_kind_checker_reports_an_unmarked_glued_number():
    html = (
        '<p><span class="derived"><span class="pasted-text">1.96</span></span> and '
        '<span class="pasted-text">217.8</span> and <span class="pasted-text">True</span></p>'
    )
    assert unmarked_glued_numbers(BeautifulSoup(html, "html.parser")) == ["217.8"]


def test_every_glued_number_carries_its_kind(built_site, chapter_page):
    soup = BeautifulSoup((built_site / chapter_page).read_text(encoding="utf-8"), "html.parser")
    main = soup.find("main") or soup.body
    bad = unmarked_glued_numbers(main)
    assert not bad, (
        f"{chapter_page}: {len(bad)} glued numbers outside a kind span ({', '.join(KINDS)}): {bad[:10]}"
    )


# --- (d) figure-only cells are folded --------------------------------------------------------------

FOLDING_TAGS = {"hide-input", "remove-input", "remove-cell"}


def unfolded_figure_cells(nb) -> list[int]:
    """Indices of code cells whose outputs are only images and whose code is shown unfolded."""
    bad = []
    for i, cell in enumerate(nb.cells):
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        images = bool(outputs) and all(
            output.output_type in ("display_data", "execute_result")
            and any(mime.startswith("image/") for mime in output.get("data", {}))
            for output in outputs
        )
        if images and not FOLDING_TAGS & set(cell.metadata.get("tags", [])):
            bad.append(i)
    return bad


def test_figure_checker_reports_an_unfolded_figure_cell():
    image = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "Figure"})
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("plot()", outputs=[image]),
            nbformat.v4.new_code_cell("plot()", outputs=[image], metadata={"tags": ["hide-input"]}),
            nbformat.v4.new_code_cell(
                "print(1); plot()", outputs=[nbformat.v4.new_output("stream", text="1\n"), image]
            ),
        ]
    )
    assert unfolded_figure_cells(nb) == [0]


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_figure_only_cells_are_folded(path):
    bad = unfolded_figure_cells(nbformat.read(path, as_version=4))
    assert not bad, f"{path.name}: figure-only code cells {bad} need a hide-input (or remove-input) tag"
