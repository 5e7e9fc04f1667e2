"""Output per round when acceptance varies: between rounds (by prefix) or along a round.

At one prefix, Σ min(p, q) is the paper's β (Leviathan et al. 2023, Def 3.1); its α is the
expectation of β over prefixes (Cor 3.6). The iid formula E[K] = Σ αʲ lets every position
accept independently with that one α. The functions here compute E[K] without that
assumption. Exact (``Fraction`` or int) inputs give exact results.
"""

from __future__ import annotations

from . import _validate
from .counting import expected_output_count
from .distributions import acceptance_rate, accepted_mass


def expected_output_count_between_rounds(betas, weights, gamma):
    r"""E[K] when each round meets one acceptance rate β, drawn anew per round: :math:`\sum_{j=0}^{\gamma}\mathbb{E}[\beta^j]`.

    A round has rate ``betas[i]`` with probability ``weights[i]``; inside the round every
    position accepts independently with that rate. Because :math:`\beta^j` is convex,
    Jensen's inequality gives :math:`\mathbb{E}[\beta^j] \ge (\mathbb{E}\beta)^j`, so the iid
    formula with α = E[β] can only under-predict this E[K].

    >>> from fractions import Fraction as F
    >>> expected_output_count_between_rounds([1, F(1, 5)], [F(1, 2), F(1, 2)], 2)  # E[β] = 3/5
    Fraction(53, 25)
    >>> expected_output_count(F(3, 5), 2)  # the iid formula with α = E[β] = 3/5
    Fraction(49, 25)
    """
    betas = [_validate.probability(f"betas[{i}]", b) for i, b in enumerate(betas)]
    weights = _validate.distribution("weights", weights)
    if len(betas) != len(weights):
        raise ValueError(f"betas, weights: length mismatch ({len(betas)} rates vs {len(weights)} weights)")
    total = sum(w * expected_output_count(b, gamma) for b, w in zip(betas, weights))
    exact = all(_validate.is_exact(v) for v in (*betas, *weights))
    return total if exact else float(total)


def expected_output_count_along_round(rates):
    r"""E[K] when position i accepts with its own rate :math:`\alpha_i`: :math:`\sum_{j=0}^{\gamma}\prod_{i<j}\alpha_i`.

    ``rates[i]`` is the probability that proposal i is accepted given that proposals
    0 … i−1 were; γ = ``len(rates)``. Equal rates give the iid :math:`\sum_j \alpha^j`.

    >>> from fractions import Fraction as F
    >>> expected_output_count_along_round([F(3, 5), F(5, 12)])  # 1 + 3/5 + (3/5)(5/12)
    Fraction(37, 20)
    >>> expected_output_count_along_round([F(3, 5), F(3, 5)]) == expected_output_count(F(3, 5), 2)
    True
    """
    rates = [_validate.probability(f"rates[{i}]", a) for i, a in enumerate(rates)]
    total, survive = 1, 1
    for rate in rates:
        survive = survive * rate
        total = total + survive
    return total if all(_validate.is_exact(a) for a in rates) else float(total)


def next_position_rate(p, q, next_p, next_q):
    r"""Acceptance rate of the next proposal, given this one was accepted, when the next pair depends on the token.

    An accepted proposal is token x with probability :math:`\min(p(x), q(x))/\beta(p, q)`,
    and the next position then compares ``next_p[x]`` with ``next_q[x]``:
    :math:`\alpha_{\text{next}} = \sum_x \frac{\min(p(x), q(x))}{\beta(p, q)}\,\beta(p_{\cdot\mid x}, q_{\cdot\mid x})`.
    Tokens the draft never proposes (q(x) = 0) may have any row.

    >>> from fractions import Fraction as F
    >>> p, q = [F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]
    >>> next_position_rate(p, q, [p, [1, 0]], [q, [0, 1]])  # after token 1 the models disagree
    Fraction(1, 2)
    """
    beta = acceptance_rate(p, q)
    if beta == 0:
        raise ValueError(
            "p, q: acceptance rate 0, so no proposal is ever accepted and the next position is never reached"
        )
    mass = accepted_mass(p, q)
    if len(next_p) != len(mass) or len(next_q) != len(mass):
        raise ValueError(
            f"next_p, next_q: need one row per token ({len(mass)}), got {len(next_p)} and {len(next_q)}"
        )
    return sum(m / beta * acceptance_rate(next_p[x], next_q[x]) for x, m in enumerate(mass) if m > 0)
