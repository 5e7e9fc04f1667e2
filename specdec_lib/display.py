"""Computed numbers as short text, one way everywhere: option texts, tables, explorers, alt text."""

from __future__ import annotations


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


def html_table(header, rows, caption=None) -> str:
    """A plain HTML table of computed text (escaped), for ``IPython.display.HTML``: it renders as a real table.

    >>> html_table(["rule", "tokens"], [["strict", "1.5"]])
    '<table><thead><tr><th scope="col">rule</th><th scope="col">tokens</th></tr></thead><tbody><tr><th scope="row">strict</th><td>1.5</td></tr></tbody></table>'
    """
    from html import escape

    head = "".join(f'<th scope="col">{escape(str(h))}</th>' for h in header)
    body = "".join(
        f'<tr><th scope="row">{escape(str(row[0]))}</th>'
        + "".join(f"<td>{escape(str(cell))}</td>" for cell in row[1:])
        + "</tr>"
        for row in rows
    )
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
