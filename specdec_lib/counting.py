"""Counting output per round and turning it into rates: K, E[K], scenario rates, the paper's factors.

Under the iid assumption every draft position is accepted independently with the
same probability α. That is a modelling assumption (Leviathan et al. 2023, §3.1),
not a property of real prefixes; these functions compute what follows from it.
Exact mode: when every input is a ``Fraction`` or an int, every function returns an exact
``Fraction`` (or int); any float input gives a float.
"""

from __future__ import annotations

from fractions import Fraction

from . import _validate


def _nonnegative(name, value):
    """A checked number >= 0, kept exact (``Fraction``) when it is a Fraction or int."""
    checked = _validate.nonnegative(name, value)
    return Fraction(value) if _validate.is_exact(value) else checked


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
    >>> from fractions import Fraction as F
    >>> expected_wasted_proposals(F(3, 5), 2)
    Fraction(26, 25)
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
    >>> from fractions import Fraction as F
    >>> scenario_rate(F(49, 25), F(2, 1000), F(6, 1000), F(1, 1000))  # tokens/s, exact
    Fraction(1960, 9)
    """
    expected_tokens = _nonnegative("expected_tokens", expected_tokens)
    total = sum(
        _nonnegative(name, t)
        for name, t in (("t_draft", t_draft), ("t_verify", t_verify), ("t_overhead", t_overhead))
    )
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
    >>> from fractions import Fraction as F
    >>> break_even_verify_time(F(49, 25), 2, 1, 6)  # in the unit of the inputs (ms)
    Fraction(219, 25)
    """
    expected_tokens = _nonnegative("expected_tokens", expected_tokens)
    t_draft = _nonnegative("t_draft", t_draft)
    t_overhead = _nonnegative("t_overhead", t_overhead)
    t_baseline = _nonnegative("t_baseline", t_baseline)
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
    >>> from fractions import Fraction as F
    >>> improvement_factor(F(3, 5), 2, 0)
    Fraction(49, 25)
    >>> improvement_factor(1, 3, 0)
    Fraction(4, 1)
    """
    alpha = _validate.probability("alpha", alpha)
    gamma = _validate.count("gamma", gamma)
    c = _nonnegative("c", c)
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
    >>> from fractions import Fraction as F
    >>> operations_factor(F(3, 5), 2, 0)
    Fraction(75, 49)
    """
    alpha = _validate.probability("alpha", alpha)
    gamma = _validate.count("gamma", gamma)
    c_hat = _nonnegative("c_hat", c_hat)
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


def forward_pass_time(positions, weight_bytes, bandwidth, flops_per_position, peak_flops, cache_bytes=0):
    r"""Roofline model of one target call that scores ``positions`` tokens at batch 1, in seconds.

    :math:`T(n) = \max\big((W + C)/B,\; n\,F/P\big)`: the call must read the weights W (and the
    KV cache C) from memory once, at bandwidth B bytes/s, and do F operations per position at
    peak P operations/s. While the first term dominates, scoring γ+1 positions costs about as
    much as scoring one, which is why a target call can verify γ drafts for the price of one
    decoding step (the assumption behind Leviathan et al. 2023, Thm 3.8). A model, not a measurement.

    >>> t1 = forward_pass_time(1, 14e9, 3e12, 14e9, 1e15)   # 7B parameters in 16 bits, assumed machine
    >>> round(t1 * 1e3, 2), forward_pass_time(5, 14e9, 3e12, 14e9, 1e15) == t1
    (4.67, True)
    >>> from fractions import Fraction as F
    >>> forward_pass_time(5, 14, 3, 1, 1)  # exact for exact inputs
    Fraction(5, 1)
    """
    positions = _validate.count("positions", positions, minimum=1)
    memory = _nonnegative("weight_bytes", weight_bytes) + _nonnegative("cache_bytes", cache_bytes)
    bandwidth = _nonnegative("bandwidth", bandwidth)
    peak_flops = _nonnegative("peak_flops", peak_flops)
    if bandwidth == 0 or peak_flops == 0:
        raise ValueError("bandwidth, peak_flops: must be > 0")
    return max(
        memory / bandwidth, positions * _nonnegative("flops_per_position", flops_per_position) / peak_flops
    )
