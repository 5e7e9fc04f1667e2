"""Drawing tokens from probability vectors by inverting the CDF: one at a time, or many at once."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._types import Probabilities

TOKEN_DTYPE = np.int32  # token ids; half the memory traffic of int64


def sample_token(probs: Probabilities, rng: np.random.Generator) -> int:
    """Draw one token index from a probability vector by inverting its CDF with one uniform.

    Tokens with probability 0 are never returned.

    >>> sample_token([0.0, 1.0, 0.0], np.random.default_rng(0))
    1
    """
    probs = np.asarray(probs, dtype=np.float64)
    cdf = np.cumsum(probs)
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(index, int(np.flatnonzero(probs)[-1]))  # guard against round-off at the top


class InverseCdf:
    """Inverse-CDF draws from the rows of a probability matrix, many at once.

    ``sample(which, u)`` returns ``min{x : cdf[which, x] > u}`` for every uniform u. A
    guide table splits [0, 1) into M = 2^k ≥ 64·V bins (u·M is exact in floating point,
    so each bin is too): a bin that holds no CDF boundary of its row names the token in
    one lookup, and the few uniforms in other bins go to ``searchsorted``, so every draw
    equals the inverse CDF's.

    >>> sampler = InverseCdf(np.array([[0.5, 0.5], [0.0, 1.0]]))
    >>> sampler.sample(np.array([0, 0, 1]), np.array([0.25, 0.75, 0.1])).tolist()
    [0, 1, 1]
    """

    def __init__(self, probs: np.ndarray) -> None:
        n_rows, self.vocab = probs.shape
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        self.bins = 1 << int(np.ceil(np.log2(64 * self.vocab)))
        scaled, row_start = cdf * self.bins, (self.bins + 1) * np.arange(n_rows)[:, None]

        def count_up_to(
            edge_index: Callable[[np.ndarray], np.ndarray],
        ) -> np.ndarray:  # per row and bin edge j: how many CDF values have edge_index(c·M) ≤ j
            flat = (edge_index(scaled).astype(np.intp) + row_start).ravel()
            counts = np.bincount(flat, minlength=n_rows * (self.bins + 1)).reshape(n_rows, self.bins + 1)
            return np.cumsum(counts, axis=1)[:, :-1]

        left, right = count_up_to(np.ceil), count_up_to(np.floor)  # tokens at each bin's two edges
        self.guide = np.where(left == right, left, -1).astype(TOKEN_DTYPE).ravel()
        self.offsets = 2.0 * np.arange(n_rows)  # row k's CDF shifted by 2k: one sorted array for every row
        self.shifted_cdf = (cdf + self.offsets[:, None]).ravel()

    def sample(self, which: int | np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        bin_index = (uniforms * self.bins).astype(np.intp)
        bin_index += self.bins * which
        tokens = self.guide[bin_index]
        unresolved = np.flatnonzero(tokens < 0)
        if unresolved.size:
            rows = np.broadcast_to(which, uniforms.shape).ravel()[unresolved]
            found = np.searchsorted(
                self.shifted_cdf, uniforms.ravel()[unresolved] + self.offsets[rows], side="right"
            )
            tokens.ravel()[unresolved] = found - self.vocab * rows
        return tokens
