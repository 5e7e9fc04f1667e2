"""Many verification rounds at once: a vectorised Monte Carlo of ``verify``.

Every round uses the same per-position rows (row i of p and q is the law at position i),
which is the setting of the iid analysis. Rounds are independent; all of them are
simulated together with numpy, so 10^5 rounds take milliseconds instead of seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate
from .distributions import RESIDUAL_FLOAT_FLOOR

TOKEN_DTYPE = np.int32  # token ids; half the memory traffic of int64
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


def _matrix(name: str, rows, n_rows: int | None, vocab: int | None = None) -> np.ndarray:
    try:
        rows = [_validate.distribution(f"{name}[{i}]", row, exact=False) for i, row in enumerate(rows)]
    except TypeError:
        raise ValueError(f"{name}: expected a sequence of probability rows") from None
    if (n_rows is None and not rows) or (n_rows is not None and len(rows) != n_rows):
        raise ValueError(f"{name}: expected {n_rows if n_rows is not None else 'at least 1'} rows, got {len(rows)}")
    if not rows:
        return np.zeros((0, vocab))
    vocab = len(rows[0]) if vocab is None else vocab
    for i, row in enumerate(rows):
        if len(row) != vocab:
            raise ValueError(f"{name}[{i}]: has {len(row)} tokens, expected vocabulary size {vocab}")
    return np.array(rows)


class _InverseCdf:
    """Inverse-CDF draws from the rows of a probability matrix, many at once.

    ``sample(which, u)`` returns ``min{x : cdf[which, x] > u}`` for every uniform u. A
    guide table splits [0, 1) into M = 2^k ≥ 64·V bins (u·M is exact in floating point,
    so each bin is too): a bin that holds no CDF boundary of its row names the token in
    one lookup, and the few uniforms in other bins go to ``searchsorted``, so every draw
    equals the inverse CDF's.
    """

    def __init__(self, probs: np.ndarray):
        n_rows, self.vocab = probs.shape
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        self.bins = 1 << int(np.ceil(np.log2(64 * self.vocab)))
        scaled, row_start = cdf * self.bins, (self.bins + 1) * np.arange(n_rows)[:, None]

        def count_up_to(edge_index):  # per row and bin edge j: how many CDF values have edge_index(c·M) ≤ j
            flat = (edge_index(scaled).astype(np.intp) + row_start).ravel()
            counts = np.bincount(flat, minlength=n_rows * (self.bins + 1)).reshape(n_rows, self.bins + 1)
            return np.cumsum(counts, axis=1)[:, :-1]

        left, right = count_up_to(np.ceil), count_up_to(np.floor)  # tokens at each bin's two edges
        self.guide = np.where(left == right, left, -1).astype(TOKEN_DTYPE).ravel()
        self.offsets = 2.0 * np.arange(n_rows)  # row k's CDF shifted by 2k: one sorted array for every row
        self.shifted_cdf = (cdf + self.offsets[:, None]).ravel()

    def sample(self, which, uniforms: np.ndarray) -> np.ndarray:
        bin_index = (uniforms * self.bins).astype(np.intp)
        bin_index += self.bins * which
        tokens = self.guide[bin_index]
        unresolved = np.flatnonzero(tokens < 0)
        if unresolved.size:
            rows = np.broadcast_to(which, uniforms.shape).ravel()[unresolved]
            found = np.searchsorted(self.shifted_cdf, uniforms.ravel()[unresolved] + self.offsets[rows], side="right")
            tokens.ravel()[unresolved] = found - self.vocab * rows
        return tokens


def simulate_rounds(target_probs, draft_probs, n_rounds, rng=None, *, proposal_probs=None) -> SimulatedRounds:
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
    p = _matrix("target_probs", target_probs, None)
    gamma, vocab = p.shape[0] - 1, p.shape[1]
    q = _matrix("draft_probs", draft_probs, gamma, vocab)
    s = q if proposal_probs is None else _matrix("proposal_probs", proposal_probs, gamma, vocab)
    if np.any((s > 0) & (q == 0)):
        raise ValueError("proposal_probs: proposes a token whose draft_probs entry is 0 (the ratio p/q is undefined)")
    n = _validate.count("n_rounds", n_rounds, minimum=1)
    rng = np.random.default_rng(rng)

    with np.errstate(divide="ignore", invalid="ignore"):
        accept_prob = np.where(q > 0, np.minimum(1.0, p[:gamma] / q), 0.0).ravel()
    excess = np.maximum(p[:gamma] - q, 0.0)
    mass = excess.sum(axis=1, keepdims=True)
    # rows with p = q never reject; their placeholder row is never drawn from
    residual = np.where(mass >= RESIDUAL_FLOAT_FLOOR, excess / np.maximum(mass, RESIDUAL_FLOAT_FLOOR), p[:gamma])
    drafts_from, final_from = _InverseCdf(s), _InverseCdf(np.vstack([residual, p[gamma:]]))

    num_accepted, tokens = np.zeros(n, TOKEN_DTYPE), np.empty((gamma + 1, n), TOKEN_DTYPE)
    buffer = np.empty((2 * gamma + 1) * min(n, BLOCK_ROUNDS))  # 2γ+1 uniforms per round, reused per block
    for start in range(0, n, BLOCK_ROUNDS):  # blocks of rounds, each block vectorised
        block = slice(start, min(start + BLOCK_ROUNDS, n))
        draws = rng.random(out=buffer[:(2 * gamma + 1) * (block.stop - start)]).reshape(2 * gamma + 1, -1)
        _simulate_block(accept_prob, drafts_from, final_from, draws, num_accepted[block], tokens[:, block])
    return SimulatedRounds(num_accepted=num_accepted, tokens=tokens.T)


def _simulate_block(accept_prob, drafts_from, final_from, draws, num_accepted, tokens):
    """Fill ``num_accepted`` (zeros, shape (n,)) and ``tokens`` (shape (γ+1, n)) for n rounds."""
    gamma, n = tokens.shape[0] - 1, tokens.shape[1]
    positions = np.arange(gamma)[:, None]
    drafts = drafts_from.sample(positions, draws[:gamma])
    accepted = draws[gamma:2 * gamma] < accept_prob[drafts + drafts_from.vocab * positions]
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
