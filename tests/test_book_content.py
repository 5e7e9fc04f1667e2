"""The book shows the lesson's numbers on the pages where they belong, and never types a derived number.

Two halves: the built HTML (the ``built_site`` fixture) must render the key numbers; and the
sources (markdown cells of ``book/*.ipynb`` and ``book/*.md``) must not contain a derived value
typed by hand — derived values reach prose only through myst-nb glue roles.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from myst_nb.core.variables import format_plain_text

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

# The lesson's derived values: never typed in prose. 0.4 (the rejected mass) is also an everyday
# number, so it may be typed where it is explicitly marked as an assumed input, [0.4]{.assumed}.
LESSON_DERIVED = ("1.96", "217.8", "166.7", "130.7", "0.24", "0.36")
REJECTED_MASS = "0.4"

# Leviathan et al. (2023), Table 1 (c = ĉ = 0): alpha, gamma, speed, operations — quoted, as the chapter quotes them.
TABLE_1 = [
    ("0.6", "2", "1.96", "1.53"),
    ("0.7", "3", "2.53", "1.58"),
    ("0.8", "2", "2.44", "1.23"),
    ("0.8", "5", "3.69", "1.63"),
    ("0.9", "2", "2.71", "1.11"),
    ("0.9", "10", "6.86", "1.60"),
]

PAGE_NUMBERS = {
    "book/engineering_example.html": [
        "0.6",
        "1.96",
        "217.8",
        "166.7",
        "130.7",
        "0.4",
        "0.24",
        "0.36",
        "1.47",
        "1.31",
    ],  # Thm 3.8 without and with the 1 ms overhead
    "book/acceptance.html": ["0.6"],
    "book/output_count.html": ["1.96", "2.12", "1.85"],  # iid; β varying by round; β falling along a round
    "book/tradeoffs.html": sorted({v for row in TABLE_1 for v in row[2:]}),
    "book/quiz.html": ["1.96"],
}

GLUE_ROLE = re.compile(r"\{glue(?::(?:text|any|md|math|figure))?\}`([^`]*)`")
ASSUMED_SPAN = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\{\.assumed\}")
DECIMAL = re.compile(r"-?\d+\.\d+%?")


def shows(number: str, text: str, *, trailing_zeros: bool = True) -> bool:
    """True when ``number`` occurs in ``text`` as a whole number (1.96 matches "1.96" and "1.960", not "11.96")."""
    tail = "0*" if trailing_zeros and "." in number and not number.endswith("%") else ""
    return re.search(rf"(?<![\d.]){re.escape(number)}{tail}(?![\d])", text) is not None


def typed_derived_numbers(markdown: str, glued_texts=()) -> list[str]:
    """Derived values typed into ``markdown`` outside glue roles.

    Checks the lesson's derived values, the rejected mass 0.4 unless marked assumed, and every
    text in ``glued_texts`` (how this page renders its glued values) unless marked assumed.
    """
    text = GLUE_ROLE.sub(" ", markdown)
    unmarked = ASSUMED_SPAN.sub(" ", text)
    found = {n for n in LESSON_DERIVED if shows(n, text)}
    found |= {REJECTED_MASS} if shows(REJECTED_MASS, unmarked) else set()
    found |= {t for t in glued_texts if shows(t, unmarked, trailing_zeros=False)}
    return sorted(found)


@functools.cache
def glue_store(path: Path) -> dict[str, str]:
    """Every value a notebook glues: key -> its text/plain, as stored in the committed outputs."""
    store = {}
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            plain = output.get("data", {}).get("application/papermill.record/text/plain")
            if plain is not None:
                store[output["metadata"]["scrapbook"]["name"]] = plain
    return store


def rendered_glue_texts(markdown: str, page: Path) -> set[str]:
    """The decimal numbers the glue roles in ``markdown`` render to (resolved as myst-nb does)."""
    texts = set()
    for content in GLUE_ROLE.findall(markdown):
        key, fmt = content.rsplit(":", 1) if ":" in content.replace("::", "") else (content, "s")
        if "::" in key:
            doc, key = key.split("::", 1)
            source = (page.parent / doc).with_suffix(".ipynb")
        else:
            source = page
        value = glue_store(source).get(key) if source.suffix == ".ipynb" and source.exists() else None
        if value is None:
            continue
        for text in (format_plain_text(value, fmt), value):
            if DECIMAL.fullmatch(text) and sum(ch.isdigit() for ch in text) >= 3:
                texts.add(text)
    return texts


def markdown_cells(path: Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text()]
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def book_sources() -> list[Path]:
    return sorted(p for p in (*BOOK.glob("*.ipynb"), *BOOK.glob("*.md")))


# --- the checker itself: negative controls that must be reported ---------------------------------


def test_checker_reports_a_typed_lesson_value():
    assert typed_derived_numbers("So E[K] is 1.96 tokens per round.") == ["1.96"]
    assert typed_derived_numbers("about 217.80 tokens/s") == ["217.8"]


def test_checker_accepts_the_same_value_through_glue():
    assert typed_derived_numbers("So E[K] is [{glue:text}`EK:.2f`]{.derived} tokens.") == []


def test_checker_allows_rejected_mass_only_when_marked_assumed():
    assert typed_derived_numbers("the rejected mass is 0.4") == ["0.4"]
    assert typed_derived_numbers("assume a rejection rate of [0.4]{.assumed}") == []
    assert typed_derived_numbers("q = [[0.2, 0.4, 0.4]]{.assumed}") == []
    assert typed_derived_numbers("0.45 and 10.4 are other numbers") == []


def test_checker_reports_a_typed_copy_of_any_glued_value(tmp_path):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "glue('t_even', 0.00876)",
                outputs=[
                    nbformat.v4.new_output(
                        "display_data",
                        data={"application/papermill.record/text/plain": "8.76"},
                        metadata={
                            "scrapbook": {"name": "t_even", "mime_prefix": "application/papermill.record/"}
                        },
                    )
                ],
            ),
            nbformat.v4.new_markdown_cell(
                "Break-even at [{glue:text}`t_even:.2f`]{.derived} ms, i.e. 8.76 ms."
            ),
        ]
    )
    path = tmp_path / "chapter.ipynb"
    nbformat.write(notebook, path)
    (markdown,) = markdown_cells(path)
    assert rendered_glue_texts(markdown, path) == {"8.76"}
    assert typed_derived_numbers(markdown, rendered_glue_texts(markdown, path)) == ["8.76"]


# --- the book's sources ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", book_sources(), ids=lambda p: p.name)
def test_no_derived_number_is_typed_into_markdown(path):
    offences = []
    for i, markdown in enumerate(markdown_cells(path)):
        found = typed_derived_numbers(markdown, rendered_glue_texts(markdown, path))
        if found:
            offences.append(f"markdown cell {i}: {found} — glue them instead: {markdown[:120]!r}")
    assert not offences, f"{path.name} types derived numbers by hand:\n" + "\n".join(offences)


# --- the built site -------------------------------------------------------------------------------


@functools.cache
def page(html: Path, relative: str) -> BeautifulSoup:
    path = html / relative
    assert path.exists(), f"{relative} is missing from the built site {html}"
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    return soup.find("main") or soup.body


@pytest.mark.parametrize("relative, number", [(p, n) for p, numbers in PAGE_NUMBERS.items() for n in numbers])
def test_key_number_is_rendered_on_its_page(built_site, relative, number):
    text = page(built_site, relative).get_text(" ", strip=True)
    assert shows(number, text), f"{number} is not shown on {relative}"


def test_table_1_rows_sit_side_by_side_and_match(built_site):
    rows = [
        [cell.get_text(strip=True) for cell in tr.find_all(["th", "td"])]  # α is the row's header cell
        for tr in page(built_site, "book/tradeoffs.html").find_all("tr")
    ]
    for alpha, gamma, speed, ops in TABLE_1:
        assert [alpha, gamma, speed, speed, ops, ops, "yes"] in rows, (
            f"Table 1 row α={alpha}, γ={gamma} missing or unmatched"
        )


def test_quiz_answers_are_revealable_and_computed(built_site):
    quiz = page(built_site, "book/quiz.html")
    cards = quiz.select("div.quiz")
    assert len(cards) >= 15, f"expected at least 15 questions, found {len(cards)}"
    for card in cards:
        assert card.select_one("details > summary.quiz-reveal") and card.select_one("details > .quiz-answer")
    assert any(shows("1.96", card.get_text(" ")) for card in cards)
