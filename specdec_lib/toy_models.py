"""A small prefix-dependent model pair for the lab: exact (Fractions) or float.

A *model* is a callable ``model(prefix: tuple[int, ...]) -> probability vector`` over a
fixed vocabulary. These two models are toys with 3 tokens: the next-token law depends on
the last token and on whether the prefix length is even, so every position of a round
sees a different row, and the target gives token 0 probability 0 after token 2 (the
draft does not), so some proposals are always rejected.
"""

from __future__ import annotations

from fractions import Fraction as F
from typing import Any

from ._types import Model, Prefix

_TARGET_ROWS = {  # last token -> next-token law (rotated by one at odd lengths)
    0: (F(1, 2), F(1, 3), F(1, 6)),
    1: (F(1, 5), F(3, 5), F(1, 5)),
    2: (F(0), F(1, 4), F(3, 4)),
}
_DRAFT_ROWS = {
    0: (F(1, 3), F(1, 3), F(1, 3)),
    1: (F(1, 2), F(1, 4), F(1, 4)),
    2: (F(1, 6), F(1, 2), F(1, 3)),
}


def toy_model_pair(exact: bool = True) -> tuple[Model, Model]:
    """Return ``(target, draft)``: two prefix-dependent models over tokens 0, 1, 2.

    With ``exact=True`` they return lists of ``Fraction``; otherwise lists of floats.

    >>> target, draft = toy_model_pair()
    >>> target((1, 2))
    [Fraction(0, 1), Fraction(1, 4), Fraction(3, 4)]
    >>> target((2,))  # odd length: the row is rotated by one
    [Fraction(3, 4), Fraction(0, 1), Fraction(1, 4)]
    >>> toy_model_pair(exact=False)[1](())
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    convert = (lambda v: v) if exact else float

    def target(prefix: Prefix) -> list[Any]:
        row = _TARGET_ROWS[prefix[-1] if prefix else 0]
        shift = len(prefix) % 2  # row[-0:] + row[:-0] is the row itself
        return [convert(v) for v in row[-shift:] + row[:-shift]]

    def draft(prefix: Prefix) -> list[Any]:
        return [convert(v) for v in _DRAFT_ROWS[prefix[-1] if prefix else 0]]

    return target, draft
