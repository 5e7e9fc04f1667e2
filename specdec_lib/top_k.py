r"""Exact verification of distinct, deterministic candidates: the draft's top-k tokens at a node.

EAGLE and Medusa build their trees from the draft's k most likely tokens, not from independent
draws, so SpecInfer's rule (which divides by the q the candidates were drawn from) does not apply.
Visiting the candidates in rank order and accepting each with the chance that keeps the output
distributed as p *given the earlier rejections* is exact whatever q is: after candidates
:math:`c_1..c_{i-1}` were rejected the output must follow p with those tokens removed,

.. math:: p_i(x) = \frac{p(x)\,[x \notin \{c_1..c_{i-1}\}]}{1 - \sum_{j<i} p(c_j)},

so :math:`c_i` is accepted with probability :math:`p_i(c_i)` and, when all k are rejected, the
token is drawn from :math:`p_{k+1}`. The chance that :math:`c_i` is the emitted token telescopes to
:math:`p(c_i)` itself: a top-k node keeps :math:`\sum_i p(c_i)`, the target's mass on the draft's
top k. (With a one-hot q this is Sequoia's sampling without replacement; q only ranks.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import _validate
from ._types import Probabilities, Seed
from .sampling import sample_token

if TYPE_CHECKING:
    from .trees import MultiDraftVerdict


def top_k_candidates(draft_probs: Probabilities, k: int) -> list[int]:
    """The draft's k most likely tokens, most likely first (ties: the lower token id first).

    >>> top_k_candidates([0.2, 0.5, 0.3], 2)
    [1, 2]
    """
    q = _validate.distribution("draft_probs", draft_probs)
    k = _validate.count("k", k, minimum=1)
    if k > len(q):
        raise ValueError(f"k: {k} distinct candidates from a vocabulary of {len(q)} tokens")
    if isinstance(q, np.ndarray):
        return np.argsort(-q, kind="stable")[:k].tolist()
    return sorted(range(len(q)), key=lambda x: (-q[x], x))[:k]


def top_k_acceptance_chances(target_probs: Sequence, candidates: Sequence[int], *, _lag: int = 0) -> list:
    r"""The chance of accepting each candidate once it is reached: :math:`p(c_i)/(1 - \sum_{j<i} p(c_j))`.

    (0 where nothing is left to renormalise: that candidate is then never reached.)
    ``_lag`` is the planted off-by-one of ``broken_verifiers``: renormalise without the last ``_lag`` rejections.

    >>> from fractions import Fraction as F
    >>> top_k_acceptance_chances([F(1, 2), F(1, 4), F(1, 4)], [0, 1])
    [Fraction(1, 2), Fraction(1, 2)]
    """
    p = _validate.distribution("target_probs", target_probs)
    candidates = distinct_candidates(candidates, len(p))
    chances = []
    for i, x in enumerate(candidates):
        left = 1 - sum((p[c] for c in candidates[: max(0, i - _lag)]), start=0 * p[0])
        chances.append(min(1, p[x] / left) if left > 0 else 0 * p[0])
    return chances


def verify_top_k(
    candidates: Sequence[int],
    target_probs: Sequence,
    draft_probs: Sequence | None = None,
    rng: Seed = None,
    *,
    _lag: int = 0,
) -> MultiDraftVerdict:
    r"""Check distinct candidates in order; accept :math:`c_i` with :math:`p(c_i)/(1-\sum_{j<i}p(c_j))`, else draw from what is left.

    ``candidates``: distinct token ids (typically ``top_k_candidates(draft_probs, k)``);
    ``target_probs``: the target row p at the node. ``draft_probs`` is accepted for
    ``verify_multi_draft``'s signature and not used: q only chose the candidates. Returns a
    ``MultiDraftVerdict`` (``accepted`` is the candidate's rank, or None when the token was drawn
    from p with every candidate removed). The emitted token follows p exactly
    (``top_k_output_distribution``).

    >>> verify_top_k([1, 2], [0.6, 0.3, 0.1], rng=0)
    MultiDraftVerdict(token=0, accepted=None)
    """
    from .trees import MultiDraftVerdict

    p = _validate.distribution("target_probs", target_probs, exact=False)
    chances = top_k_acceptance_chances(p, candidates, _lag=_lag)
    candidates = distinct_candidates(candidates, len(p))
    rng = np.random.default_rng(rng)
    for i, (x, chance) in enumerate(zip(candidates, chances)):
        if rng.random() < chance:
            return MultiDraftVerdict(x, i)
    return MultiDraftVerdict(sample_token(_without(p, candidates), rng), None)


def top_k_steps(p: Sequence, q: Sequence, k: int, *, _lag: int = 0) -> tuple[list, list]:
    r"""Exact verdict of ``verify_top_k`` on the draft's top k at one node, as ``multi_draft_steps`` gives it.

    Returns ``(accepted, correction)``: ``accepted[i]`` puts the chance that candidate i is emitted,
    :math:`\prod_{j<i}(1 - a_j)\,a_i = p(c_i)`, on its token :math:`c_i`; ``correction`` is the
    rest, p on every other token.

    >>> from fractions import Fraction as F
    >>> accepted, correction = top_k_steps([F(1, 2), F(1, 4), F(1, 4)], [F(1, 6), F(1, 3), F(1, 2)], 2)
    >>> [[str(v) for v in row] for row in accepted], [str(v) for v in correction]  # q ranks 2, then 1
    ([['0', '0', '1/4'], ['0', '1/4', '0']], ['1/2', '0', '0'])
    """
    p, q, _ = _validate.distribution_pair(p, q)
    candidates = top_k_candidates(q, k)
    reached, accepted, zero = 1, [], 0 * p[0]
    for x, chance in zip(candidates, top_k_acceptance_chances(p, candidates, _lag=_lag)):
        row = [zero] * len(p)
        row[x] = reached * chance
        accepted.append(row)
        reached *= 1 - chance
    left = _without(p, candidates) if reached > 0 else p
    return accepted, [reached * v for v in left]


def top_k_output_distribution(p: Sequence, q: Sequence, k: int) -> list:
    r"""Distribution of the token a top-k node emits: :math:`\sum_i \text{accepted}_i + \text{correction}`; it is p.

    >>> from fractions import Fraction as F
    >>> p = [F(1, 2), F(1, 3), F(1, 6)]
    >>> all(top_k_output_distribution(p, [F(1, 6), F(1, 6), F(2, 3)], k) == p for k in (1, 2, 3))
    True
    """
    accepted, correction = top_k_steps(p, q, k)
    return [sum(column) + c for column, c in zip(zip(*accepted), correction)]


def distinct_candidates(candidates: Sequence[int], vocab: int) -> list[int]:
    """Checked candidate ids: a non-empty sequence of distinct tokens inside the vocabulary."""
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__len__") or len(candidates) == 0:
        raise ValueError("candidates: expected a non-empty sequence of distinct token ids")
    out = [_validate.count(f"candidates[{i}]", x) for i, x in enumerate(candidates)]
    if any(x >= vocab for x in out):
        raise ValueError(f"candidates: token ids must be below the vocabulary size {vocab}")
    if len(set(out)) != len(out):
        raise ValueError(f"candidates: must be distinct, got {out}")
    return out


def _without(p: Sequence, removed: Sequence[int]) -> Sequence:
    """p with the ``removed`` tokens zeroed and renormalised (p itself if nothing would be left)."""
    kept = [0 * v if x in removed else v for x, v in enumerate(p)]
    mass = sum(kept)
    if not mass > 0:
        return p
    if isinstance(p, np.ndarray):
        return np.asarray(kept) / mass
    return [v / mass for v in kept]
