"""Exact in distribution is not exact in bits: float32 sums in another order flip near-ties.

Plain decoding scores one position per call; verification scores γ + 1 positions in one call.
The same float32 product ``hidden @ weights`` then runs through different kernels (one row
against a block of rows), which add the d terms of each logit in different orders, so the
last bits differ. Where the two largest logits are closer than that, greedy decoding picks a
different token, and the speculative output parts from the plain greedy output for ever after,
although the algorithm is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .transformer import Transformer

BISECTION_STEPS = 64  # halvings of the path from one hidden state to the other: past float32 resolution


def logits_both_ways(
    hidden: npt.ArrayLike, weights: npt.ArrayLike, rows: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """(blocked, alone): ``hidden @ weights`` in float32, scored ``rows`` at a time and one row at a time.

    Scoring in blocks is what a verification call over γ + 1 = ``rows`` positions does; one row
    at a time is plain decoding. The two agree to about float32 round-off, rarely to the bit.

    >>> rng = np.random.default_rng(0)
    >>> w, h = rng.standard_normal((64, 50), dtype=np.float32), rng.standard_normal((8, 64), dtype=np.float32)
    >>> blocked, alone = logits_both_ways(h, w)
    >>> bool(np.allclose(blocked, alone, atol=1e-4)), blocked.dtype.name
    (True, 'float32')
    """
    hidden = np.atleast_2d(np.asarray(hidden, dtype=np.float32))
    weights = np.asarray(weights, dtype=np.float32)
    if hidden.ndim != 2 or weights.ndim != 2 or hidden.shape[1] != weights.shape[0]:
        raise ValueError(f"hidden, weights: shapes {hidden.shape} and {weights.shape} do not multiply")
    if not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows: expected an integer >= 1, got {rows!r}")
    blocked = np.concatenate([hidden[i : i + rows] @ weights for i in range(0, len(hidden), rows)])
    alone = np.concatenate([hidden[i : i + 1] @ weights for i in range(len(hidden))])
    return blocked, alone


@dataclass(frozen=True)
class OrderFlip:
    """A hidden state at which blocked and one-row scoring choose different argmax tokens.

    ``hidden``: the float32 state; ``blocked_token`` and ``alone_token``: the two argmaxes;
    ``gap``: the one-row logit difference between the two tokens (tiny: a near-tie);
    ``max_difference``: the largest |blocked − alone| over that state's logits.
    """

    hidden: np.ndarray
    blocked_token: int
    alone_token: int
    gap: float
    max_difference: float


def find_order_flip(
    weights: np.ndarray,
    start: npt.ArrayLike,
    end: npt.ArrayLike,
    rows: int = 4,
    filler: npt.ArrayLike | None = None,
) -> OrderFlip | None:
    """Walk from hidden state ``start`` to ``end`` until blocked and one-row scoring disagree on the argmax.

    Along the segment the argmax changes from ``start``'s token to another, through a tie. Bisection
    finds where each way of scoring crosses it (the state scored in row 0 of a block whose other
    ``rows`` − 1 rows are ``filler``, default ``end``); a state between the two crossings is a flip.
    Returns None when both ways cross at the same float32 state or the argmax never changes.

    >>> rng = np.random.default_rng(1)
    >>> w = rng.standard_normal((256, 500), dtype=np.float32) / 16
    >>> a, b = rng.standard_normal((2, 256), dtype=np.float32)
    >>> flip = find_order_flip(w, a, b)
    >>> flip.blocked_token != flip.alone_token, abs(flip.gap) <= 2 * flip.max_difference
    (True, True)
    """
    weights = np.asarray(weights, dtype=np.float32)
    start, end = (np.asarray(v, dtype=np.float32) for v in (start, end))
    filler = end if filler is None else np.asarray(filler, dtype=np.float32)
    block = np.tile(filler, (rows, 1))

    def state(t: float) -> np.ndarray:
        return (start + np.float32(t) * (end - start)).astype(np.float32)

    def scores(t: float) -> tuple[np.ndarray, np.ndarray]:
        block[0] = state(t)
        return (block @ weights)[0], (block[:1] @ weights)[0]

    first = int(np.argmax(scores(0.0)[1]))
    if int(np.argmax(scores(1.0)[1])) == first:
        return None
    crossings = []
    for way in (0, 1):  # 0: blocked, 1: alone
        low, high = 0.0, 1.0
        for _ in range(BISECTION_STEPS):
            middle = (low + high) / 2
            low, high = (middle, high) if int(np.argmax(scores(middle)[way])) == first else (low, middle)
        crossings.append((low, high))
    for t in sorted({*crossings[0], *crossings[1]}):
        blocked, alone = scores(t)
        if int(np.argmax(blocked)) != int(np.argmax(alone)):
            b, a = int(np.argmax(blocked)), int(np.argmax(alone))
            return OrderFlip(state(t), b, a, float(alone[a] - alone[b]), float(np.abs(blocked - alone).max()))
    return None


def scored_both_ways(
    model: Transformer, tokens: npt.ArrayLike, rows: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """(blocked, alone): a cached model's float32 logits after every token of ``tokens``, scored two ways.

    Blocked: ``rows`` tokens per ``forward`` call, as a verification call scores γ + 1 positions;
    alone: one token per call, as plain decoding does. Both extend one KV cache along the same
    text, so in real numbers the two are equal. ``model`` is a :class:`~specdec_lib.transformer.Transformer`
    (``new_cache`` and ``forward(cache, tokens, positions, mask)``).

    >>> from specdec_lib.transformer import Config, Transformer
    >>> model = Transformer.random(Config(n_layers=1, d_model=16, n_heads=2, vocab=11), seed=0)
    >>> blocked, alone = scored_both_ways(model, [1, 2, 3, 4, 5])
    >>> blocked.shape, bool(np.allclose(blocked, alone, atol=1e-5))
    ((5, 11), True)
    """
    from .transformer import causal_mask  # the transformer's mask: the one import this module needs from it

    tokens = np.asarray(tokens, dtype=np.intp)
    if tokens.ndim != 1 or len(tokens) == 0:
        raise ValueError(f"tokens: expected a non-empty 1-D sequence of token ids, got shape {tokens.shape}")
    if not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows: expected an integer >= 1, got {rows!r}")
    window = model.config.window
    scored = []
    for step in (rows, 1):
        cache, logits = model.new_cache(capacity=len(tokens)), []
        for start in range(0, len(tokens), step):
            chunk = tokens[start : start + step]
            positions = np.arange(start, start + len(chunk))
            logits.append(model.forward(cache, chunk, positions, causal_mask(start, len(chunk), window)))
        scored.append(np.concatenate(logits).astype(np.float32))
    return scored[0], scored[1]
