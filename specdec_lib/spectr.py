r"""SpecTr's k-sequential draft selection (K-SEQ; Sun et al., NeurIPS 2023, arXiv 2310.15141), derived here.

k candidates :math:`x^{(1)}..x^{(k)}` are drawn independently from q. Each is accepted, in turn,
with probability :math:`\min(1, p(x)/(\rho\,q(x)))` for one divisor :math:`\rho \ge 1`; the first
accepted one is emitted. Write :math:`m_\rho(x) = \min(q(x), p(x)/\rho)` and
:math:`\beta_\rho = \sum_x m_\rho(x)`. Candidate i is token x and accepted with probability
:math:`(1-\beta_\rho)^{i-1} m_\rho(x)`, so acceptance emits x with probability
:math:`m_\rho(x)\,S` where :math:`S = (1 - (1-\beta_\rho)^k)/\beta_\rho`, and no candidate is
accepted with probability :math:`(1-\beta_\rho)^k`. The token is exactly p-distributed when the
rest is drawn from

.. math:: p_{\text{res}}(x) = \frac{p(x) - m_\rho(x)\,S}{(1-\beta_\rho)^k},

which is a distribution exactly when :math:`1 - (1-\beta_\rho)^k \le \rho\,\beta_\rho` (at tokens
with :math:`p(x)/\rho \le q(x)` the numerator is :math:`p(x)(1 - S/\rho)`). The left side grows
slower than the right as ρ rises, so the best divisor is the smallest valid ρ in [1, k]
(ρ = k is always valid; k = 1 gives ρ = 1, strict verification). The acceptance probability is
:math:`1 - (1-\beta_\rho)^k`; SpecInfer's multi-round rule (``trees.verify_multi_draft``) instead
shrinks the target after each rejection. The derivation is ours: the course could read only the
paper's abstract, not its algorithm or theorem text (see the variants chapter).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _validate
from ._types import FloatArray, Number, Seed
from .sampling import sample_token

if TYPE_CHECKING:
    from .trees import MultiDraftVerdict

BISECTION_STEPS = 30  # ρ to within (k − 1)·2^-30, always on the valid side


def spectr_rho(p: Sequence, q: Sequence, k: int) -> Number:
    r"""The smallest divisor ρ ∈ [1, k] with :math:`1-(1-\beta_\rho)^k \le \rho\,\beta_\rho` (bisection, valid side).

    Exact (a ``Fraction``) for ``Fraction`` rows: the check at every step is exact, and the
    returned ρ is the upper end of the last bracket, so it always passes.

    >>> from fractions import Fraction as F
    >>> spectr_rho([F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)], 3)  # p = q: every candidate passes at ρ = 1
    1
    >>> round(float(spectr_rho([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], 2)), 4)  # the root of ρ² − 1.8ρ + 0.4
    1.5403
    """
    p, q, exact = _validate.distribution_pair(p, q)
    k = _validate.count("k", k, minimum=1)
    if _valid(p, q, k, 1):
        return 1
    low, high = 1, k
    for _ in range(BISECTION_STEPS):
        middle = Fraction(low + high) / 2 if exact else (low + high) / 2
        low, high = (low, middle) if _valid(p, q, k, middle) else (middle, high)
    return high


def spectr_steps(
    p: Sequence, q: Sequence, k: int, *, rho: Number | None = None, _short: int = 0
) -> tuple[list, Sequence | FloatArray]:
    r"""Exact verdict of ``verify_spectr`` with k fresh candidates from q, in ``multi_draft_steps``' form.

    ``accepted[i][x] = (1-β)^i m(x)`` (candidate i+1 is x and accepted), ``correction[y]`` =
    :math:`(1-\beta)^k p_{\text{res}}(y)`. ``rho`` defaults to ``spectr_rho(p, q, k)``.
    ``_short`` is the planted off-by-one of ``broken_verifiers``: the residual computed as if
    ``_short`` fewer candidates had been checked.

    >>> from fractions import Fraction as F
    >>> accepted, correction = spectr_steps([F(1, 2), F(1, 2)], [F(3, 4), F(1, 4)], 1)
    >>> accepted, correction
    ([[Fraction(1, 2), Fraction(1, 4)]], [Fraction(0, 1), Fraction(1, 4)])
    """
    p, q, exact = _validate.distribution_pair(p, q)
    k = _validate.count("k", k, minimum=1)
    rho = spectr_rho(p, q, k) if rho is None else rho
    if not exact:
        return _float_steps(p, q, k, rho, k - _short)
    kept = [min(b, a / rho) for a, b in zip(p, q)]
    beta = sum(kept)
    miss = 1 - beta
    accepted = [[miss**i * v for v in kept] for i in range(k)]
    reach = miss**k
    if reach == 0:  # p = q at ρ = 1: some candidate is always accepted
        return accepted, [0 * v for v in p]
    share = sum((miss**i for i in range(k - _short)), start=0 * beta)  # S = (1 − (1 − β)^k)/β
    rest = [a - v * share for a, v in zip(p, kept)]
    if _short:  # the planted bug can leave negatives
        rest = [max(v, 0 * v) for v in rest]
    mass = sum(rest)
    return accepted, [reach * v / mass for v in rest]


def _float_steps(p: FloatArray, q: FloatArray, k: int, rho: Any, terms: int) -> tuple[list, FloatArray]:
    """``spectr_steps`` on float rows, vectorised; round-off negatives in the residual are clipped."""
    kept = np.minimum(q, p / rho)
    miss = 1.0 - float(kept.sum())
    accepted = [miss**i * kept for i in range(k)]
    reach = miss**k
    rest = np.maximum(p - kept * sum(miss**i for i in range(terms)), 0.0)
    if reach < 1e-12 or rest.sum() <= 0:  # nothing (or only round-off) is left for the residual
        return accepted, reach * p
    return accepted, reach * rest / rest.sum()


def spectr_output_distribution(p: Sequence, q: Sequence, k: int) -> list:
    r"""Distribution of the token ``verify_spectr`` emits with k candidates: :math:`\sum_i \text{accepted}_i + \text{correction}`; it is p.

    >>> from fractions import Fraction as F
    >>> p = [F(3, 5), F(3, 10), F(1, 10)]
    >>> all(spectr_output_distribution(p, [F(1, 5), F(3, 10), F(1, 2)], k) == p for k in (1, 2, 3, 4))
    True
    """
    accepted, correction = spectr_steps(p, q, k)
    return [sum(column) + c for column, c in zip(zip(*accepted), correction)]


def spectr_acceptance(p: Sequence, q: Sequence, k: int) -> Number:
    r"""Probability that one of the k candidates is accepted: :math:`1 - (1-\beta_\rho)^k` at ρ = ``spectr_rho``.

    >>> from fractions import Fraction as F
    >>> spectr_acceptance([F(1, 2), F(1, 2)], [F(3, 4), F(1, 4)], 1)  # k = 1: Σ min(p, q)
    Fraction(3, 4)
    """
    accepted, _ = spectr_steps(p, q, k)
    return sum(sum(row) for row in accepted)


def verify_spectr(
    candidates: Sequence[int],
    target_probs: Sequence,
    draft_probs: Sequence,
    rng: Seed = None,
    *,
    _short: int = 0,
) -> MultiDraftVerdict:
    r"""K-SEQ: check k candidates drawn independently from q, accepting x with :math:`\min(1, p(x)/(\rho q(x)))`.

    Same arguments and verdict as ``trees.verify_multi_draft``: the first accepted candidate is
    emitted; if none is, a token from :math:`p_{\text{res}}` (``spectr_steps``). ρ is
    ``spectr_rho`` for the number of candidates.

    >>> verify_spectr([2, 1], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5], rng=0)
    MultiDraftVerdict(token=1, accepted=1)
    """
    from .trees import MultiDraftVerdict, _candidates

    p = _validate.distribution("target_probs", target_probs, exact=False)
    q = _validate.distribution("draft_probs", draft_probs, exact=False)
    if len(p) != len(q):
        raise ValueError(f"target_probs, draft_probs: length mismatch ({len(p)} vs {len(q)} tokens)")
    candidates = _candidates(candidates, q)
    k = len(candidates)
    rho = spectr_rho(p, q, k)
    rng = np.random.default_rng(rng)
    for i, x in enumerate(candidates):
        if rng.random() < min(1.0, p[x] / (rho * q[x])):
            return MultiDraftVerdict(x, i)
    _, correction = spectr_steps(p, q, k, rho=rho, _short=_short)
    return MultiDraftVerdict(sample_token(np.asarray(correction, dtype=float), rng), None)


def _valid(p: Any, q: Any, k: int, rho: Number) -> bool:
    if isinstance(p, np.ndarray):  # float rows: one vectorised pass, a little slack for round-off
        beta = float(np.minimum(q, p / rho).sum())
        return 1 - (1 - beta) ** k <= rho * beta + 1e-12
    beta = sum(min(b, a / rho) for a, b in zip(p, q))
    return 1 - (1 - beta) ** k <= rho * beta
