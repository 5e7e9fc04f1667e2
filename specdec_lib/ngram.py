r"""Character n-gram models: the n-gram draft (what llama.cpp's lookup decoding and prompt-lookup drafting use) and the unigram baseline.

:class:`NGramModel` counts every context of up to ``order − 1`` characters in a token sequence
(the corpus's training split) and interpolates them Witten-Bell style. :class:`NGramDraft` wraps it
in the interface the generators call (``new_state``, ``score``, ``score_batch``, a state that
rolls back), so it can stand in for a transformer draft: a draft call is a table look-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from . import _validate
from .corpus import VOCAB_SIZE, corpus_split

NGRAM_ORDER = 6  # the n-gram draft reads the last five characters


class NGramModel:
    r"""A character n-gram with Witten-Bell interpolation, fitted to a token sequence.

    :math:`P(x \mid h) = \lambda_h \frac{c(h, x)}{c(h)} + (1 - \lambda_h) P(x \mid h')`, with
    :math:`\lambda_h = c(h) / (c(h) + t(h))` (t: distinct tokens seen after h, h': h without its
    oldest token) and add-one counts at the empty context, so every token keeps probability > 0.
    Order 1 is the add-one unigram.

    >>> from specdec_lib.corpus import ALPHABET, encode
    >>> m = NGramModel(encode("abab abab abab"), order=3)
    >>> p = m.probabilities(encode("ab"))
    >>> ALPHABET[int(p.argmax())], round(float(p.sum()), 12)
    ('a', 1.0)
    """

    def __init__(self, tokens: npt.ArrayLike, order: int, vocab: int = VOCAB_SIZE) -> None:
        self.order = _validate.count("order", order, minimum=1)
        self.vocab = _validate.count("vocab", vocab, minimum=2)
        tokens = np.asarray(tokens, dtype=np.int64)
        self._counts: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}  # (k, context code) -> counts
        for k in range(order):  # contexts of length k, each window coded as one base-vocab integer
            windows = np.lib.stride_tricks.sliding_window_view(tokens, k + 1)
            codes, counts = np.unique(windows @ self.vocab ** np.arange(k, -1, -1), return_counts=True)
            contexts, next_tokens = np.divmod(codes, self.vocab)  # sorted by context, then token
            starts = np.flatnonzero(np.r_[True, contexts[1:] != contexts[:-1]])
            groups = zip(np.split(next_tokens.astype(np.intp), starts[1:]), np.split(counts, starts[1:]))
            self._counts.update(zip(((k, c) for c in contexts[starts].tolist()), groups))
        self._memo: dict[tuple[int, ...], np.ndarray] = {}

    def probabilities(self, tokens: Sequence[int] | np.ndarray, end: int | None = None) -> np.ndarray:
        """P(next token | the order−1 tokens before position ``end`` of ``tokens``), a float64 vector.

        ``end`` defaults to ``len(tokens)``. Treat the returned vector as read-only (it is memoised).
        """
        end = len(tokens) if end is None else end
        return self._lookup(tuple(int(t) for t in tokens[max(0, end - self.order + 1) : end]))

    @property
    def table_size(self) -> int:
        """How many (context, next token) counts the model stores: its "parameters"."""
        return int(sum(len(ids) for ids, _ in self._counts.values()))

    def bits_per_char(self, tokens: npt.ArrayLike) -> float:
        """Mean −log₂ P(token | the tokens before it) over ``tokens[1:]``.

        >>> from specdec_lib.corpus import encode
        >>> round(NGramModel([0, 1, 0, 1], order=1, vocab=4).bits_per_char([0, 1, 0, 1]), 3)
        1.415
        """
        tokens = np.asarray(tokens)
        picked = [self.probabilities(tokens, end)[tokens[end]] for end in range(1, len(tokens))]
        return float(-np.mean(np.log2(picked)))

    def _lookup(self, key: tuple[int, ...]) -> np.ndarray:
        if key in self._memo:
            return self._memo[key]
        probs = self._lookup(key[1:]) if key else np.full(self.vocab, 1.0 / self.vocab)
        code = 0
        for token in key:
            code = code * self.vocab + token
        if (len(key), code) in self._counts:
            ids, counts = self._counts[len(key), code]
            total = counts.sum()
            seen = np.zeros(self.vocab)
            seen[ids] = counts
            if key:
                probs = (seen + len(ids) * probs) / (total + len(ids))
            else:
                probs = (seen + 1.0) / (total + self.vocab)
        self._memo[key] = probs
        return probs


class NGramState:
    """The tokens a batch of sequences has read: all an n-gram needs as its "cache"."""

    def __init__(self, batch: int = 1):
        self.rows: list[list[int]] = [[] for _ in range(_validate.count("batch", batch, minimum=1))]

    @property
    def batch(self) -> int:
        return len(self.rows)

    @property
    def length(self) -> int:
        return len(self.rows[0])

    def rollback(self, length: int) -> None:
        """Forget every token after the first ``length``."""
        length = _validate.count("length", length)
        if length > self.length:
            raise ValueError(f"length: cannot roll forward from {self.length} to {length}")
        for row in self.rows:
            del row[length:]


class NGramDraft:
    """An :class:`NGramModel` behind the generators' model interface.

    >>> from specdec_lib.corpus import encode
    >>> draft = NGramDraft(NGramModel(encode("abab abab"), order=3, vocab=97))
    >>> state = draft.new_state()
    >>> rows = draft.score(state, encode("ab"))
    >>> rows.shape, state.length
    ((2, 97), 2)
    """

    def __init__(self, model: NGramModel):
        self.model = model

    def new_state(self, batch: int = 1, capacity: int = 0) -> NGramState:
        """An empty state for ``batch`` sequences (``capacity`` is accepted for interface parity)."""
        return NGramState(batch)

    def score_batch(self, state: NGramState, tokens: npt.ArrayLike) -> np.ndarray:
        """Append ``tokens[s]`` to sequence s; rows of next-token probabilities, shape (batch, n, vocab)."""
        tokens = np.asarray(tokens, dtype=np.intp)
        if tokens.ndim != 2 or tokens.shape[0] != state.batch or tokens.shape[1] == 0:
            raise ValueError(
                f"tokens: need {state.batch} non-empty token lists of one length, got {tokens.shape}"
            )
        start, n, out = state.length, tokens.shape[1], []
        for row, new in zip(state.rows, tokens.tolist()):
            row.extend(new)
            out.append([self.model.probabilities(row, end) for end in range(start + 1, start + n + 1)])
        return np.asarray(out)

    def score(self, state: NGramState, tokens: npt.ArrayLike) -> np.ndarray:
        """Append ``tokens`` to a single sequence; row i is the next-token law after ``tokens[:i+1]``."""
        return self.score_batch(state, np.asarray(tokens, dtype=np.intp)[None])[0]


@lru_cache(maxsize=4)
def fitted_ngram(order: int = NGRAM_ORDER) -> NGramModel:
    """An n-gram of ``order`` fitted to the corpus's training split (a few seconds; cached)."""
    return NGramModel(corpus_split()[0], order)
