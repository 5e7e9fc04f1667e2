"""Statistical checks that emitted tokens follow the target: chi-square tests, pooled honestly.

A correct verifier passes these tests with probability 1 − (the threshold the caller
picks); a wrong one fails them once there are enough samples. Callers fix seeds, so
each run of a test is repeatable, and state their threshold as the false-fail rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ._types import Model, Probabilities

MIN_EXPECTED = 5.0  # bins expected to hold fewer samples are pooled (chi-square needs ~5 per bin)


def chi_square_statistic(
    observed: Sequence[float] | np.ndarray, expected_probs: Probabilities, min_expected: float = MIN_EXPECTED
) -> tuple[float, int]:
    r"""Pearson's :math:`X^2 = \sum_i (O_i - E_i)^2 / E_i` with sparse bins pooled; returns (X², dof).

    An observation in a bin of probability 0 is impossible under the hypothesis:
    the statistic is then ``inf``. Fewer than two usable bins give (0.0, 0).

    >>> chi_square_statistic([50, 50], [0.5, 0.5])
    (0.0, 1)
    >>> chi_square_statistic([1, 9], [0.0, 1.0])
    (inf, 1)
    """
    observed = np.asarray(observed, dtype=float)
    probs = np.asarray(expected_probs, dtype=float)
    n = observed.sum()
    if np.any(observed[probs == 0] > 0):
        return float("inf"), 1
    expected = n * probs
    big = expected >= min_expected
    obs_bins = list(observed[big])
    exp_bins = list(expected[big])
    if expected[~big].sum() > 0:  # pool the sparse bins into one
        obs_bins.append(observed[~big].sum())
        exp_bins.append(expected[~big].sum())
    if len(exp_bins) < 2:
        return 0.0, 0
    o, e = np.array(obs_bins), np.array(exp_bins)
    return float(((o - e) ** 2 / e).sum()), len(e) - 1


def chi_square_pvalue(observed: Sequence[float] | np.ndarray, expected_probs: Probabilities) -> float:
    """P-value of Pearson's goodness-of-fit test of counts against a distribution.

    >>> round(chi_square_pvalue([48, 52], [0.5, 0.5]), 3)
    0.689
    >>> chi_square_pvalue([0, 100], [0.5, 0.5]) < 1e-20
    True
    """
    statistic, dof = chi_square_statistic(observed, expected_probs)
    return combined_pvalue([(statistic, dof)])


def combined_pvalue(parts: Sequence[tuple[float, int]]) -> float:
    """One p-value for several independent chi-square tests: add the statistics and the dofs.

    >>> combined_pvalue([(0.0, 1), (0.0, 2)])
    1.0
    """
    statistic = sum(s for s, _ in parts)
    dof = sum(d for _, d in parts)
    if statistic == float("inf"):
        return 0.0
    if dof == 0:
        return 1.0
    from scipy.special import chdtrc  # imported here: scipy is slow to import and rarely needed

    return float(chdtrc(dof, statistic))


def emitted_law_pvalues(
    emissions: Sequence[Sequence[int]], target: Model, prefix: Sequence[int] = ()
) -> list[float]:
    """Per output position j, the p-value that token j follows the target given the tokens before it.

    ``emissions`` is a sequence of token tuples, each what one round emitted from
    ``prefix``; ``target(prefix) -> probability vector`` is the target model. Within
    a round, token j is emitted only after tokens 0..j-1 were accepted drafts, and
    then it must follow ``target(prefix + tokens[:j])``. Rounds are grouped by the
    tokens before j; the groups' chi-square statistics are added into one test.

    >>> target = lambda prefix: [0.5, 0.5]
    >>> rng = np.random.default_rng(0)
    >>> draws = [tuple(rng.integers(0, 2, size=2)) for _ in range(400)]
    >>> [p > 0.01 for p in emitted_law_pvalues(draws, target)]
    [True, True]
    """
    prefix = tuple(prefix)
    groups: defaultdict[tuple[int, tuple[int, ...]], defaultdict[int, int]] = defaultdict(
        lambda: defaultdict(int)
    )  # (j, context) -> token -> count
    for tokens in emissions:
        tokens = tuple(int(t) for t in tokens)
        for j, token in enumerate(tokens):
            groups[j, tokens[:j]][token] += 1
    positions = 1 + max((j for j, _ in groups), default=-1)
    parts: defaultdict[int, list[tuple[float, int]]] = defaultdict(list)
    for (j, context), counter in groups.items():
        probs = np.asarray(target(prefix + context), dtype=float)
        observed = np.zeros(len(probs))
        for token, n in counter.items():
            if not 0 <= token < len(probs):
                return [0.0] * positions  # a token outside the vocabulary is impossible
            observed[token] = n
        parts[j].append(chi_square_statistic(observed, probs))
    return [combined_pvalue(parts[j]) for j in range(positions)]


def emitted_count_pvalue(emissions: Sequence[Sequence[int]], count_pmf: Probabilities) -> float:
    """P-value that the number of tokens K per round follows ``count_pmf`` = [P(K=1), …, P(K=γ+1)].

    A round with a count outside 1..γ+1 is impossible under the hypothesis (p-value 0).

    >>> emitted_count_pvalue([(0,), (0, 1)] * 50, [0.5, 0.5])
    1.0
    >>> emitted_count_pvalue([(0,)] * 100, [0.5, 0.5]) < 1e-20
    True
    """
    counts = np.bincount([len(tokens) for tokens in emissions], minlength=len(count_pmf) + 1)
    if counts[0] or len(counts) > len(count_pmf) + 1:
        return 0.0
    return chi_square_pvalue(counts[1:], count_pmf)
