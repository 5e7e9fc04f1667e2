"""What a reader sees on every built page: no raw Markdown, unique section ids, no empty section,
no quiz question asked twice.

Each check is a function over one page's HTML, tested first on small planted defects (negative
controls that must be caught, so a check that silently passes everything fails here), then run
over every chapter of the built site (``built_site``; marker ``build``).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from bs4 import BeautifulSoup

# Text a reader should never see: Markdown that was shown instead of rendered.
RAW_MARKDOWN = {
    "table row": re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}:?\s*\|"),
    "heading hashes": re.compile(r"^\s*#{1,6}\s+\S"),
    "bold stars": re.compile(r"\*\*"),
    "glue role": re.compile(r"\{glue"),
}
# Elements whose text is code, maths or machinery, where those characters are legitimate.
NOT_PROSE = (
    "pre",
    "code",
    "script",
    "style",
    "kbd",
    "samp",
    ".math",
    ".MathJax",
    "mjx-container",
    ".highlight",
    "dt.sig",  # an API signature: `*args, **kwargs` is Python, not Markdown
)
# Sphinx names a section "id1", "id2", … when its title's id is already taken on the page.
GENERATED_ID = re.compile(r"^id\d+$")


def _article(html: str) -> BeautifulSoup:
    soup = BeautifulSoup(html, "html.parser")
    return soup.select_one("article") or soup.select_one("main") or soup


def raw_markdown(html: str) -> list[str]:
    """Each line of rendered prose that still looks like Markdown, labelled with what it looks like."""
    article = _article(html)
    for element in article.select(", ".join(NOT_PROSE)):
        element.decompose()
    found = []
    for line in article.get_text("\n").splitlines():
        for name, pattern in RAW_MARKDOWN.items():
            if pattern.search(line):
                found.append(f"{name}: {line.strip()[:80]}")
    return found


def titled_sections(html: str):
    """The page's sections that carry a heading: the reader's table of contents. (sphinx-exercise
    wraps each exercise body in an untitled ``<section id="exercise-content">``; those are not
    sections of the chapter.)"""
    return [s for s in _article(html).select("section") if s.find(re.compile(r"^h[1-6]$"), recursive=False)]


def bad_section_ids(html: str) -> list[str]:
    """Section ids that repeat on the page or that Sphinx generated because a title repeated."""
    ids = [s.get("id", "") for s in titled_sections(html)]
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    return repeated + [i for i in ids if GENERATED_ID.match(i)]


def empty_sections(html: str) -> list[str]:
    """Titles of sections that hold nothing but their heading."""
    empty = []
    for section in titled_sections(html):
        heading = section.find(re.compile(r"^h[1-6]$"), recursive=False)
        rest = [c for c in section.find_all(recursive=False) if c is not heading]
        if not any(c.get_text(strip=True) or c.find(["img", "svg", "table", "figure"]) for c in rest):
            empty.append(heading.get_text(" ", strip=True))
    return empty


def quiz_prompts(html: str) -> list[str]:
    """The question text of every quiz card on a page."""
    return [
        p.get_text(" ", strip=True) for p in BeautifulSoup(html, "html.parser").select("div.quiz > p strong")
    ]


def repeated(texts: list[str]) -> list[str]:
    return [t for t, n in Counter(texts).items() if n > 1]


# --- negative controls: each planted defect must be caught ----------------------------------------
PAGE = '<article><section id="a"><h1>A</h1><p>{body}</p>{more}</section></article>'


@pytest.mark.parametrize(
    "body, kind",
    [
        ("| rule | call |<br/>|---|---|", "table row"),
        ("| rule | call | tokens |", "table row"),
        ("text\n## All rules side by side", "heading hashes"),
        ("a **bold** claim", "bold stars"),
        ("E[K] = {glue:text}`EK:.2f`", "glue role"),
    ],
)
def test_negative_control_raw_markdown_is_caught(body, kind):
    found = raw_markdown(PAGE.format(body=body.replace("<br/>", "\n"), more=""))
    assert any(f.startswith(kind) for f in found), found


def test_markdown_characters_in_code_maths_and_tables_are_not_prose():
    body = "|x| in <code>**kwargs</code> and <span class='math'>\\(|p - q|\\)</span>"
    html = PAGE.format(
        body=body, more="<pre>| a | b |\n## not a heading</pre><table><tr><td>1</td></tr></table>"
    )
    assert raw_markdown(html) == []


def test_negative_control_repeated_and_generated_section_ids_are_caught():
    twice = '<section id="b"><h2>B</h2><p>x</p></section>' * 2
    assert bad_section_ids(PAGE.format(body="x", more=twice)) == ["b"]
    generated = '<section id="id1"><h2>A</h2><p>x</p></section>'
    untitled = '<section id="exercise-content"><p>x</p></section>' * 2
    assert bad_section_ids(PAGE.format(body="x", more=untitled)) == []
    assert bad_section_ids(PAGE.format(body="x", more=generated)) == ["id1"]
    assert bad_section_ids(PAGE.format(body="x", more='<section id="c"><h2>C</h2><p>y</p></section>')) == []


def test_negative_control_an_empty_section_is_caught():
    closing = '<section id="what-lenience-buys"><h2>What lenience buys</h2>\n</section>'
    assert empty_sections(PAGE.format(body="x", more=closing)) == ["What lenience buys"]
    with_card = (
        '<section id="q"><h2>Q</h2><div class="cell"><div class="quiz"><p>Why?</p></div></div></section>'
    )
    assert empty_sections(PAGE.format(body="x", more=with_card)) == []


def test_negative_control_a_repeated_question_is_caught():
    card = '<div class="quiz"><p><strong>{}</strong></p></div>'
    page = card.format("Can an exact rule accept more often?") * 2 + card.format("Why p − q?")
    assert repeated(quiz_prompts(page)) == ["Can an exact rule accept more often?"]


# --- the built site ---------------------------------------------------------------------------------
def chapters(site) -> dict[str, str]:
    pages = sorted((site / "book").glob("*.html"))
    assert len(pages) >= 10, f"only {len(pages)} chapter pages under {site / 'book'}"
    return {p.name: p.read_text(encoding="utf-8") for p in pages}


@pytest.mark.build
def test_no_page_shows_raw_markdown(built_site):
    found = {name: raw_markdown(html) for name, html in chapters(built_site).items()}
    assert {name: lines for name, lines in found.items() if lines} == {}


@pytest.mark.build
def test_every_section_id_is_unique_and_named_after_its_title(built_site):
    found = {name: bad_section_ids(html) for name, html in chapters(built_site).items()}
    assert {name: ids for name, ids in found.items() if ids} == {}


@pytest.mark.build
def test_no_section_is_empty(built_site):
    found = {name: empty_sections(html) for name, html in chapters(built_site).items()}
    assert {name: titles for name, titles in found.items() if titles} == {}


@pytest.mark.build
def test_every_quiz_question_is_asked_once(built_site):
    prompts = [p for html in chapters(built_site).values() for p in quiz_prompts(html)]
    assert len(prompts) >= 15
    assert repeated(prompts) == []
