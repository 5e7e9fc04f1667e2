"""Computed numbers as short text, one way everywhere: option texts, tables, explorers, alt text."""

from __future__ import annotations

from html import escape


def number(value, digits=2) -> str:
    """A computed number as short text: rounded to ``digits`` decimals, trailing zeros dropped.

    >>> number(1.9600000000000002), number(3.0), number(217.7777, 1)
    ('1.96', '3', '217.8')
    """
    return f"{round(float(value), digits):g}"


def vector(values, digits=2) -> str:
    """A computed probability vector as short text.

    >>> vector([1.0, 0.0, 0.0])
    '[1, 0, 0]'
    """
    return "[" + ", ".join(number(v, digits) for v in values) + "]"


def by_token(tokens, values, digits=3) -> str:
    """Values labelled by token, for printing a distribution or an acceptance vector.

    >>> by_token("ABC", [1.0, 1.0, 0.2000000000000001])
    'A 1, B 1, C 0.2'
    """
    return ", ".join(
        f"{t} {number(v, digits) if v is not None else 'undefined'}" for t, v in zip(tokens, values)
    )


class Table:
    """A small table of computed cells that Jupyter and the book render as a real HTML ``<table>``.

    Cells are shown as given (``str``); the first column is each row's header. Plain-text display
    (``print``) aligns the columns, so a terminal reader sees the same table.

    >>> t = Table(["x", "p(x)"], [["A", "0.6"], ["B", "0.3"]], caption="target")
    >>> print(t)
    x  p(x)
    A  0.6
    B  0.3
    >>> t._repr_html_().startswith("<table")
    True
    """

    def __init__(self, header, rows, caption=""):
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in row] for row in rows]
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError(f"rows: every row needs {len(self.header)} cells, like the header")
        self.caption = caption

    def __repr__(self) -> str:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        return "\n".join(
            "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [self.header, *self.rows]
        )

    def _repr_html_(self) -> str:
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        head = "".join(f'<th scope="col">{escape(h)}</th>' for h in self.header)
        body = "".join(
            f'<tr><th scope="row">{escape(r[0])}</th>'
            + "".join(f"<td>{escape(c)}</td>" for c in r[1:])
            + "</tr>"
            for r in self.rows
        )
        return f'<table class="specdec-data">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
