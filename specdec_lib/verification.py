"""One strict speculative-sampling round: accept a prefix of the drafts, then one correction or bonus."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate
from .distributions import residual_distribution


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


def sample_token(probs, rng: np.random.Generator) -> int:
    """Draw one token index from a probability vector by inverting its CDF with one uniform.

    Tokens with probability 0 are never returned.

    >>> sample_token([0.0, 1.0, 0.0], np.random.default_rng(0))
    1
    """
    probs = np.asarray(probs, dtype=np.float64)
    cdf = np.cumsum(probs)
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(index, int(np.flatnonzero(probs)[-1]))  # guard against round-off at the top


def verify(draft_tokens, target_probs, draft_probs, rng=None) -> VerifiedRound:
    r"""Verify γ draft tokens against the target, as in Leviathan et al. (2023), Algorithm 1.

    For i = 0, 1, …: accept draft token x = ``draft_tokens[i]`` when a fresh uniform
    u satisfies u < p_i(x)/q_i(x), i.e. with probability :math:`\min(1, p_i(x)/q_i(x))`.
    At the first rejection emit one correction drawn from the residual
    :math:`r_i = [p_i - q_i]_+ / \sum [p_i - q_i]_+` and stop; later drafts are discarded.
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
    drafts, p_rows, q_rows = _check_round(draft_tokens, target_probs, draft_probs)
    rng = np.random.default_rng(rng)
    emitted: list[int] = []
    for x, p, q in zip(drafts, p_rows, q_rows):
        if rng.random() < p[x] / q[x]:
            emitted.append(x)
            continue
        emitted.append(sample_token(residual_distribution(p, q), rng))
        return VerifiedRound(tuple(emitted), len(emitted) - 1, bonus=False)
    emitted.append(sample_token(p_rows[-1], rng))
    return VerifiedRound(tuple(emitted), len(drafts), bonus=True)


def _rows(name: str, rows, expected: int) -> list[np.ndarray]:
    if isinstance(rows, np.ndarray) and rows.ndim != 2 and not (rows.ndim == 1 and rows.size == 0):
        raise ValueError(f"{name}: expected {expected} rows (a 2-D array), got shape {rows.shape}")
    try:
        rows = list(rows)
    except TypeError:
        raise ValueError(f"{name}: expected a sequence of {expected} probability rows") from None
    if len(rows) != expected:
        raise ValueError(f"{name}: expected {expected} rows, got {len(rows)}")
    return [_validate.distribution(f"{name}[{i}]", row, exact=False) for i, row in enumerate(rows)]


def _check_round(draft_tokens, target_probs, draft_probs):
    drafts = np.asarray(draft_tokens)
    if drafts.ndim != 1:
        raise ValueError(f"draft_tokens: expected a 1-D sequence of token ids, got shape {drafts.shape}")
    if drafts.size and not np.issubdtype(drafts.dtype, np.integer):
        raise ValueError(f"draft_tokens: token ids must be integers, got dtype {drafts.dtype}")
    gamma = drafts.size
    p_rows = _rows("target_probs", target_probs, gamma + 1)
    q_rows = _rows("draft_probs", draft_probs, gamma)
    vocab = len(p_rows[0])
    for name, rows in (("target_probs", p_rows), ("draft_probs", q_rows)):
        for i, row in enumerate(rows):
            if len(row) != vocab:
                raise ValueError(f"{name}[{i}]: has {len(row)} tokens, expected vocabulary size {vocab}")
    for i, x in enumerate(drafts.tolist()):
        if not 0 <= x < vocab:
            raise ValueError(f"draft_tokens[{i}]: token id {x} outside the vocabulary 0..{vocab - 1}")
        if q_rows[i][x] == 0:
            raise ValueError(f"draft_tokens[{i}]: token {x} has draft probability 0, so it could not have been proposed")
    return drafts.tolist(), p_rows, q_rows
