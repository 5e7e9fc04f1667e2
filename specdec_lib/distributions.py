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


def output_distribution(p, q):
    r"""Law of the token one strict speculative step emits: :math:`\min(p,q) + (1-\alpha)\,r`.

    The first term is "proposed and accepted", the second "rejected, then
    corrected from the residual". It equals p (Leviathan et al., Thm 3.5);
    when α = 1 the second term vanishes and the result is min(p, q) = p.

    >>> output_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).round(12).tolist()
    [0.6, 0.3, 0.1]
    >>> from fractions import Fraction as F
    >>> p = [F(3, 5), F(3, 10), F(1, 10)]
    >>> output_distribution(p, [F(1, 5), F(3, 10), F(1, 2)]) == p
    True
    """
    p, q, exact = _validate.distribution_pair(p, q)
    alpha = acceptance_rate(p, q)
    accepted = accepted_mass(p, q)
    if exact:
        if alpha == 1:
            return accepted
        residual = residual_distribution(p, q)
        return [acc + (1 - alpha) * res for acc, res in zip(accepted, residual)]
    try:
        residual = residual_distribution(p, q)
    except ValueError:  # p == q: nothing is ever rejected
        return accepted
    return accepted + (1.0 - alpha) * residual


def _no_rejection():
    return ValueError("p, q: residual [p - q]+ has zero mass (p equals q), so no rejection can occur")
