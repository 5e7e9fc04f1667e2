"""Output per round when acceptance varies: between rounds (by prefix) or along a round.

At one prefix, Σ min(p, q) is the paper's β (Leviathan et al. 2023, Def 3.1); its α is the
expectation of β over prefixes (Cor 3.6). The iid formula E[K] = Σ αʲ lets every position
accept independently with that one α. The functions here compute E[K] without that
assumption. Exact (``Fraction`` or int) inputs give exact results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from . import _validate
from ._types import Number, Probabilities
from .counting import expected_output_count
from .distributions import acceptance_rate, accepted_mass


def expected_output_count_between_rounds(
    betas: Sequence[Number], weights: Probabilities, gamma: int
) -> Number:
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


def expected_output_count_along_round(rates: Sequence[Number]) -> Number:
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


def next_position_rate(
    p: Sequence[Any], q: Sequence[Any], next_p: Sequence[Any], next_q: Sequence[Any]
) -> Any:
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
    if acceptance_rate(p, q) == 0:
        raise ValueError(
            "p, q: acceptance rate 0, so no proposal is ever accepted and the next position is never reached"
        )
    run = run_probabilities_after_last_token(p, q, next_p, next_q, 1)
    return run[2] / run[1]


# --- which average of β is α? ---------------------------------------------------------------
# A round's acceptance is summed up by its run probabilities S_j = P(the first j proposals are
# all accepted), j = 0 … γ + 1, where S_{γ+1} is what a (γ + 1)-th proposal would have had: the
# β of the prefix the bonus token is drawn from. Every average of β a log can report, and the
# exact E[K] = Σ_{j≤γ} S_j, follow from these γ + 2 numbers.


def run_probabilities_between_rounds(betas: Sequence, weights: Sequence, gamma: int) -> list:
    r"""Run probabilities :math:`S_j = \mathbb{E}[\beta^j]`, j = 0 … γ + 1, when each round meets one β.

    A round has rate ``betas[i]`` with probability ``weights[i]`` at every position, as in
    :func:`expected_output_count_between_rounds`; the first j proposals all pass with
    probability :math:`\beta^j`.

    >>> from fractions import Fraction as F
    >>> run_probabilities_between_rounds([1, F(1, 5)], [F(1, 2), F(1, 2)], 2)
    [Fraction(1, 1), Fraction(3, 5), Fraction(13, 25), Fraction(63, 125)]
    """
    betas = [_validate.probability(f"betas[{i}]", b) for i, b in enumerate(betas)]
    weights = _validate.distribution("weights", weights)
    if len(betas) != len(weights):
        raise ValueError(f"betas, weights: length mismatch ({len(betas)} rates vs {len(weights)} weights)")
    gamma = _validate.count("gamma", gamma)
    run = [sum(w * b**j for b, w in zip(betas, weights)) for j in range(gamma + 2)]
    return run if all(_validate.is_exact(v) for v in (*betas, *weights)) else [float(s) for s in run]


def run_probabilities_after_last_token(
    p: Sequence, q: Sequence, next_p: Sequence, next_q: Sequence, gamma: int
) -> list:
    r"""Run probabilities :math:`S_j`, j = 0 … γ + 1, when each position's pair depends on the last token.

    Position 0 compares p with q; after token x the next position compares ``next_p[x]`` with
    ``next_q[x]``. An accepted proposal is x with probability min(p(x), q(x)), so the mass
    :math:`m_j(x)` = P(first j accepted, the j-th being x) evolves as
    :math:`m_{j+1}(y) = \sum_x m_j(x)\,\min(p_{y\mid x}, q_{y\mid x})` and
    :math:`S_{j+1} = \sum_y m_{j+1}(y)`.

    >>> from fractions import Fraction as F
    >>> p, q = [F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]
    >>> run_probabilities_after_last_token(p, q, [p, [1, 0]], [q, [0, 1]], 1)  # after token 1 they disagree
    [Fraction(1, 1), Fraction(1, 1), Fraction(1, 2)]
    """
    gamma = _validate.count("gamma", gamma)
    mass = accepted_mass(p, q)
    if len(next_p) != len(mass) or len(next_q) != len(mass):
        raise ValueError(
            f"next_p, next_q: need one row per token ({len(mass)}), got {len(next_p)} and {len(next_q)}"
        )
    kept_after: dict[int, Any] = {}  # min(p, q) after token x, computed only for tokens that can be accepted

    def kept(x: int) -> Any:
        if x not in kept_after:
            kept_after[x] = accepted_mass(next_p[x], next_q[x])
        return kept_after[x]

    zero = sum(mass) * 0
    run = [zero + 1, sum(mass)]
    for _ in range(gamma):
        step = [zero] * len(mass)
        for x, m in enumerate(mass):
            if m > 0:
                step = [s + m * k for s, k in zip(step, kept(x))]
        mass = step
        run.append(sum(mass))
    return run if _validate.is_exact(zero) else [float(s) for s in run]


@dataclass(frozen=True)
class AlphaEstimates:
    r"""Four averages of β over one process, each the α some log would report, and the exact E[K].

    ``round_start``: β at the prefix each round starts from, :math:`S_1`.
    ``per_check``: β averaged over the proposals the target checks, = accepted ÷ checked,
    :math:`\sum_{j=1}^{\gamma} S_j / \sum_{j=0}^{\gamma-1} S_j`.
    ``per_position``: β averaged over the prefixes of every emitted token (the text's positions),
    :math:`\sum_{j=1}^{\gamma+1} S_j / \sum_{j=0}^{\gamma} S_j`.
    ``accepted_per_drafted``: accepted ÷ drafted, :math:`\sum_{j=1}^{\gamma} S_j / \gamma`; exact
    for :math:`\mathbb{E}[K] = 1 + \gamma \cdot` (this ratio), but not an estimate of α even when
    acceptance is iid. ``expected_output_count``: :math:`\mathbb{E}[K] = \sum_{j=0}^{\gamma} S_j`.
    """

    round_start: object
    per_check: object
    per_position: object
    accepted_per_drafted: object
    expected_output_count: object
    gamma: int

    ESTIMATORS: ClassVar[tuple[str, ...]] = (
        "round_start",
        "per_check",
        "per_position",
        "accepted_per_drafted",
    )

    def iid_prediction(self, estimator: str) -> object:
        """The iid formula Σ αʲ with α = the named estimate (one of ``ESTIMATORS``)."""
        if estimator not in self.ESTIMATORS:
            raise ValueError(f"estimator: one of {self.ESTIMATORS}, got {estimator!r}")
        return expected_output_count(getattr(self, estimator), self.gamma)


def alpha_estimates(run: Sequence) -> AlphaEstimates:
    r"""The four averages of β, and the exact E[K], from run probabilities :math:`S_0 … S_{\gamma+1}`.

    ``run[j]`` is P(the first j proposals are all accepted), j = 0 … γ + 1, with ``run[γ + 1]``
    the rate a (γ + 1)-th proposal would have (see :class:`AlphaEstimates` for each formula).
    Under iid acceptance (:math:`S_j = \alpha^j`) the first three all equal α.

    >>> from fractions import Fraction as F
    >>> e = alpha_estimates(run_probabilities_between_rounds([1, F(1, 5)], [F(1, 2), F(1, 2)], 2))
    >>> e.round_start, e.per_check, e.per_position, e.accepted_per_drafted, e.expected_output_count
    (Fraction(3, 5), Fraction(7, 10), Fraction(203, 265), Fraction(14, 25), Fraction(53, 25))
    >>> e.iid_prediction("per_check")  # over-predicts the exact 53/25
    Fraction(219, 100)
    """
    if len(run) < 3:
        raise ValueError(f"run: need S_0 … S_(γ+1) for some γ ≥ 1, got {len(run)} values")
    run = [_validate.probability(f"run[{j}]", s) for j, s in enumerate(run)]
    if run[0] != 1 or any(later > earlier for earlier, later in zip(run, run[1:])):
        raise ValueError(f"run: must start at 1 and never increase, got {run}")
    gamma = len(run) - 2
    expected = sum(run[: gamma + 1])
    exact = all(_validate.is_exact(s) for s in run)

    def value(v: object) -> object:
        return v if exact else float(v)  # type: ignore[arg-type]

    return AlphaEstimates(
        round_start=value(run[1]),
        per_check=value(sum(run[1 : gamma + 1]) / sum(run[:gamma])),
        per_position=value(sum(run[1:]) / expected),
        accepted_per_drafted=value(sum(run[1 : gamma + 1]) / gamma),
        expected_output_count=value(expected),
        gamma=gamma,
    )


def iid_equivalent_alpha(expected_K: float, gamma: int, tolerance: float = 1e-12) -> float:
    r"""The one α with :math:`\sum_{j=0}^{\gamma}\alpha^j` = ``expected_K`` (bisection; a float).

    It exists for any E[K] in [1, γ + 1] because the sum rises with α, but it is fitted to the
    answer: it changes with γ and is in general none of the averages of β in :class:`AlphaEstimates`.

    >>> round(iid_equivalent_alpha(1.96, 2), 9)
    0.6
    """
    gamma = _validate.count("gamma", gamma)
    if gamma == 0 or not 1 <= expected_K <= gamma + 1:
        raise ValueError(
            f"expected_K: need a value in [1, γ + 1] with γ ≥ 1, got {expected_K} for γ = {gamma}"
        )
    low, high = 0.0, 1.0
    while high - low > tolerance:
        middle = (low + high) / 2
        low, high = (middle, high) if expected_output_count(middle, gamma) < expected_K else (low, middle)
    return (low + high) / 2
