"""The acceptance numbers serving systems log, translated into one another.

One word, "acceptance", names several numbers. All of them follow from γ and the run
probabilities :math:`S_j` = P(the first j drafts of a round are all accepted), j = 0 … γ
(:math:`S_0 = 1`), which a log gives as counts of rounds and a model as per-position rates.
``acceptance_metrics`` takes either and returns every reported form; exact inputs (ints,
``Fraction``) give exact ``Fraction`` results. Going back from one reported number to the others
needs an assumption: ``from_reported`` takes iid acceptance (one α at every position), the
model of ``counting``. (``varying_acceptance.alpha_estimates`` gives the averages of β a model's
exact run probabilities imply, including the one a log cannot show: β at the bonus position.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from . import _validate
from ._types import Number
from .varying_acceptance import iid_equivalent_alpha


@dataclass(frozen=True)
class AcceptanceMetrics:
    r"""Every common form of "acceptance" for one process with γ drafts per round.

    ``per_proposal``: accepted ÷ drafts the target checked, :math:`\sum_{j=1}^{\gamma} S_j / \sum_{j=0}^{\gamma-1} S_j`
    (a round checks drafts up to its first rejection); under iid acceptance this is α itself
    (Leviathan et al. 2023, Def 3.1 and §3.1).
    ``accepted_per_drafted``: accepted ÷ drafted, :math:`\sum_{j=1}^{\gamma} S_j / \gamma` (vLLM's "draft
    acceptance rate", SGLang's "accept rate", llama.cpp's "draft acceptance").
    ``mean_accepted``: accepted drafts per round, :math:`\sum_{j=1}^{\gamma} S_j` (0 … γ).
    ``mean_emitted``: tokens per round with the correction or bonus token, E[K] = 1 + ``mean_accepted``
    (vLLM's and llama.cpp's "mean acceptance length", SGLang's "accept length").
    ``system_efficiency``: E[K] / (γ + 1), emitted ÷ the most a round can emit (vLLM's v0 metric).
    ``by_position``: :math:`S_1 … S_\gamma`, the share of rounds whose draft j was accepted (vLLM's and
    llama.cpp's "acceptance rate per position"). ``conditional``: :math:`S_j / S_{j-1}`, draft j's
    acceptance among rounds that reached it (None where none did).
    """

    gamma: int
    per_proposal: object
    accepted_per_drafted: object
    mean_accepted: object
    mean_emitted: object
    system_efficiency: object
    by_position: tuple
    conditional: tuple

    def as_dict(self) -> dict:
        """Name -> value, positions spread over numbered entries (for tables)."""
        out = {
            name: getattr(self, name)
            for name in (
                "per_proposal",
                "accepted_per_drafted",
                "mean_accepted",
                "mean_emitted",
                "system_efficiency",
            )
        }
        for j, (s, c) in enumerate(zip(self.by_position, self.conditional), start=1):
            out[f"by_position[{j}]"], out[f"conditional[{j}]"] = s, c
        return out


def run_probabilities(
    *, rates: Sequence[Number] | None = None, outcomes: Sequence[int] | None = None, gamma: int | None = None
) -> list[Number]:
    r"""Run probabilities :math:`S_0 … S_\gamma` from per-position rates or from logged rounds.

    ``rates[i]``: the probability that draft i + 1 is accepted given drafts 1 … i were
    (:math:`S_j = \prod_{i<j} \text{rates}[i]`; γ = ``len(rates)``). ``outcomes``: the number
    of accepted drafts of each logged round, 0 … ``gamma`` (:math:`S_j` = the share of rounds
    with at least j). Exact inputs give ``Fraction`` values.

    >>> from fractions import Fraction as F
    >>> run_probabilities(rates=[F(4, 5), F(1, 2)])
    [Fraction(1, 1), Fraction(4, 5), Fraction(2, 5)]
    >>> run_probabilities(outcomes=[0, 2, 1, 2], gamma=2)
    [Fraction(1, 1), Fraction(3, 4), Fraction(1, 2)]
    """
    if (rates is None) == (outcomes is None):
        raise ValueError("rates, outcomes: give exactly one of them")
    if rates is not None:
        if gamma is not None and gamma != len(rates):
            raise ValueError(f"gamma: {gamma} disagrees with the {len(rates)} rates given")
        survive: Number = Fraction(1)
        run: list[Number] = [survive]
        for i, rate in enumerate(rates):
            survive = survive * _validate.probability(f"rates[{i}]", rate)
            run.append(survive)
        return run if all(_validate.is_exact(r) for r in run) else [float(r) for r in run]
    assert outcomes is not None  # exactly one of rates, outcomes was given
    if gamma is None:
        raise ValueError("gamma: needed with outcomes (a round may accept 0 … γ drafts)")
    gamma = _validate.count("gamma", gamma, minimum=1)
    counts = Counter(_validate.count(f"outcomes[{i}]", n) for i, n in enumerate(outcomes))
    if not counts:
        raise ValueError("outcomes: need at least one round")
    if max(counts) > gamma:
        raise ValueError(f"outcomes: a round accepted {max(counts)} drafts, more than γ = {gamma}")
    rounds = sum(counts.values())
    return [Fraction(sum(c for n, c in counts.items() if n >= j), rounds) for j in range(gamma + 1)]


def acceptance_metrics(
    *, rates: Sequence[Number] | None = None, outcomes: Sequence[int] | None = None, gamma: int | None = None
) -> AcceptanceMetrics:
    r"""Every reported form of acceptance (``AcceptanceMetrics``) from per-position rates or logged rounds.

    Give ``rates`` (the conditional acceptance of each draft position, γ of them) or ``outcomes``
    (accepted drafts per logged round) with ``gamma``; see ``run_probabilities``.

    >>> from fractions import Fraction as F
    >>> m = acceptance_metrics(rates=[F(3, 5)] * 2)  # iid, α = 3/5, γ = 2
    >>> m.per_proposal, m.accepted_per_drafted, m.mean_emitted, m.system_efficiency
    (Fraction(3, 5), Fraction(12, 25), Fraction(49, 25), Fraction(49, 75))
    >>> acceptance_metrics(outcomes=[0, 2, 1, 2], gamma=2).mean_accepted
    Fraction(5, 4)
    """
    run = run_probabilities(rates=rates, outcomes=outcomes, gamma=gamma)
    gamma = len(run) - 1
    if gamma == 0:
        raise ValueError("rates: need at least one draft position (γ ≥ 1)")
    accepted = sum(run[1:])
    checked = sum(run[:-1])
    return AcceptanceMetrics(
        gamma=gamma,
        per_proposal=accepted / checked,
        accepted_per_drafted=accepted / gamma,
        mean_accepted=accepted,
        mean_emitted=1 + accepted,
        system_efficiency=(1 + accepted) / (gamma + 1),
        by_position=tuple(run[1:]),
        conditional=tuple(later / earlier if earlier > 0 else None for earlier, later in zip(run, run[1:])),
    )


# reported form -> E[K] from its value v and γ, under any acceptance process
REPORTED: dict[str, Callable[[Number, int], Number] | None] = {
    "per_proposal": None,  # α itself under iid acceptance
    "accepted_per_drafted": lambda v, gamma: 1 + gamma * v,
    "mean_accepted": lambda v, gamma: 1 + v,
    "mean_emitted": lambda v, gamma: v,
    "system_efficiency": lambda v, gamma: (gamma + 1) * v,
}


def from_reported(name: str, value: Number, gamma: int) -> AcceptanceMetrics:
    r"""Every form of acceptance implied by one reported number, under iid acceptance.

    ``name`` is one of ``REPORTED``. All but ``per_proposal`` fix E[K] whatever the process
    (e.g. accepted ÷ drafted = a gives E[K] = 1 + γa); iid acceptance then fixes α by
    :math:`\sum_{j=0}^{\gamma}\alpha^j` = E[K] (``iid_equivalent_alpha``, bisection, so floats),
    and α gives the rest. ``per_proposal`` is α itself under iid acceptance (exact inputs stay exact).

    >>> m = from_reported("accepted_per_drafted", 0.3, 4)  # "acceptance 0.3" with γ = 4 ...
    >>> round(m.mean_emitted, 6), round(m.per_proposal, 3)  # ... is 2.2 tokens per round, α ≈ 0.57
    (2.2, 0.574)
    >>> from fractions import Fraction as F
    >>> from_reported("per_proposal", F(4, 5), 2).mean_emitted
    Fraction(61, 25)
    """
    if name not in REPORTED:
        raise ValueError(f"name: one of {sorted(REPORTED)}, got {name!r}")
    gamma = _validate.count("gamma", gamma, minimum=1)
    if name == "per_proposal":
        alpha = _validate.probability("value", value)
    else:
        to_expected_k = REPORTED[name]
        assert to_expected_k is not None  # only per_proposal has none
        expected_k = to_expected_k(value, gamma)
        if not 1 <= expected_k <= gamma + 1:
            raise ValueError(
                f"value: {value} implies E[K] = {expected_k}, outside [1, γ + 1] = [1, {gamma + 1}]"
            )
        alpha = iid_equivalent_alpha(float(expected_k), gamma)
    return acceptance_metrics(rates=[alpha] * gamma)
