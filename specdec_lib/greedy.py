"""Greedy verification: strict speculative sampling against the target's argmax.

Greedy decoding emits argmax p at each step. Replacing every target row by the one-hot
vector at its argmax turns strict speculative sampling into greedy verification: a
draft is accepted iff it is the argmax (probability min(1, 1/q(x)) = 1, or 0), and the
residual [onehot − q]+ is the one-hot itself, so the correction is the argmax too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _validate
from ._types import FloatArray, Probabilities, Rows, Seed
from .verification import VerifiedRound


def argmax_distribution(probs: Probabilities) -> FloatArray:
    """The one-hot law at the most probable token (the lowest id on ties): T → 0 of a temperature.

    >>> argmax_distribution([0.2, 0.5, 0.3]).tolist()
    [0.0, 1.0, 0.0]
    """
    probs = _validate.distribution("probs", probs, exact=False)
    onehot = np.zeros(len(probs))
    onehot[int(np.argmax(probs))] = 1.0
    return onehot


def verify_greedy(
    draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows, rng: Seed = None
) -> VerifiedRound:
    """Accept each draft while it equals the target's argmax; then emit the argmax (correction or bonus).

    Same signature, checks and result type as ``verify``. The result depends neither on
    ``rng`` nor on the draft rows (beyond their validity), and equals what ``verify``
    returns against ``argmax_distribution`` rows.

    >>> p, q = [0.2, 0.5, 0.3], [0.0, 0.5, 0.5]
    >>> verify_greedy([1, 2], [p, p, p], [q, q])
    VerifiedRound(tokens=(1, 1), num_accepted=1, bonus=False)
    >>> verify_greedy([1, 1], [p, p, p], [q, q]).tokens  # both accepted, then the bonus argmax
    (1, 1, 1)
    """
    drafts, p_rows, q_rows = _validate.verification_round(draft_tokens, target_probs, draft_probs)
    return verify_greedy_unchecked(drafts, p_rows, q_rows)


def verify_greedy_unchecked(
    drafts: Sequence[int],
    target_rows: Sequence[np.ndarray],
    draft_rows: Sequence[np.ndarray] | None = None,
    rng: Seed = None,
) -> VerifiedRound:
    """``verify_greedy`` without its input checks, for callers whose rows are valid (the timed generator).

    The same rule: keep drafts while each equals the argmax of its target row, then emit that argmax.

    >>> p = np.array([0.2, 0.5, 0.3])
    >>> verify_greedy_unchecked([1, 2], [p, p, p])
    VerifiedRound(tokens=(1, 1), num_accepted=1, bonus=False)
    """
    emitted = []
    for x, p in zip(drafts, target_rows):
        best = int(np.argmax(p))
        emitted.append(best)
        if x != best:
            return VerifiedRound(tuple(emitted), len(emitted) - 1, bonus=False)
    emitted.append(int(np.argmax(target_rows[-1])))
    return VerifiedRound(tuple(emitted), len(drafts), bonus=True)
