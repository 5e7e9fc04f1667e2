"""The speed-up model: what a round's expected output buys in wall time and in arithmetic.

Leviathan et al. (2023), Theorems 3.8 and 3.11, under the same iid assumption as ``counting``
(every draft position accepted with probability α), the γ that maximises the expected speed-up,
and the roofline model of a target call behind Theorem 3.8's "verifying costs one target step".
Exact mode as in ``counting``: exact inputs give an exact ``Fraction``.
"""

from __future__ import annotations

from . import _validate
from ._types import Number


def improvement_factor(alpha: Number, gamma: int, c: Number) -> Number:
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
    c = _validate.quantity("c", c)
    if alpha == 1:
        return (gamma + 1) / (gamma * c + 1)
    return (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))


def operations_factor(alpha: Number, gamma: int, c_hat: Number) -> Number:
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
    c_hat = _validate.quantity("c_hat", c_hat)
    if alpha == 1:
        return (gamma * c_hat + gamma + 1) / (gamma + 1)
    return (1 - alpha) * (gamma * c_hat + gamma + 1) / (1 - alpha ** (gamma + 1))


def optimal_gamma(alpha: Number, c: Number, max_gamma: int = 64) -> int:
    r"""The γ in 0..max_gamma that maximises ``improvement_factor(alpha, γ, c)``; 0 when no γ ≥ 1 pays.

    γ = 0 is plain decoding (factor 1), so the answer is 0 exactly when every γ ≥ 1 has a factor
    of at most 1: don't speculate. Ties go to the smallest γ. With γ = 1 the factor is
    :math:`(1+\alpha)/(1+c)`, so some γ pays whenever c < α (Leviathan et al. 2023, Cor 3.9).

    >>> optimal_gamma(0.8, 0.05)
    8
    >>> optimal_gamma(0.6, 0.5)  # a slow draft at low acceptance: one proposal is best
    1
    >>> optimal_gamma(0.5, 0.6)  # the draft costs more than its acceptance returns: don't speculate
    0
    """
    max_gamma = _validate.count("max_gamma", max_gamma, minimum=1)
    factors = [improvement_factor(alpha, g, c) for g in range(max_gamma + 1)]
    return factors.index(max(factors))


def forward_pass_time(
    positions: int,
    weight_bytes: Number,
    bandwidth: Number,
    flops_per_position: Number,
    peak_flops: Number,
    cache_bytes: Number = 0,
) -> Number:
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
    memory = _validate.quantity("weight_bytes", weight_bytes) + _validate.quantity("cache_bytes", cache_bytes)
    bandwidth = _validate.quantity("bandwidth", bandwidth)
    peak_flops = _validate.quantity("peak_flops", peak_flops)
    if bandwidth == 0 or peak_flops == 0:
        raise ValueError("bandwidth, peak_flops: must be > 0")
    return max(
        memory / bandwidth,
        positions * _validate.quantity("flops_per_position", flops_per_position) / peak_flops,
    )
