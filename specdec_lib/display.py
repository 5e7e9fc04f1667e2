"""Computed numbers as short text, one way everywhere: option texts, tables, explorers, alt text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from html import escape


def number(value: float | Fraction, digits: int = 2) -> str:
    """A computed number as short text: rounded to ``digits`` decimals, trailing zeros dropped.

    >>> number(1.9600000000000002), number(3.0), number(217.7777, 1)
    ('1.96', '3', '217.8')
    """
    return f"{round(float(value), digits):g}"


def vector(values: Iterable[float | Fraction], digits: int = 2) -> str:
    """A computed probability vector as short text.

    >>> vector([1.0, 0.0, 0.0])
    '[1, 0, 0]'
    """
    return "[" + ", ".join(number(v, digits) for v in values) + "]"


def by_token(tokens: Sequence[str], values: Iterable[float | Fraction | None], digits: int = 3) -> str:
    """Values labelled by token, for printing a distribution or an acceptance vector.

    >>> by_token("ABC", [1.0, 1.0, 0.2000000000000001])
    'A 1, B 1, C 0.2'
    """
    return ", ".join(
        f"{t} {number(v, digits) if v is not None else 'undefined'}" for t, v in zip(tokens, values)
    )


KINDS = ("derived", "assumed", "simulated", "measured", "quoted")  # the intro's five kinds of number


class Table:
    """A small table of computed cells that Jupyter and the book render as a real HTML ``<table>``.

    A cell is text, or a ``(text, kind)`` pair that marks a number with one of the five ``KINDS``
    the way the book's prose does. The first column is each row's header. Plain-text display
    (``print``) aligns the columns, so a terminal reader sees the same table.

    >>> t = Table(["x", "p(x)"], [["A", ("0.6", "assumed")], ["B", "0.3"]], caption="target")
    >>> print(t)
    x  p(x)
    A  0.6
    B  0.3
    >>> t._repr_html_().startswith("<table")
    True
    >>> '<span class="assumed">0.6</span>' in t._repr_html_()
    True
    >>> Table(["x", "p(x)"], [["A"]])
    Traceback (most recent call last):
    ...
    ValueError: rows: every row needs 2 cells, like the header
    >>> Table(["x"], [[("1", "guessed")]])
    Traceback (most recent call last):
    ...
    ValueError: rows: kind 'guessed' is not one of derived, assumed, simulated, measured, quoted
    """

    def __init__(self, header: Sequence[object], rows: Sequence[Sequence[object]], caption: str = "") -> None:
        self.header = [str(h) for h in header]
        self.rows = [[self._cell(c) for c in row] for row in rows]
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError(f"rows: every row needs {len(self.header)} cells, like the header")
        self.caption = caption

    @staticmethod
    def _cell(cell: object) -> tuple[str, str | None]:
        text, kind = cell if isinstance(cell, tuple) else (cell, None)
        if kind is not None and kind not in KINDS:
            raise ValueError(f"rows: kind {kind!r} is not one of {', '.join(KINDS)}")
        return str(text), kind

    def __repr__(self) -> str:
        lines = [self.header, *([text for text, _ in row] for row in self.rows)]
        widths = [max(len(line[i]) for line in lines) for i in range(len(self.header))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)

    def _repr_html_(self) -> str:
        def html(cell: tuple[str, str | None]) -> str:
            text, kind = cell
            return f'<span class="{kind}">{escape(text)}</span>' if kind else escape(text)

        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        head = "".join(f'<th scope="col">{escape(h)}</th>' for h in self.header)
        body = "".join(
            f'<tr><th scope="row">{html(r[0])}</th>' + "".join(f"<td>{html(c)}</td>" for c in r[1:]) + "</tr>"
            for r in self.rows
        )
        return f'<table class="specdec-data">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
