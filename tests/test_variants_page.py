"""The variants chapter's committed notebook: its comparison is a real table, and no Markdown table is emitted."""

import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parent.parent / "book" / "variants.ipynb"


def outputs(nb):
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            yield cell, output


def markdown_pipe_tables(nb) -> list[str]:
    """Outputs that print a Markdown table (a `|---|` rule line), which reaches the page as a paragraph of pipes."""
    found = []
    for _, output in outputs(nb):
        for text in (output.get("text", ""), *output.get("data", {}).values()):
            text = "".join(text) if isinstance(text, list) else str(text)
            if "|---" in text or "| --- |" in text:
                found.append(text[:80])
    return found


def test_pipe_table_checker_finds_a_planted_markdown_table():
    planted = {"cells": [{"outputs": [{"data": {"text/markdown": "| a | b |\n|---|---|\n| 1 | 2 |"}}]}]}
    assert markdown_pipe_tables(planted)


def test_all_rules_side_by_side_is_an_html_table_and_no_output_is_a_markdown_table():
    nb = json.loads(NOTEBOOK.read_text())
    tables = [
        "".join(o["data"]["text/html"])
        for _, o in outputs(nb)
        if "text/html" in o.get("data", {}) and "<table" in "".join(o["data"]["text/html"])
    ]
    assert len(tables) == 1 and '<th scope="col">speed-up [95 % interval]</th>' in tables[0]
    assert tables[0].count("<tr>") >= 10, "the table should hold every rule"
    assert not markdown_pipe_tables(nb)
    assert not any("display(Markdown" in "".join(c["source"]) for c in nb["cells"])
