"""A target/draft model pair to time speculative decoding on: real costs, constructed knowledge.

What the models know about text comes from character n-gram tables fitted to a fixed text
shipped inside the package (``specdec_lib/data/corpus.txt``, about 4,800 words of plain prose
written for the course; :data:`CORPUS_SHA256` pins it), never to files of the book, so editing
a chapter cannot move a model. What they cost comes from a network of random (seeded) weights
with the shape of a decoder-only transformer: token and position embeddings, then layers of causal self-attention over a
key/value cache and a small MLP. Its output nudges the n-gram's logits, so its work is used,
but it adds no knowledge. The target runs many small layers, so one call costs about the same
for 1 or 9 positions (like a large model at batch 1, where reading the weights dominates); the
draft runs one tiny layer over a lower-order n-gram.

Each sequence keeps a cache (:class:`LMState`): the tokens seen and every layer's keys and
values. Scoring new tokens appends to it; :meth:`LMState.rollback` truncates it, which is
what speculation does after a rejection. A state can hold a batch of sequences of equal length,
scored together by :meth:`CachedLM.score_batch` (to measure what batching does to a call's cost).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from . import _validate

ALPHABET = " abcdefghijklmnopqrstuvwxyz0123456789.,;:'()-"  # token id = index in this string
VOCAB_SIZE = len(ALPHABET)
_TOKEN_OF = {ch: i for i, ch in enumerate(ALPHABET)}
NUDGE = 0.3  # how far (in logits) the random network may move the n-gram's prediction
CORPUS_SHA256 = "9df3d483263c623254f21a1944213013d27965883d47243158614b13daeb8d56"  # the frozen corpus


def encode(text: str) -> np.ndarray:
    """Text → token ids: lower-cased, every character outside ``ALPHABET`` becomes a space, runs of spaces one.

    >>> encode("Draft,  then VERIFY!").tolist() == encode("draft, then verify ").tolist()
    True
    >>> decode(encode("Draft,  then VERIFY!"))
    'draft, then verify '
    """
    kept = "".join(ch if ch in _TOKEN_OF else " " for ch in text.lower())
    return np.array([_TOKEN_OF[ch] for ch in re.sub(" +", " ", kept)], dtype=np.uint8)


def decode(tokens) -> str:
    """Token ids → text.

    >>> decode([4, 18, 1, 6, 20])
    'draft'
    """
    return "".join(ALPHABET[int(t)] for t in tokens)


def corpus_text() -> str:
    """The fixed text both models are fitted to, read from the package (not from the book).

    Raises ``ValueError`` if the file differs from the frozen snapshot :data:`CORPUS_SHA256`.

    >>> text = corpus_text()
    >>> len(text.split()) > 4000, hashlib.sha256(text.encode()).hexdigest() == CORPUS_SHA256
    (True, True)
    """
    text = resources.files(__package__).joinpath("data", "corpus.txt").read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != CORPUS_SHA256:
        raise ValueError(f"corpus: data/corpus.txt has SHA-256 {digest}, not the frozen {CORPUS_SHA256}")
    return text


class NGramModel:
    r"""A character n-gram with Witten-Bell interpolation, fitted to a token sequence.

    :math:`P(x \mid h) = \lambda_h \frac{c(h, x)}{c(h)} + (1 - \lambda_h) P(x \mid h')`, with
    :math:`\lambda_h = c(h) / (c(h) + t(h))` (t: distinct tokens seen after h, h': h without its
    oldest token) and add-one counts at the empty context, so every token keeps probability > 0.

    >>> m = NGramModel(encode("abab abab abab"), order=3)
    >>> p = m.probabilities(encode("ab"))
    >>> ALPHABET[int(p.argmax())], round(float(p.sum()), 12)
    ('a', 1.0)
    """

    def __init__(self, tokens, order: int):
        self.order = _validate.count("order", order, minimum=1)
        tokens = np.asarray(tokens, dtype=np.uint8)
        self._counts: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        for k in range(order):  # contexts of length k
            windows = np.lib.stride_tricks.sliding_window_view(tokens, k + 1)
            rows, counts = np.unique(windows, axis=0, return_counts=True)  # sorted by context, then token
            starts = np.flatnonzero(np.r_[True, np.any(rows[1:, :k] != rows[:-1, :k], axis=1)]) if k else [0]
            for start, end in zip(starts, list(starts[1:]) + [len(rows)]):
                self._counts[rows[start, :k].tobytes()] = (
                    rows[start:end, k].astype(np.intp),
                    counts[start:end],
                )
        self._memo: dict[bytes, np.ndarray] = {}

    def probabilities(self, tokens, end=None) -> np.ndarray:
        """P(next token | the order−1 tokens before position ``end`` of ``tokens``), a float64 vector.

        ``end`` defaults to ``len(tokens)``. Treat the returned vector as read-only (it is memoised).
        """
        end = len(tokens) if end is None else end
        return self._lookup(bytes(int(t) for t in tokens[max(0, end - self.order + 1) : end]))

    def _lookup(self, key: bytes) -> np.ndarray:
        if key in self._memo:
            return self._memo[key]
        if key:
            probs = self._lookup(key[1:])
        else:
            probs = np.full(VOCAB_SIZE, 1.0 / VOCAB_SIZE)
        if key in self._counts:
            ids, counts = self._counts[key]
            total = counts.sum()
            seen = np.zeros(VOCAB_SIZE)
            seen[ids] = counts
            if key:
                probs = (seen + len(ids) * probs) / (total + len(ids))
            else:
                probs = (seen + 1.0) / (total + VOCAB_SIZE)
        self._memo[key] = probs
        return probs


class LMState:
    """The cache of a batch of sequences of equal length: their tokens and every layer's keys and values.

    ``batch`` sequences (default one) advance together; :attr:`tokens` is the single sequence's
    tokens when ``batch`` is 1.

    >>> s = LMState(n_layers=2, d_model=4)
    >>> s.length, s.batch
    (0, 1)
    """

    def __init__(self, n_layers: int, d_model: int, capacity: int = 256, batch: int = 1):
        self.rows: list[list[int]] = [[] for _ in range(_validate.count("batch", batch, minimum=1))]
        self.keys = np.zeros((n_layers, batch, capacity, d_model), dtype=np.float32)
        self.values = np.zeros_like(self.keys)

    @property
    def batch(self) -> int:
        return len(self.rows)

    @property
    def length(self) -> int:
        return len(self.rows[0])

    @property
    def tokens(self) -> list[int]:
        """The tokens scored so far (a state holding one sequence only)."""
        if self.batch != 1:
            raise ValueError(f"tokens: this state holds {self.batch} sequences; read state.rows")
        return self.rows[0]

    def rollback(self, length: int) -> None:
        """Forget every token after the first ``length`` (their keys and values are overwritten later)."""
        length = _validate.count("length", length)
        if length > self.length:
            raise ValueError(f"length: cannot roll forward from {self.length} to {length}")
        for row in self.rows:
            del row[length:]

    def _reserve(self, length: int) -> None:
        capacity = self.keys.shape[2]
        if length > capacity:
            shape = list(self.keys.shape)
            shape[2] = max(length, 2 * capacity) - capacity
            grow = np.zeros(shape, np.float32)
            self.keys = np.concatenate([self.keys, grow], axis=2)
            self.values = np.concatenate([self.values, grow], axis=2)


@dataclass(frozen=True)
class ModelShape:
    """The network's size: ``n_layers`` layers of width ``d_model`` (MLP width 4·d_model), each
    attending to the last ``window`` positions."""

    n_layers: int
    d_model: int
    window: int = 32


class CachedLM:
    r"""A language model over ``ALPHABET``: an n-gram's knowledge, a small transformer's cost.

    For a prefix h the next-token law is :math:`\mathrm{softmax}(\log P_{\text{n-gram}}(\cdot\mid h) +
    \nu \tanh(z_h))`, where :math:`z_h` is the network's output logits at the last position and
    ν (``nudge``) bounds how far the random network can move each logit.

    >>> lm = CachedLM(NGramModel(encode("abab abab"), order=3), ModelShape(2, 8), seed=0)
    >>> state = lm.new_state()
    >>> rows = lm.score(state, encode("ab"))
    >>> rows.shape, state.length, bool(np.allclose(rows.sum(axis=1), 1))
    ((2, 45), 2, True)
    >>> state.rollback(1)  # forget the "b": the next call continues after "a"
    >>> bool(np.allclose(lm.score(state, encode("b")), rows[1:]))
    True
    """

    def __init__(self, ngram: NGramModel, shape: ModelShape, *, nudge: float = NUDGE, seed: int = 0):
        self.ngram = ngram
        self.shape = shape
        self.nudge = _validate.nonnegative("nudge", nudge)
        rng = np.random.default_rng(seed)
        n, d = (
            _validate.count("n_layers", shape.n_layers, minimum=1),
            _validate.count("d_model", shape.d_model, minimum=2),
        )

        def weights(*dims, scale):
            return (rng.standard_normal(dims) * scale).astype(np.float32)

        self.embed = weights(VOCAB_SIZE, d, scale=1.0)
        self.w_qkv = weights(n, d, 3 * d, scale=d**-0.5)
        self.w_qkv[:, :, :d] *= d**-0.5  # fold the attention's 1/sqrt(d) into the queries
        self.w_o = weights(n, d, d, scale=(d * n) ** -0.5)
        self.w_up = weights(n, d, 4 * d, scale=d**-0.5)
        self.w_down = weights(n, 4 * d, d, scale=(4 * d * n) ** -0.5)
        self.w_out = weights(d, VOCAB_SIZE, scale=d**-0.5)
        self.frequencies = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(np.float32)

    def new_state(self, batch: int = 1, capacity: int = 256) -> LMState:
        """An empty cache for ``batch`` new sequences (one by default), room for ``capacity`` positions (it grows)."""
        return LMState(self.shape.n_layers, self.shape.d_model, capacity, batch)

    def score(self, state: LMState, tokens) -> np.ndarray:
        """Append ``tokens`` to the sequence in one call; row i is the next-token law after ``tokens[:i+1]``."""
        return self.score_batch(state, [tokens])[0]

    def score_batch(self, state: LMState, tokens) -> np.ndarray:
        """Append ``tokens[s]`` to sequence s of the batch, all in one call; returns (batch, positions, vocab).

        >>> lm = CachedLM(NGramModel(encode("abab abab"), order=3), ModelShape(2, 8), seed=0)
        >>> rows = lm.score_batch(lm.new_state(batch=2), [encode("ab"), encode("ba")])
        >>> rows.shape, bool(np.allclose(rows[1], lm.score(lm.new_state(), encode("ba"))))
        ((2, 2, 45), True)
        """
        tokens = np.asarray(tokens, dtype=np.intp)
        if tokens.ndim != 2 or tokens.shape[0] != state.batch or tokens.shape[1] == 0:
            raise ValueError(
                f"tokens: need {state.batch} equal-length, non-empty token lists, got shape {tokens.shape}"
            )
        start, n = state.length, tokens.shape[1]
        nudges = np.tanh(self._network(state, tokens, start) @ self.w_out)
        ngram = []
        for row, new in zip(state.rows, tokens.tolist()):
            row.extend(new)
            ngram += [self.ngram.probabilities(row, end) for end in range(start + 1, start + n + 1)]
        logits = np.log(ngram).reshape(nudges.shape) + self.nudge * nudges
        probs = np.exp(logits - logits.max(axis=2, keepdims=True))
        return probs / probs.sum(axis=2, keepdims=True)

    def _network(self, state: LMState, tokens: np.ndarray, start: int) -> np.ndarray:
        """Every layer: causal self-attention over the cache's last ``window`` positions, then an MLP."""
        b, d, window = tokens.shape[1], self.shape.d_model, self.shape.window
        end = start + b
        state._reserve(end)
        first = max(0, start + 1 - window)  # oldest cached position any new token can see
        angles = np.arange(start, end, dtype=np.float32)[:, None] * self.frequencies
        x = self.embed[tokens] + np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
        mask = None
        if b > 1:  # position start+i sees positions start+i−window+1 … start+i
            offset = np.arange(first, end)[None, :] - np.arange(start, end)[:, None]
            mask = np.where((offset <= 0) & (offset > -window), 0.0, -np.inf).astype(np.float32)
        for layer in range(self.shape.n_layers):
            keys, values = state.keys[layer], state.values[layer]
            qkv = x @ self.w_qkv[layer]
            keys[:, start:end] = qkv[..., d : 2 * d]
            values[:, start:end] = qkv[..., 2 * d :]
            scores = qkv[..., :d] @ keys[:, first:end].transpose(0, 2, 1)
            if mask is not None:
                scores += mask
            attention = np.exp(scores - scores.max(axis=2, keepdims=True))
            x = (
                x
                + ((attention @ values[:, first:end]) / attention.sum(axis=2, keepdims=True))
                @ self.w_o[layer]
            )
            x = x + np.maximum(x @ self.w_up[layer], 0) @ self.w_down[layer]
        return x


TARGET_ORDER, DRAFT_ORDER = 8, 6  # characters of context: the draft sees the last 5, the target the last 7
TARGET_SHAPE = ModelShape(n_layers=96, d_model=16)
DRAFT_SHAPE = ModelShape(n_layers=1, d_model=8)


def build_model_pair(text=None, *, target_layers=TARGET_SHAPE.n_layers, seed=0):
    """The course's (target, draft) pair, fitted to ``text`` (default: the shipped :func:`corpus_text`).

    The target: an order-8 n-gram inside a network of ``target_layers`` layers of width 16.
    The draft: an order-6 n-gram inside one layer of width 8. Weights come from ``seed``.

    >>> target, draft = build_model_pair("the draft proposes, the target verifies. " * 20, target_layers=2)
    >>> target.shape.n_layers, draft.shape.n_layers, target.ngram.order, draft.ngram.order
    (2, 1, 8, 6)
    """
    text = corpus_text() if text is None else text
    shape = ModelShape(_validate.count("target_layers", target_layers, minimum=1), TARGET_SHAPE.d_model)
    target = CachedLM(_fitted_ngram(text, TARGET_ORDER), shape, seed=seed)
    draft = CachedLM(_fitted_ngram(text, DRAFT_ORDER), DRAFT_SHAPE, seed=seed + 1)
    return target, draft


@lru_cache(maxsize=8)
def _fitted_ngram(text: str, order: int) -> NGramModel:
    """Fitting takes a fraction of a second; models built from the same text share their tables."""
    return NGramModel(encode(text), order)
