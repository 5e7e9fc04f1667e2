"""One verification step at one prefix: acceptance a(x), residual r(x), acceptance rate α.

Notation follows Leviathan, Kalman & Matias (ICML 2023): p is the target
distribution, q the draft distribution, both over the same tokens at the same prefix.

Float inputs give float results (numpy vectors, Python float scalars); when every
probability is a ``Fraction`` or int the results are exact ``Fraction`` values.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import _validate

RESIDUAL_FLOAT_FLOOR = 1e-12  # float residual mass below this counts as p == q


def acceptance_rate(p, q):
    r"""Probability that a draft token is accepted: :math:`\alpha = \sum_x \min(p(x), q(x))`.

    Symmetric in p and q; equals 1 exactly when p = q.

    >>> acceptance_rate([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    0.6
    >>> from fractions import Fraction as F
    >>> acceptance_rate([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)])
    Fraction(3, 5)
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return sum((min(a, b) for a, b in zip(p, q)), start=Fraction(0))
    return min(1.0, float(np.minimum(p, q).sum()))


def accepted_mass(p, q):
    r"""Probability that token x is both proposed and accepted: :math:`q(x)\,a(x) = \min(p(x), q(x))`.

    Summing it over x gives α; it is the first term of the output law.

    >>> accepted_mass([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).tolist()
    [0.2, 0.3, 0.1]
    >>> from fractions import Fraction as F
    >>> accepted_mass([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)])
    [Fraction(1, 5), Fraction(3, 10), Fraction(1, 10)]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return [min(a, b) for a, b in zip(p, q)]
    return np.minimum(p, q)


def acceptance_probabilities(p, q):
    r"""Per-token acceptance :math:`a(x) = \min(1, p(x)/q(x))` for tokens with q(x) > 0.

    A token with q(x) = 0 is never proposed, so a(x) is undefined there:
    NaN in float mode, ``None`` in exact mode.

    >>> acceptance_probabilities([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).round(12).tolist()
    [1.0, 1.0, 0.2]
    >>> from fractions import Fraction as F
    >>> acceptance_probabilities([F(1, 2), F(1, 2), 0], [F(1, 4), 0, F(3, 4)])
    [Fraction(1, 1), None, Fraction(0, 1)]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return [min(Fraction(1), a / b) if b > 0 else None for a, b in zip(p, q)]
    out = np.full(p.shape, np.nan)
    proposable = q > 0
    out[proposable] = np.minimum(1.0, p[proposable] / q[proposable])
    return out


def residual_distribution(p, q):
    r"""Correction law after a rejection: :math:`r(x) = [p(x)-q(x)]_+ / \sum_y [p(y)-q(y)]_+`.

    Raises ``ValueError`` when the denominator is 0, i.e. p = q: then every
    proposal is accepted and no correction is ever drawn. (In float mode a
    residual mass below 1e-12 counts as zero.)

    >>> residual_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).tolist()
    [1.0, 0.0, 0.0]
    >>> residual_distribution([0.5, 0.5], [0.5, 0.5])
    Traceback (most recent call last):
    ...
    ValueError: p, q: residual [p - q]+ has zero mass (p equals q), so no rejection can occur
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        positive = [max(a - b, Fraction(0)) for a, b in zip(p, q)]
        mass = sum(positive, start=Fraction(0))
        if mass == 0:
            raise _no_rejection()
        return [v / mass for v in positive]
    positive = np.maximum(p - q, 0.0)
    mass = float(positive.sum())
    if mass < RESIDUAL_FLOAT_FLOOR:
        raise _no_rejection()
    return positive / mass


def correction_distribution(p, q):
    r"""The law a correction is drawn from after a rejection: the residual r, or p where r has no mass.

    In exact arithmetic a rejection has probability :math:`1-\alpha = \sum_x [p(x)-q(x)]_+`, so
    whenever one happens r exists and this is ``residual_distribution(p, q)``. In floating point,
    p and q that agree up to round-off can still reject while :math:`[p-q]_+` holds less than
    1e-12 of mass; its normalised shape is then noise, and p is returned instead (the emitted
    token's law differs from p by at most that round-off).

    >>> correction_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).tolist()
    [1.0, 0.0, 0.0]
    >>> correction_distribution([0.5, 0.5], [0.5 + 1e-15, 0.5 - 1e-15]).tolist()  # p ≈ q
    [0.5, 0.5]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return residual_distribution(p, q) if p != q else p
    return correction_rows(p[None, :], q[None, :])[0]


def correction_rows(p_rows, q_rows) -> np.ndarray:
    r"""``correction_distribution`` for many float rows at once, unchecked (rows already validated).

    Row i is :math:`[p_i - q_i]_+` normalised, or :math:`p_i` where that mass is below 1e-12.

    >>> correction_rows(np.array([[0.6, 0.4], [0.5, 0.5]]), np.array([[0.2, 0.8], [0.5, 0.5]])).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    excess = np.maximum(p_rows - q_rows, 0.0)
    mass = excess.sum(axis=1, keepdims=True)
    has_mass = mass >= RESIDUAL_FLOAT_FLOOR
    return np.where(has_mass, excess / np.where(has_mass, mass, 1.0), p_rows)


def output_distribution(p, q):
    r"""Law of the token one strict speculative step emits: :math:`\min(p,q) + (1-\alpha)\,r`.

    The first term is "proposed and accepted", the second "rejected, then
    corrected from the residual" (``correction_distribution``). It equals p
    (Leviathan et al. 2023, Appendix A.1); when α = 1 the second term vanishes.

    >>> output_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).round(12).tolist()
    [0.6, 0.3, 0.1]
    >>> from fractions import Fraction as F
    >>> p = [F(3, 5), F(3, 10), F(1, 10)]
    >>> output_distribution(p, [F(1, 5), F(3, 10), F(1, 2)]) == p
    True
    """
    p, q, exact = _validate.distribution_pair(p, q)
    rejected = 1 - acceptance_rate(p, q)
    correction = correction_distribution(p, q)
    if exact:
        return [acc + rejected * r for acc, r in zip(accepted_mass(p, q), correction)]
    return accepted_mass(p, q) + rejected * correction


def lenient_acceptance_rate(p, q, lenience):
    r"""Acceptance of one draft under lenience l (Leviathan et al. 2023, Appendix A.5): :math:`\sum_x \min(q(x), p(x)/l)`.

    The lenient rule compares p(x) with :math:`l\,q(x)` instead of q(x): it accepts a proposal x with
    probability :math:`\min(1, p(x)/(l\,q(x)))`. l = 1 is strict speculative sampling (the result is α);
    l = 0 accepts every proposal. Smaller l accepts more and, below 1, no longer returns p
    (``lenient_output_distribution``).

    >>> lenient_acceptance_rate([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], 1)  # strict: alpha
    0.6
    >>> from fractions import Fraction as F
    >>> lenient_acceptance_rate([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)], F(1, 2))
    Fraction(7, 10)
    """
    p, q, exact = _validate.distribution_pair(p, q)
    lenience = _validate.probability("lenience", lenience)
    if exact:
        return sum((_lenient_kept(a, b, lenience) for a, b in zip(p, q)), start=Fraction(0))
    return min(1.0, float(sum(_lenient_kept(a, b, float(lenience)) for a, b in zip(p, q))))


def lenient_output_distribution(p, q, lenience):
    r"""Distribution of the token one lenient step emits: :math:`m + (1 - \textstyle\sum m)\,r_l`.

    With :math:`m(x) = \min(q(x), p(x)/l)` (proposed and accepted) and the correction
    :math:`r_l = [p - l\,q]_+ / \sum [p - l\,q]_+` (Leviathan et al. 2023, Appendix A.5). At l = 1
    this is ``output_distribution`` and equals p; below 1 it drifts toward q (at l = 0 it is q).

    >>> lenient_output_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], 1).round(12).tolist()
    [0.6, 0.3, 0.1]
    >>> from fractions import Fraction as F
    >>> lenient_output_distribution([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)], F(1, 2))
    [Fraction(28, 65), Fraction(24, 65), Fraction(1, 5)]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    lenience = _validate.probability("lenience", lenience)
    if lenience == 1:
        return output_distribution(p, q)
    if not exact:
        lenience = float(lenience)
    kept = [_lenient_kept(a, b, lenience) for a, b in zip(p, q)]
    excess = [max(a - lenience * b, 0 * a) for a, b in zip(p, q)]
    rejected, mass = 1 - sum(kept), sum(excess)  # mass >= 1 - l > 0 for l < 1
    out = [k + rejected * e / mass for k, e in zip(kept, excess)]
    return out if exact else np.asarray(out, dtype=np.float64)


def _lenient_kept(p_x, q_x, lenience):
    """min(q(x), p(x)/l): the probability that x is proposed and accepted under lenience l."""
    return q_x if lenience == 0 or q_x * lenience <= p_x else p_x / lenience


def _no_rejection():
    return ValueError("p, q: residual [p - q]+ has zero mass (p equals q), so no rejection can occur")
