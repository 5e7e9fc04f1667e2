"""Computed numbers as short text, one way everywhere: option texts, tables, explorers, alt text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction


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
