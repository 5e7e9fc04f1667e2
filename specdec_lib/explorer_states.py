r"""What the three explorers show, computed for one choice of inputs.

The p/q editor, the α–γ explorer and the timing-budget explorer are controls around these three
functions: in Jupyter each move of a control calls one of them, and the static site shows what
they returned for every option it offers. The controls, that grid of states and the widgets are
site machinery (``specdec_course.explorers``); every number they show comes from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import counting, distributions
from ._types import Number, Probabilities


@dataclass(frozen=True)
class PQState:
    """One step of strict verification for a target p and a draft q, token by token.

    ``acceptance``: a(x) = min(1, p(x)/q(x)), None (exact) or NaN (float) where q(x) = 0.
    ``kept``: min(p, q), the mass proposed and accepted. ``residual``: r, or None when p = q
    (no proposal is ever rejected). ``output``: the emitted token's law, min(p, q) + (1 − α) r.
    ``alpha``: the acceptance rate; ``rejected``: 1 − α.
    """

    acceptance: list[Number | None]
    kept: list[Number]
    residual: list[Number] | None
    output: list[Number]
    alpha: Number
    rejected: Number


def pq_state(p: Probabilities, q: Probabilities) -> PQState:
    r"""The p/q editor's state: a(x), min(p, q), r(x), the output law and α for one p and q.

    Exact for ``Fraction`` inputs, so the output equals p to the last digit:
    :math:`\min(p,q) + (1-\alpha)\,r = p`.

    >>> from fractions import Fraction as F
    >>> state = pq_state([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)])
    >>> [str(v) for v in state.acceptance], [str(v) for v in state.residual], state.alpha
    (['1', '1', '1/5'], ['1', '0', '0'], Fraction(3, 5))
    >>> state.output == [F(3, 5), F(3, 10), F(1, 10)]
    True
    >>> pq_state([F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]).residual is None  # p = q: nothing to correct
    True
    """
    alpha = distributions.acceptance_rate(p, q)
    try:
        residual = list(distributions.residual_distribution(p, q))
    except ValueError:  # p = q: the residual has no mass
        residual = None
    return PQState(
        acceptance=list(distributions.acceptance_probabilities(p, q)),
        kept=list(distributions.accepted_mass(p, q)),
        residual=residual,
        output=list(distributions.output_distribution(p, q)),
        alpha=alpha,
        rejected=1 - alpha,
    )


@dataclass(frozen=True)
class OutputCountState:
    """The law of K for one α and γ: ``pmf`` = [P(K=1), …, P(K=γ+1)], ``expected`` = E[K], ``wasted`` proposals."""

    pmf: list[Number]
    expected: Number
    wasted: Number


def output_count_state(alpha: Number, gamma: int) -> OutputCountState:
    r"""The α–γ explorer's state: the truncated-geometric pmf of K, E[K] and the wasted proposals.

    :math:`P(K=k) = (1-\alpha)\alpha^{k-1}` for k ≤ γ, :math:`P(K=\gamma+1)=\alpha^\gamma`,
    :math:`\mathbb{E}[K]=\sum_{j=0}^{\gamma}\alpha^j`, wasted proposals γ − (E[K] − 1).

    >>> from fractions import Fraction as F
    >>> state = output_count_state(F(3, 5), 2)
    >>> [str(v) for v in state.pmf], state.expected, state.wasted
    (['2/5', '6/25', '9/25'], Fraction(49, 25), Fraction(26, 25))
    """
    return OutputCountState(
        pmf=counting.output_count_pmf(alpha, gamma),
        expected=counting.expected_output_count(alpha, gamma),
        wasted=counting.expected_wasted_proposals(alpha, gamma),
    )


@dataclass(frozen=True)
class TimingState:
    """A timing budget's outcome: tokens per round, round time (s), rates (tokens/s) and the break-even.

    ``break_even``: the verification time per round at which speculation only ties the baseline;
    at or below 0 it never pays. ``speedup``: ``rate / baseline_rate``.
    """

    expected: Number
    round_time: Number
    rate: Number
    baseline_rate: Number
    speedup: Number
    break_even: Number


def timing_state(
    alpha: Number, gamma: int, t_verify: Number, t_draft_step: Number, t_overhead: Number, t_baseline: Number
) -> TimingState:
    r"""The timing-budget explorer's state: the scenario rate against the baseline, and the break-even.

    Rate :math:`R = \mathbb{E}[K]/(T_{draft}+T_{verify}+T_{overhead})` with
    :math:`T_{draft} = \gamma\,t_{draft\,step}`; baseline :math:`1/T_{baseline}`; break-even
    :math:`T_{verify} = \mathbb{E}[K]\,T_{baseline} - T_{draft} - T_{overhead}`. Times in seconds,
    every one an assumed budget, not a measurement.

    >>> state = timing_state(0.6, 2, 0.006, 0.001, 0.001, 0.006)  # the lesson's budget
    >>> round(state.rate, 1), round(state.baseline_rate, 1), round(state.break_even * 1000, 2)
    (217.8, 166.7, 8.76)
    >>> round(timing_state(0.6, 2, 0.012, 0.001, 0.001, 0.006).rate, 1)  # 12 ms verification
    130.7
    """
    tokens = counting.expected_output_count(alpha, gamma)
    t_draft = gamma * t_draft_step
    rate = counting.scenario_rate(tokens, t_draft, t_verify, t_overhead)
    baseline = counting.scenario_rate(1, 0, t_baseline)
    return TimingState(
        expected=tokens,
        round_time=t_draft + t_verify + t_overhead,
        rate=rate,
        baseline_rate=baseline,
        speedup=rate / baseline,
        break_even=counting.break_even_verify_time(tokens, t_draft, t_overhead, t_baseline),
    )
