r"""The best token tree for a node budget, from the acceptance of each ranked candidate (Sequoia's dynamic programming).

Under exact top-k verification (``top_k``) the k-th ranked child of a reached node is the emitted
token with probability :math:`a_{d,k}`, the target's mass on the draft's k-th token at depth d
(averaged over the prefixes met). Assume, as Sequoia (Chen et al. 2024) does, that these chances
depend only on the depth and the rank, not on the path. A node v is then reached with the product
of the chances along its path, and a round of tree T emits

.. math:: E[\text{tokens}] = 1 + \sum_{v \in T} \prod_{(d, k) \text{ on the path to } v} a_{d,k}

tokens per target call (the 1 is the correction or bonus). Sequoia's dynamic programming finds
the tree of n draft nodes that maximises it: with :math:`V_d(n)` the best sum below a reached node
at depth d using n nodes, the children take ranks 1, 2, … and
:math:`V_d(n) = \max \sum_k a_{d,k}\,(1 + V_{d+1}(n_k))` over the ways to give rank k a subtree of
:math:`n_k` nodes with :math:`\sum_k (1 + n_k) \le n`. Children of a node are in rank order in the
shape this module returns (``trees``' nested tuples).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from . import _validate
from ._types import Number


def expected_tree_tokens(shape: tuple, acceptance: Sequence[Sequence]) -> Number:
    r"""Tokens per target call of a top-k tree: :math:`1 + \sum_v \prod a_{d,k}` along each node's path.

    ``acceptance[d][k]``: the chance that the rank-(k+1) candidate at depth d is the emitted token
    (rows may be shorter than the branching: missing ranks count 0; depths past the last row
    repeat it). Exact for ``Fraction`` entries.

    >>> from fractions import Fraction as F
    >>> expected_tree_tokens(((), ()), [[F(1, 2), F(1, 4)]])  # two children of the root
    Fraction(7, 4)
    >>> expected_tree_tokens((((),),), [[F(1, 2)]])  # a chain of two: 1 + 1/2 + 1/4
    Fraction(7, 4)
    """
    rows = _acceptance(acceptance)

    def below(node: tuple, depth: int) -> Any:
        row = rows[min(depth, len(rows) - 1)]
        return sum(
            (_rank(row, k) * (1 + below(child, depth + 1)) for k, child in enumerate(node)),
            start=0 * row[0],
        )

    return 1 + below(shape, 0)


def best_tree(
    acceptance: Sequence[Sequence], budget: int, max_depth: int | None = None
) -> tuple[tuple, float]:
    r"""The tree of at most ``budget`` draft nodes maximising ``expected_tree_tokens`` (Sequoia's DP).

    ``acceptance`` as in ``expected_tree_tokens``; ``max_depth`` limits the depth (default: the
    budget). Returns ``(shape, tokens per call)``; children are in rank order. Equal values keep
    the first found (fewer ranks used).

    >>> from specdec_lib.trees import tree_shape
    >>> best_tree([[0.9, 0.05]], 3)[0] == tree_shape((1, 1, 1))  # a likely draft: one chain
    True
    >>> best_tree([[0.5, 0.4]], 2)  # a close second rank: both children of the root
    (((), ()), 1.9)
    """
    rows = _acceptance(acceptance)
    budget = _validate.count("budget", budget)
    max_depth = budget if max_depth is None else _validate.count("max_depth", max_depth)
    ranks = max(len(row) for row in rows)

    @cache
    def subtree(depth: int, n: int) -> tuple[Any, tuple]:
        """(best value, children shapes) below a reached node at ``depth`` with ``n`` nodes to place."""
        if depth >= max_depth or n == 0:
            return 0 * rows[0][0], ()
        return children(depth, 0, n)

    @cache
    def children(depth: int, k: int, n: int) -> tuple[Any, tuple]:
        """Best use of ``n`` nodes by the children of rank k, k+1, … of a node at ``depth``."""
        row = rows[min(depth, len(rows) - 1)]
        best = (0 * rows[0][0], ())
        if k >= ranks or n == 0 or _rank(row, k) == 0:
            return best
        for size in range(n):  # this child's subtree gets `size` nodes, the later ranks the rest
            value, shape = subtree(depth + 1, size)
            rest_value, rest = children(depth, k + 1, n - 1 - size)
            total = _rank(row, k) * (1 + value) + rest_value
            if total > best[0]:
                best = (total, (shape,) + rest)
        return best

    value, shape = subtree(0, budget)
    return shape, 1 + value


def rank_acceptance(target_rows: Sequence, draft_rows: Sequence, ranks: int) -> tuple[list, list]:
    r"""Estimate :math:`a_k`: the target's mean mass on the draft's k-th most likely token, k = 1..``ranks``.

    ``target_rows[t]``, ``draft_rows[t]``: p and q at the prefixes met (for instance every position
    of a text the target wrote). Returns ``(means, standard errors)`` over the prefixes; under
    exact top-k verification :math:`a_k` is the chance that the rank-k candidate is the emitted token.

    >>> means, errors = rank_acceptance([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], [[0.5, 0.4, 0.1], [0.1, 0.3, 0.6]], 2)
    >>> [round(m, 2) for m in means]
    [0.6, 0.25]
    """
    p = np.asarray(target_rows, dtype=float)
    q = np.asarray(draft_rows, dtype=float)
    if p.ndim != 2 or p.shape != q.shape or len(p) < 2:
        raise ValueError("target_rows, draft_rows: need two equal (positions ≥ 2, vocabulary) arrays")
    ranks = _validate.count("ranks", ranks, minimum=1)
    order = np.argsort(-q, axis=1, kind="stable")[:, :ranks]  # ties: the lower token id first
    mass = np.take_along_axis(p, order, axis=1)
    return mass.mean(axis=0).tolist(), (mass.std(axis=0, ddof=1) / np.sqrt(len(p))).tolist()


def _rank(row: list, k: int) -> Any:
    return row[k] if k < len(row) else 0 * row[0]


def _acceptance(acceptance: Sequence[Sequence]) -> list[list]:
    try:
        rows = [list(row) for row in acceptance]
    except TypeError:
        raise ValueError("acceptance: expected rows of per-rank chances, one row per depth") from None
    if not rows or any(not row for row in rows):
        raise ValueError("acceptance: need at least one non-empty row")
    for d, row in enumerate(rows):
        for k, value in enumerate(row):
            _validate.probability(f"acceptance[{d}][{k}]", value)
        if sum(row) > 1 + _validate.FLOAT_TOLERANCE:
            raise ValueError(f"acceptance[{d}]: the ranks' chances sum to {float(sum(row)):.4f} > 1")
    return rows
