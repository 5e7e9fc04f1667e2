"""Many verification rounds at once: a vectorised Monte Carlo of ``verify``.

Every round uses the same per-position rows (row i of p and q is the law at position i),
which is the setting of the iid analysis. Rounds are independent; all of them are
simulated together with numpy, so 10^5 rounds take milliseconds instead of seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate
from ._types import Rows, Seed
from .distributions import correction_rows
from .sampling import TOKEN_DTYPE, InverseCdf

BLOCK_ROUNDS = 1 << 13  # rounds simulated together: big enough for numpy, small enough for L2 (measured best)


@dataclass(frozen=True)
class SimulatedRounds:
    """Outcome of ``n_rounds`` independent rounds.

    ``num_accepted``: int array (n_rounds,), accepted drafts per round (K − 1).
    ``tokens``: int array (n_rounds, γ+1), emitted tokens left-aligned, −1 after the last.

    >>> out = simulate_rounds([[0.5, 0.5]] * 2, [[0.5, 0.5]], 3, rng=0)  # q = p: every draft is kept
    >>> out.num_accepted.tolist(), out.tokens.shape
    ([1, 1, 1], (3, 2))
    """

    num_accepted: np.ndarray
    tokens: np.ndarray


def simulate_rounds(
    target_probs: Rows,
    draft_probs: Rows,
    n_rounds: int,
    rng: Seed = None,
    *,
    proposal_probs: Rows | None = None,
) -> SimulatedRounds:
    r"""Simulate ``n_rounds`` independent strict speculative rounds, vectorised.

    Per round: draft :math:`x_i \sim q_i` for i < γ, accept while a fresh uniform
    :math:`u_i < p_i(x_i)/q_i(x_i)`, then one correction from :math:`[p_K - q_K]_+`
    (normalised) at the first rejection K, or a bonus from :math:`p_\gamma` when all γ
    are accepted: the law of ``verify``. Uses 2γ+1 uniforms per round; rounds are
    simulated in blocks of ``BLOCK_ROUNDS`` so the arrays stay in the CPU cache.

    ``target_probs``: γ+1 rows; ``draft_probs``: γ rows (the q the verifier divides by).
    ``proposal_probs`` (default ``draft_probs``): the rows drafts are really drawn from;
    set it to study a sampler whose transform differs from what the verifier assumes.

    >>> out = simulate_rounds([[0.6, 0.3, 0.1]] * 3, [[0.2, 0.3, 0.5]] * 2, 100_000, rng=0)
    >>> out.tokens.shape
    (100000, 3)
    >>> round(float((out.num_accepted + 1).mean()), 2)  # E[K] = 1 + α + α² = 1.96 for α = 0.6
    1.96
    >>> out.tokens[:2].tolist()  # emitted tokens, then -1 padding
    [[0, -1, -1], [1, 0, -1]]
    """
    p = np.array(_validate.rows("target_probs", target_probs))
    gamma, vocab = p.shape[0] - 1, p.shape[1]
    q = np.array(_validate.rows("draft_probs", draft_probs, gamma, vocab)).reshape(gamma, vocab)
    s = (
        q
        if proposal_probs is None
        else np.array(_validate.rows("proposal_probs", proposal_probs, gamma, vocab)).reshape(gamma, vocab)
    )
    _validate.proposable("proposal_probs", s, q)
    n = _validate.count("n_rounds", n_rounds, minimum=1)
    rng = np.random.default_rng(rng)

    with np.errstate(divide="ignore", invalid="ignore"):
        accept_prob = np.where(q > 0, np.minimum(1.0, p[:gamma] / q), 0.0).ravel()
    drafts_from, final_from = InverseCdf(s), InverseCdf(np.vstack([correction_rows(p[:gamma], q), p[gamma:]]))

    num_accepted, tokens = np.zeros(n, TOKEN_DTYPE), np.empty((gamma + 1, n), TOKEN_DTYPE)
    buffer = np.empty((2 * gamma + 1) * min(n, BLOCK_ROUNDS))  # 2γ+1 uniforms per round, reused per block
    for start in range(0, n, BLOCK_ROUNDS):  # blocks of rounds, each block vectorised
        block = slice(start, min(start + BLOCK_ROUNDS, n))
        draws = rng.random(out=buffer[: (2 * gamma + 1) * (block.stop - start)]).reshape(2 * gamma + 1, -1)
        _simulate_block(accept_prob, drafts_from, final_from, draws, num_accepted[block], tokens[:, block])
    return SimulatedRounds(num_accepted=num_accepted, tokens=tokens.T)


def _simulate_block(
    accept_prob: np.ndarray,
    drafts_from: InverseCdf,
    final_from: InverseCdf,
    draws: np.ndarray,
    num_accepted: np.ndarray,
    tokens: np.ndarray,
) -> None:
    """Fill ``num_accepted`` (zeros, shape (n,)) and ``tokens`` (shape (γ+1, n)) for n rounds."""
    gamma, n = tokens.shape[0] - 1, tokens.shape[1]
    positions = np.arange(gamma)[:, None]
    drafts = drafts_from.sample(positions, draws[:gamma])
    accepted = draws[gamma : 2 * gamma] < accept_prob[drafts + drafts_from.vocab * positions]
    alive = np.ones(n, bool)
    for row in accepted:  # a loop over the γ positions, not over rounds
        alive &= row
        num_accepted += alive
    final = final_from.sample(num_accepted, draws[2 * gamma])

    np.add(drafts, 1, out=tokens[:gamma])  # shifted by one, so zeroing after K leaves -1 below
    tokens[gamma] = final + 1
    tokens *= np.arange(gamma + 1)[:, None] < num_accepted
    tokens -= 1
    tokens[num_accepted, np.arange(n)] = final
