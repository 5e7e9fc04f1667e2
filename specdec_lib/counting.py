"""Counting output per round and turning it into rates: K, E[K], scenario rates, the paper's factors.

Under the iid assumption every draft position is accepted independently with the
same probability α. That is a modelling assumption (Leviathan et al. 2023, §3.1),
not a property of real prefixes; these functions compute what follows from it.
Exact mode: when every input is a ``Fraction`` or an int, every function returns an exact
``Fraction`` (or int); any float input gives a float.
"""

from __future__ import annotations

from . import _validate
from ._types import Number


def expected_output_count(alpha: Number, gamma: int) -> Number:
    r"""Expected tokens emitted per round: :math:`\mathbb{E}[K] = \sum_{j=0}^{\gamma} \alpha^j`.

    Equal to :math:`(1-\alpha^{\gamma+1})/(1-\alpha)` for α < 1 and γ + 1 for α = 1.

    >>> round(expected_output_count(0.6, 2), 12)
    1.96
    >>> from fractions import Fraction as F
    >>> expected_output_count(F(3, 5), 2)
    Fraction(49, 25)
    """
    alpha = _validate.probability("alpha", alpha)
    gamma = _validate.count("gamma", gamma)
    return sum((alpha**j for j in range(gamma + 1)), start=alpha * 0)


def output_count_pmf(alpha: Number, gamma: int) -> list[Number]:
    r"""Truncated geometric law of K: :math:`P(K=k) = (1-\alpha)\alpha^{k-1}` for k ≤ γ, :math:`P(K=\gamma+1) = \alpha^\gamma`.

    Returns [P(K=1), …, P(K=γ+1)] (a list; Fractions in exact mode).

    >>> [round(v, 12) for v in output_count_pmf(0.6, 2)]
    [0.4, 0.24, 0.36]
    >>> from fractions import Fraction as F
    >>> output_count_pmf(F(3, 5), 2)
    [Fraction(2, 5), Fraction(6, 25), Fraction(9, 25)]
    """
    alpha = _validate.probability("alpha", alpha)
    gamma = _validate.count("gamma", gamma)
    return [(1 - alpha) * alpha ** (k - 1) for k in range(1, gamma + 1)] + [alpha**gamma]


def expected_wasted_proposals(alpha: Number, gamma: int) -> Number:
    r"""Draft tokens per round that never become output: :math:`\gamma - \sum_{j=1}^{\gamma}\alpha^j`.

    The rejected proposal plus every proposal after it; equals γ − (E[K] − 1).

    >>> round(expected_wasted_proposals(0.6, 2), 12)
    1.04
    >>> from fractions import Fraction as F
    >>> expected_wasted_proposals(F(3, 5), 2)
    Fraction(26, 25)
    """
    return _validate.count("gamma", gamma) - (expected_output_count(alpha, gamma) - 1)


def scenario_rate(
    expected_tokens: Number, t_draft: Number, t_verify: Number, t_overhead: Number = 0.0
) -> Number:
    r"""Tokens per second of a scenario: :math:`R = \mathbb{E}[K] / (T_{draft} + T_{verify} + T_{overhead})`.

    Times are seconds per verification round. A plain autoregressive baseline
    emitting one token per target step of t seconds is ``scenario_rate(1, 0, t)``.

    >>> round(scenario_rate(1.96, 0.002, 0.006, 0.001), 1)
    217.8
    >>> round(scenario_rate(1, 0, 0.006), 1)
    166.7
    >>> from fractions import Fraction as F
    >>> scenario_rate(F(49, 25), F(2, 1000), F(6, 1000), F(1, 1000))  # tokens/s, exact
    Fraction(1960, 9)
    """
    expected_tokens = _validate.quantity("expected_tokens", expected_tokens)
    total = sum(
        _validate.quantity(name, t)
        for name, t in (("t_draft", t_draft), ("t_verify", t_verify), ("t_overhead", t_overhead))
    )
    if total == 0:
        raise ValueError("t_draft + t_verify + t_overhead: total round time is 0; a rate needs time to pass")
    return expected_tokens / total


def break_even_verify_time(
    expected_tokens: Number, t_draft: Number, t_overhead: Number, t_baseline: Number
) -> Number:
    r"""Verification time per round at which speculation only ties the baseline.

    Solves :math:`\mathbb{E}[K]/(T_{draft}+T_{verify}+T_{overhead}) = 1/T_{baseline}` for
    :math:`T_{verify} = \mathbb{E}[K]\,T_{baseline} - T_{draft} - T_{overhead}`.
    A negative result means speculation cannot pay at any verification time.

    >>> round(break_even_verify_time(1.96, 0.002, 0.001, 0.006) * 1000, 2)  # milliseconds
    8.76
    >>> from fractions import Fraction as F
    >>> break_even_verify_time(F(49, 25), 2, 1, 6)  # in the unit of the inputs (ms)
    Fraction(219, 25)
    """
    expected_tokens = _validate.quantity("expected_tokens", expected_tokens)
    t_draft = _validate.quantity("t_draft", t_draft)
    t_overhead = _validate.quantity("t_overhead", t_overhead)
    t_baseline = _validate.quantity("t_baseline", t_baseline)
    if t_baseline == 0:
        raise ValueError("t_baseline: must be > 0")
    return expected_tokens * t_baseline - t_draft - t_overhead
