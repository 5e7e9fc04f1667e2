"""Counting output per round and turning it into rates: K, E[K], scenario rates, the paper's factors.

Under the iid assumption every draft position is accepted independently with the
same probability α. That is a modelling assumption (Leviathan et al. 2023, §3.1),
not a property of real prefixes; these functions compute what follows from it.
An exact (``Fraction`` or int) α gives exact results.
"""

from __future__ import annotations

from . import _validate


def expected_output_count(alpha, gamma):
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


def output_count_pmf(alpha, gamma):
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


def expected_wasted_proposals(alpha, gamma):
    r"""Draft tokens per round that never become output: :math:`\gamma - \sum_{j=1}^{\gamma}\alpha^j`.

    The rejected proposal plus every proposal after it; equals γ − (E[K] − 1).

    >>> round(expected_wasted_proposals(0.6, 2), 12)
    1.04
    """
    return _validate.count("gamma", gamma) - (expected_output_count(alpha, gamma) - 1)


def scenario_rate(expected_tokens, t_draft, t_verify, t_overhead=0.0):
    r"""Tokens per second of a scenario: :math:`R = \mathbb{E}[K] / (T_{draft} + T_{verify} + T_{overhead})`.

    Times are seconds per verification round. A plain autoregressive baseline
    emitting one token per target step of t seconds is ``scenario_rate(1, 0, t)``.

    >>> round(scenario_rate(1.96, 0.002, 0.006, 0.001), 1)
    217.8
    >>> round(scenario_rate(1, 0, 0.006), 1)
    166.7
    """
    expected_tokens = _validate.nonnegative("expected_tokens", expected_tokens)
    total = sum(_validate.nonnegative(name, t) for name, t in
                (("t_draft", t_draft), ("t_verify", t_verify), ("t_overhead", t_overhead)))
    if total == 0:
        raise ValueError("t_draft + t_verify + t_overhead: total round time is 0; a rate needs time to pass")
    return expected_tokens / total


def break_even_verify_time(expected_tokens, t_draft, t_overhead, t_baseline):
    r"""Verification time per round at which speculation only ties the baseline.

    Solves :math:`\mathbb{E}[K]/(T_{draft}+T_{verify}+T_{overhead}) = 1/T_{baseline}` for
    :math:`T_{verify} = \mathbb{E}[K]\,T_{baseline} - T_{draft} - T_{overhead}`.
    A negative result means speculation cannot pay at any verification time.

    >>> round(break_even_verify_time(1.96, 0.002, 0.001, 0.006) * 1000, 2)  # milliseconds
    8.76
    """
    expected_tokens = _validate.nonnegative("expected_tokens", expected_tokens)
    t_draft = _validate.nonnegative("t_draft", t_draft)
    t_overhead = _validate.nonnegative("t_overhead", t_overhead)
    t_baseline = _validate.nonnegative("t_baseline", t_baseline)
    if t_baseline == 0:
        raise ValueError("t_baseline: must be > 0")
    return expected_tokens * t_baseline - t_draft - t_overhead


def improvement_factor(alpha, gamma, c):
    r"""Expected wall-time speedup over plain decoding, Leviathan et al. (2023) Thm 3.8.

    :math:`\frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c+1)}`, with the α = 1 limit
    :math:`\frac{\gamma+1}{\gamma c+1}`; c is the cost of one draft step relative to
    one target step, and verifying γ+1 positions is assumed to cost one target step.

    >>> round(improvement_factor(0.6, 2, 0), 2)
    1.96
    >>> improvement_factor(1, 3, 0)
    4.0
    """
    alpha = float(_validate.probability("alpha", alpha))
    gamma = _validate.count("gamma", gamma)
    c = _validate.nonnegative("c", c)
    if alpha == 1:
        return (gamma + 1) / (gamma * c + 1)
    return (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))


def operations_factor(alpha, gamma, c_hat):
    r"""Expected arithmetic operations relative to plain decoding, Leviathan et al. (2023) Thm 3.11.

    :math:`\frac{(1-\alpha)(\gamma\hat c+\gamma+1)}{1-\alpha^{\gamma+1}}`, with the α = 1 limit
    :math:`\frac{\gamma\hat c+\gamma+1}{\gamma+1}`; ĉ is the draft's operations per token
    relative to the target's.

    >>> round(operations_factor(0.6, 2, 0), 2)
    1.53
    """
    alpha = float(_validate.probability("alpha", alpha))
    gamma = _validate.count("gamma", gamma)
    c_hat = _validate.nonnegative("c_hat", c_hat)
    if alpha == 1:
        return (gamma * c_hat + gamma + 1) / (gamma + 1)
    return (1 - alpha) * (gamma * c_hat + gamma + 1) / (1 - alpha ** (gamma + 1))


def optimal_gamma(alpha, c, max_gamma=64):
    r"""The integer γ in 1..max_gamma that maximises ``improvement_factor(alpha, γ, c)`` (smallest on ties).

    >>> optimal_gamma(0.8, 0.05)
    8
    >>> optimal_gamma(0.6, 0.5)  # a slow draft at low acceptance: one proposal is best
    1
    """
    max_gamma = _validate.count("max_gamma", max_gamma, minimum=1)
    factors = [improvement_factor(alpha, g, c) for g in range(1, max_gamma + 1)]
    return 1 + factors.index(max(factors))

