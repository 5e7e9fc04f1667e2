"""One strict speculative-sampling round: accept a prefix of the drafts, then one correction or bonus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import _validate
from ._types import Rows, Seed
from .distributions import correction_distribution
from .sampling import sample_token


@dataclass(frozen=True)
class VerifiedRound:
    """What one verification round emits.

    ``tokens``: accepted draft prefix plus one correction or bonus token (1..γ+1 tokens).
    ``num_accepted``: how many draft tokens were accepted (0..γ).
    ``bonus``: True when every draft was accepted and the last token came from the target's last row.
    """

    tokens: tuple[int, ...]
    num_accepted: int
    bonus: bool


def verify(
    draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows, rng: Seed = None
) -> VerifiedRound:
    r"""Verify γ draft tokens against the target, as in Leviathan et al. (2023), Algorithm 1.

    For i = 0, 1, …: accept draft token x = ``draft_tokens[i]`` when a fresh uniform
    u satisfies u < p_i(x)/q_i(x), i.e. with probability :math:`\min(1, p_i(x)/q_i(x))`.
    At the first rejection emit one correction drawn from the residual
    :math:`r_i = [p_i - q_i]_+ / \sum [p_i - q_i]_+` and stop; later drafts are discarded
    (``correction_distribution``: if p_i and q_i agree up to float round-off, from p_i).
    If all γ are accepted, emit a bonus token drawn from the last target row p_γ.

    ``target_probs`` has γ+1 rows: row i is p at the prefix extended by the first i
    drafts. ``draft_probs`` has γ rows: row i is the q that draft token i was sampled
    from. ``rng`` is a ``numpy.random.Generator``, an int seed, or None.

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> verify([1, 2], [p, p, p], [q, q], rng=0)
    VerifiedRound(tokens=(1, 0), num_accepted=1, bonus=False)
    >>> verify([], [p], [], rng=0).num_accepted  # γ = 0 is plain sampling from p
    0
    """
    drafts, p_rows, q_rows = _validate.verification_round(draft_tokens, target_probs, draft_probs)
    return verify_unchecked(drafts, p_rows, q_rows, np.random.default_rng(rng))


def verify_unchecked(
    drafts: Sequence[int],
    target_rows: Sequence[np.ndarray],
    draft_rows: Sequence[np.ndarray],
    rng: np.random.Generator,
) -> VerifiedRound:
    """``verify`` without its input checks: the one implementation of the rule, for callers whose rows are valid.

    ``verify``, the timed generator (``speculative_generate``) and every variant built on strict
    verification run this; the vectorised ``simulate_rounds`` draws from the same laws. It takes
    one uniform per reached draft, then one for the correction or bonus, from ``rng``.

    >>> p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    >>> verify_unchecked([1, 2], [p, p, p], [q, q], np.random.default_rng(0))
    VerifiedRound(tokens=(1, 0), num_accepted=1, bonus=False)
    """
    for i, x in enumerate(drafts):
        p, q = target_rows[i], draft_rows[i]
        if rng.random() < p[x] / q[x]:
            continue
        correction = sample_token(correction_distribution(p, q), rng)
        return VerifiedRound(tuple(int(t) for t in drafts[:i]) + (correction,), i, bonus=False)
    return VerifiedRound(
        tuple(int(t) for t in drafts) + (sample_token(target_rows[-1], rng),), len(drafts), bonus=True
    )
