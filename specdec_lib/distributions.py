"""One verification step at one prefix: acceptance a(x), residual r(x), acceptance rate α.

Notation follows Leviathan, Kalman & Matias (ICML 2023): p is the target
distribution, q the draft distribution, both over the same tokens at the same prefix.

Float inputs give float results (numpy vectors, Python float scalars); when every
probability is a ``Fraction`` or int the results are exact ``Fraction`` values.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from . import _validate
from ._types import Distribution, FloatArray, Number, Probabilities

RESIDUAL_FLOAT_FLOOR = 1e-12  # float residual mass below this counts as p == q


def acceptance_rate(p: Probabilities, q: Probabilities) -> Number:
    r"""Probability that a draft token proposed at this prefix is accepted: :math:`\beta = \sum_x \min(p(x), q(x)) = 1 - \mathrm{TV}(p, q)`.

    This is the paper's β at one prefix (Leviathan et al. 2023, Def 3.1, Thm 3.5); their α is
    the expectation of β over the prefixes met while generating (Cor 3.6). With one fixed prefix,
    as in the running example, α = β. Symmetric in p and q; equals 1 exactly when p = q.

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


def accepted_mass(p: Probabilities, q: Probabilities) -> Distribution:
    r"""Probability that token x is both proposed and accepted: :math:`q(x)\,a(x) = \min(p(x), q(x))`.

    Summing it over x gives the acceptance rate; it is the first term of the output distribution.

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


def acceptance_probabilities(p: Probabilities, q: Probabilities) -> FloatArray | list[Fraction | None]:
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


def residual_distribution(p: Probabilities, q: Probabilities) -> Distribution:
    r"""Correction distribution after a rejection: :math:`r(x) = [p(x)-q(x)]_+ / \sum_y [p(y)-q(y)]_+`.

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


def correction_distribution(p: Probabilities, q: Probabilities) -> Distribution:
    r"""The distribution a correction is drawn from after a rejection: the residual r, or p where r has no mass.

    In exact arithmetic a rejection has probability :math:`1-\alpha = \sum_x [p(x)-q(x)]_+`, so
    whenever one happens r exists and this is ``residual_distribution(p, q)``. In floating point,
    p and q that agree up to round-off can still reject while :math:`[p-q]_+` holds less than
    1e-12 of mass; its normalised shape is then noise, and p is returned instead (the emitted
    token's distribution differs from p by at most that round-off).

    >>> correction_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]).tolist()
    [1.0, 0.0, 0.0]
    >>> correction_distribution([0.5, 0.5], [0.5 + 1e-15, 0.5 - 1e-15]).tolist()  # p ≈ q
    [0.5, 0.5]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return residual_distribution(p, q) if p != q else p
    return correction_rows(p[None, :], q[None, :])[0]


def correction_rows(p_rows: FloatArray, q_rows: FloatArray) -> FloatArray:
    r"""``correction_distribution`` for many float rows at once, unchecked (rows already validated).

    Row i is :math:`[p_i - q_i]_+` normalised, or :math:`p_i` where that mass is below 1e-12.

    >>> correction_rows(np.array([[0.6, 0.4], [0.5, 0.5]]), np.array([[0.2, 0.8], [0.5, 0.5]])).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    excess = np.maximum(p_rows - q_rows, 0.0)
    mass = excess.sum(axis=1, keepdims=True)
    has_mass = mass >= RESIDUAL_FLOAT_FLOOR
    return np.where(has_mass, excess / np.where(has_mass, mass, 1.0), p_rows)


def output_distribution(p: Probabilities, q: Probabilities) -> Distribution:
    r"""Distribution of the token one strict speculative step emits: :math:`\min(p,q) + (1-\alpha)\,r`.

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
    return np.asarray(accepted_mass(p, q)) + rejected * np.asarray(correction)  # float mode: arrays


def lenient_acceptance_rate(p: Probabilities, q: Probabilities, lenience: Number) -> Number:
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


def lenient_output_distribution(p: Probabilities, q: Probabilities, lenience: Number) -> Distribution:
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


def damped_acceptance(p: Probabilities, q: Probabilities, damping: Number) -> Distribution:
    r"""A weaker exact rule's acceptance: :math:`a_\lambda(x) = \lambda \min(1, p(x)/q(x))` for a damping λ in [0, 1].

    λ = 1 is the strict rule's a(x); λ < 1 accepts every proposal less often. Paired with
    ``rule_correction`` the rule is still exact, and its acceptance rate is λα < α
    (``rule_acceptance_rate``): an example that no exact one-draft rule beats min(1, p/q).
    Tokens with q(x) = 0 (never proposed) get 0.

    >>> from fractions import Fraction as F
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    >>> damped_acceptance(p, q, F(1, 2))  # half of a(x) = [1, 1, 1/5]
    [Fraction(1, 2), Fraction(1, 2), Fraction(1, 10)]
    >>> damped_acceptance([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], 0.5).round(12).tolist()
    [0.5, 0.5, 0.1]
    """
    p, q, exact = _validate.distribution_pair(p, q)
    damping = _validate.probability("damping", damping)
    if exact:
        return [damping * min(Fraction(1), a / b) if b > 0 else Fraction(0) for a, b in zip(p, q)]
    ratio = np.divide(p, q, out=np.zeros_like(p), where=q > 0)
    return float(damping) * np.minimum(1.0, ratio)


def rule_acceptance_rate(q: Probabilities, accept: Probabilities) -> Number:
    r"""How often a one-draft rule that accepts proposal x with probability accept(x) accepts: :math:`\sum_x q(x)\,\mathrm{accept}(x)`.

    With accept = a = min(1, p/q) this is α.

    >>> round(rule_acceptance_rate([0.2, 0.3, 0.5], [1.0, 1.0, 0.2]), 12)
    0.6
    >>> from fractions import Fraction as F
    >>> rule_acceptance_rate([F(1, 5), F(3, 10), F(1, 2)], [F(1, 2), F(1, 2), F(1, 10)])
    Fraction(3, 10)
    """
    q, accept, exact = _accept_pair(q, accept)
    if exact:
        return sum((b * c for b, c in zip(q, accept)), start=Fraction(0))
    return float(np.dot(q, accept))


def rule_correction(p: Probabilities, q: Probabilities, accept: Probabilities) -> Distribution:
    r"""The correction that makes a one-draft rule exact: :math:`c(x) = \dfrac{p(x) - q(x)\,\mathrm{accept}(x)}{1 - \sum_y q(y)\,\mathrm{accept}(y)}`.

    A rule that accepts proposal x with probability accept(x) and otherwise draws from c emits x
    with probability :math:`q(x)\,\mathrm{accept}(x) + (1 - \sum_y q(y)\,\mathrm{accept}(y))\,c(x)`,
    which is p(x) exactly for this c. It exists only when :math:`q(x)\,\mathrm{accept}(x) \le p(x)`
    for every x (otherwise the accepted mass alone already exceeds p somewhere); then, since also
    accept ≤ 1, :math:`q\,\mathrm{accept} \le \min(p, q)` and the rule accepts at most α
    (Leviathan et al. 2023, Lemma 3.3). With accept = min(1, p/q), c is the residual r.

    >>> from fractions import Fraction as F
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    >>> rule_correction(p, q, damped_acceptance(p, q, F(1, 2)))
    [Fraction(5, 7), Fraction(3, 14), Fraction(1, 14)]
    >>> rule_correction(p, q, [1, 1, 1])
    Traceback (most recent call last):
    ...
    ValueError: accept: q(x)·accept(x) exceeds p(x) for token 2, so no correction can make this rule exact
    """
    p, q, exact = _validate.distribution_pair(p, q)
    q, accept, exact = _accept_pair(q, accept, exact)
    kept = [b * c for b, c in zip(q, accept)]
    for x, (a, k) in enumerate(zip(p, kept)):
        if k > a + (0 if exact else RESIDUAL_FLOAT_FLOOR):
            raise ValueError(
                f"accept: q(x)·accept(x) exceeds p(x) for token {x}, "
                "so no correction can make this rule exact"
            )
    rejected = 1 - sum(kept)
    if rejected == 0 or (not exact and rejected < RESIDUAL_FLOAT_FLOOR):
        raise ValueError("accept: the rule never rejects, so it needs no correction")
    out = [max(a - k, 0 * a) / rejected for a, k in zip(p, kept)]
    return out if exact else np.asarray(out, dtype=np.float64)


def rule_output_distribution(p: Probabilities, q: Probabilities, accept: Probabilities) -> Distribution:
    r"""Distribution a one-draft rule emits with its exact correction: :math:`q\,\mathrm{accept} + (1 - \sum q\,\mathrm{accept})\,c`.

    Equals p whenever ``rule_correction`` exists; what differs between exact rules is only how
    often they accept (``rule_acceptance_rate``).

    >>> from fractions import Fraction as F
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    >>> rule_output_distribution(p, q, damped_acceptance(p, q, F(1, 2))) == p
    True
    """
    correction = rule_correction(p, q, accept)
    p, q, exact = _validate.distribution_pair(p, q)
    q, accept, exact = _accept_pair(q, accept, exact)
    rejected = 1 - rule_acceptance_rate(q, accept)
    out = [b * c + rejected * r for b, c, r in zip(q, accept, correction)]
    return out if exact else np.asarray(out, dtype=np.float64)


def _accept_pair(q: Probabilities, accept: Probabilities, exact: bool | None = None) -> tuple[Any, Any, bool]:
    """Check a draft distribution and a per-token acceptance vector (entries in [0, 1]) together."""
    if exact is None:
        exact = _validate._is_exact_vector(q) and _validate._is_exact_vector(accept)
    q = _validate.distribution("q", q, exact=exact)
    if len(accept) != len(q):
        raise ValueError(f"accept: has {len(accept)} entries, expected {len(q)} (one per token)")
    accept = [_validate.probability(f"accept[{x}]", v) for x, v in enumerate(accept)]
    if exact and not all(isinstance(v, Fraction) for v in accept):
        exact = False
    if not exact:
        q, accept = np.asarray(q, dtype=np.float64), np.asarray(accept, dtype=np.float64)
    return q, accept, exact


def _lenient_kept(p_x: Any, q_x: Any, lenience: Any) -> Any:
    """min(q(x), p(x)/l): the probability that x is proposed and accepted under lenience l."""
    return q_x if lenience == 0 or q_x * lenience <= p_x else p_x / lenience


def _no_rejection() -> ValueError:
    return ValueError("p, q: residual [p - q]+ has zero mass (p equals q), so no rejection can occur")
