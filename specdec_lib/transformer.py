r"""A decoder-only transformer in numpy with a key/value cache: the course's trained target and drafts run on it.

The architecture (GPT-style, pre-norm): token embedding; per layer
:math:`x \leftarrow x + \mathrm{Attn}(\mathrm{LN}(x))`, :math:`x \leftarrow x + W_\downarrow\,\mathrm{GELU}(W_\uparrow\,\mathrm{LN}(x))`;
a final LayerNorm and a linear head to the logits. Attention is multi-head with rotary position
angles (so a position is whatever number the caller gives) and sees at most ``window`` positions,
itself included, so text longer than the training context keeps the offsets it was trained on.

One core call, :meth:`Transformer.forward`, takes new token ids, their explicit positions and a
boolean mask over [every cached position + the new ones]; it returns their logits and appends
their keys and values to the cache. Scoring a chain (the target checking γ drafts) is the causal
mask :func:`causal_mask`; a tree of drafts is another mask and other positions on the same call.
:meth:`KVCache.rollback` forgets every position past a length, as after a rejection.

Weights are stored as float16 ``.npz`` files with a JSON model card each in ``specdec_lib/models``
(:func:`load`); they compute in float32.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _validate
from .corpus import VOCAB_SIZE

MODELS_DIR = Path(__file__).parent / "models"
LAYER_NORM_EPS = 1e-5
ROPE_BASE = 10000.0


@dataclass(frozen=True)
class Config:
    """A model's shape: ``n_layers`` layers of width ``d_model`` split into ``n_heads`` heads, MLP width
    ``mlp_ratio``·d_model, attention over the last ``window`` positions, ``vocab`` tokens."""

    n_layers: int
    d_model: int
    n_heads: int
    window: int = 128
    mlp_ratio: int = 4
    vocab: int = VOCAB_SIZE

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every weight's name and shape (per-layer weights stacked along a first axis of n_layers)."""
        L, d, m, v = self.n_layers, self.d_model, self.mlp_ratio * self.d_model, self.vocab
        return {
            "embed": (v, d),
            "ln1_gain": (L, d),
            "ln1_bias": (L, d),
            "w_qkv": (L, d, 3 * d),
            "w_out": (L, d, d),
            "ln2_gain": (L, d),
            "ln2_bias": (L, d),
            "w_up": (L, d, m),
            "w_down": (L, m, d),
            "lnf_gain": (d,),
            "lnf_bias": (d,),
            "head": (d, v),
        }

    def parameter_count(self) -> int:
        """Number of weights.

        >>> Config(n_layers=1, d_model=8, n_heads=2, vocab=10).parameter_count()
        976
        """
        return int(sum(np.prod(shape) for shape in self.shapes().values()))

    def flops_per_token(self) -> int:
        """Multiply-adds ×2 of the weight matrices for one position (attention scores left out).

        >>> Config(n_layers=1, d_model=8, n_heads=2, vocab=10).flops_per_token()
        1696
        """
        d, m = self.d_model, self.mlp_ratio * self.d_model
        return 2 * (self.n_layers * (4 * d * d + 2 * d * m) + d * self.vocab)


class KVCache:
    """Every layer's keys and values for ``batch`` sequences of equal length, room growing as needed.

    ``keys`` and ``values`` have shape (n_layers, batch, n_heads, capacity, head_dim); positions
    ``0 … length − 1`` along the capacity axis are valid, anything past them is scratch.

    >>> cache = KVCache(Config(n_layers=2, d_model=8, n_heads=2))
    >>> cache.length, cache.batch, cache.keys.shape
    (0, 1, (2, 1, 2, 64, 4))
    """

    def __init__(self, config: Config, batch: int = 1, capacity: int = 64):
        batch = _validate.count("batch", batch, minimum=1)
        capacity = _validate.count("capacity", capacity, minimum=1)
        shape = (config.n_layers, batch, config.n_heads, capacity, config.head_dim)
        self.keys = np.zeros(shape, dtype=np.float32)
        self.values = np.zeros(shape, dtype=np.float32)
        self.length = 0

    @property
    def batch(self) -> int:
        return self.keys.shape[1]

    def rollback(self, length: int) -> None:
        """Keep the first ``length`` positions and forget the rest (the next call overwrites them).

        >>> cache = KVCache(Config(n_layers=1, d_model=4, n_heads=1))
        >>> cache.length = 5
        >>> cache.rollback(3); cache.length
        3
        """
        length = _validate.count("length", length)
        if length > self.length:
            raise ValueError(f"length: cannot roll forward from {self.length} to {length}")
        self.length = length

    def keep(self, positions: npt.ArrayLike) -> None:
        """Keep only the cached positions listed, in that order (compacting a tree down to its accepted path).

        >>> cache = KVCache(Config(n_layers=1, d_model=2, n_heads=1))
        >>> cache.keys[0, 0, 0, :4, 0] = [10, 11, 12, 13]; cache.length = 4
        >>> cache.keep([0, 1, 3]); cache.length, cache.keys[0, 0, 0, :3, 0].tolist()
        (3, [10.0, 11.0, 13.0])
        """
        positions = np.asarray(positions, dtype=np.intp)
        if positions.ndim != 1 or (
            positions.size and not (0 <= positions.min() <= positions.max() < self.length)
        ):
            raise ValueError(
                f"positions: need cached positions in 0 … {self.length - 1}, got {positions.tolist()}"
            )
        n = len(positions)
        self.keys[:, :, :, :n] = self.keys[:, :, :, positions]
        self.values[:, :, :, :n] = self.values[:, :, :, positions]
        self.length = n

    def _reserve(self, length: int) -> None:
        capacity = self.keys.shape[3]
        if length > capacity:
            pad = [(0, 0)] * 3 + [(0, max(length, 2 * capacity) - capacity), (0, 0)]
            self.keys = np.pad(self.keys, pad)
            self.values = np.pad(self.values, pad)


def causal_mask(cached: int, new: int, window: int | None = None) -> np.ndarray:
    """The chain mask: new position i (absolute ``cached + i``) sees every position ≤ itself, at most ``window`` of them.

    Shape (new, cached + new); True where attention is allowed.

    >>> causal_mask(2, 3).astype(int)
    array([[1, 1, 1, 0, 0],
           [1, 1, 1, 1, 0],
           [1, 1, 1, 1, 1]])
    >>> causal_mask(2, 2, window=2).astype(int)
    array([[0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    query = np.arange(cached, cached + new)[:, None]
    key = np.arange(cached + new)[None, :]
    allowed = key <= query
    if window is not None:
        allowed &= key > query - window
    return allowed


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + LAYER_NORM_EPS) * gain + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def rotary_angles(positions: np.ndarray, head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of position × frequency, frequencies ``ROPE_BASE^(−2i/head_dim)`` for i < head_dim/2."""
    frequencies = ROPE_BASE ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * frequencies
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotary embedding on the last axis: halves (x1, x2) become (x1 cos − x2 sin, x1 sin + x2 cos)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


class Transformer:
    """A trained model: :meth:`forward` is the one core call; :meth:`score` scores a chain.

    >>> config = Config(n_layers=2, d_model=16, n_heads=2, vocab=7)
    >>> model = Transformer.random(config, seed=0)
    >>> cache = model.new_cache()
    >>> rows = model.score(cache, [1, 2, 3])
    >>> rows.shape, cache.length, bool(np.allclose(rows.sum(axis=1), 1))
    ((3, 7), 3, True)
    >>> cache.rollback(1)  # forget the last two: the next call continues after token 1
    >>> bool(np.allclose(model.score(cache, [2, 3]), rows[1:], atol=1e-6))
    True
    """

    def __init__(self, config: Config, weights: dict[str, np.ndarray]) -> None:
        self.config = config
        missing = {
            name
            for name, shape in config.shapes().items()
            if name not in weights or np.shape(weights[name]) != shape
        }
        if missing:
            raise ValueError(f"weights: missing or misshapen {sorted(missing)} for {config}")
        self.weights = {name: np.asarray(weights[name], dtype=np.float32) for name in config.shapes()}

    @classmethod
    def random(cls, config: Config, seed: int = 0) -> Transformer:
        """Untrained weights (normal, scaled 1/√fan-in; LayerNorms at identity), for tests and examples."""
        rng = np.random.default_rng(seed)
        weights = {}
        for name, shape in config.shapes().items():
            if "gain" in name:
                weights[name] = np.ones(shape)
            elif "bias" in name:
                weights[name] = np.zeros(shape)
            else:
                weights[name] = rng.standard_normal(shape) / np.sqrt(shape[-2])
        return cls(config, weights)

    @property
    def parameter_count(self) -> int:
        return self.config.parameter_count()

    def new_cache(self, batch: int = 1, capacity: int = 256) -> KVCache:
        """An empty cache for ``batch`` sequences (room for ``capacity`` positions; it grows)."""
        return KVCache(self.config, batch, capacity)

    new_state = new_cache  # the name the generators call

    def forward(
        self, cache: KVCache, tokens: npt.ArrayLike, positions: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        """Logits of ``n`` new tokens; their keys and values are appended to ``cache``.

        ``tokens``: shape (n,) or (batch, n); ``positions``: (n,) rotary positions of the new
        tokens; ``mask``: (n, cache.length + n) booleans, True where new token i may attend to
        that column (the cached positions first, then the new tokens in order). Returns logits of
        shape (n, vocab), or (batch, n, vocab) for batched tokens.
        """
        tokens = np.asarray(tokens, dtype=np.intp)
        single = tokens.ndim == 1
        tokens = tokens[None] if single else tokens
        if tokens.ndim != 2 or tokens.shape[0] != cache.batch or tokens.shape[1] == 0:
            raise ValueError(
                f"tokens: need {cache.batch} non-empty token lists of one length, got {tokens.shape}"
            )
        if tokens.min() < 0 or tokens.max() >= self.config.vocab:
            raise ValueError(f"tokens: ids must lie in 0 … {self.config.vocab - 1}")
        b, n = tokens.shape
        start, end = cache.length, cache.length + n
        positions = np.asarray(positions)
        mask = np.asarray(mask, dtype=bool)
        if positions.shape != (n,):
            raise ValueError(f"positions: need shape ({n},), got {positions.shape}")
        if mask.shape != (n, end):
            raise ValueError(f"mask: need shape ({n}, {end}) over cached + new positions, got {mask.shape}")
        if not mask.any(axis=1).all():
            raise ValueError("mask: every new token must attend to at least one position")
        first = int(np.argmax(mask.any(axis=0)))  # columns before this one are masked for every row
        bias = np.where(mask[:, first:], 0.0, -np.inf).astype(np.float32)
        cache._reserve(end)
        cfg, w = self.config, self.weights
        h, hd = cfg.n_heads, cfg.head_dim
        cos, sin = rotary_angles(positions, hd)
        scale = np.float32(hd**-0.5)
        x = w["embed"][tokens]
        for layer in range(cfg.n_layers):
            a = _layer_norm(x, w["ln1_gain"][layer], w["ln1_bias"][layer])
            q, k, v = (a @ w["w_qkv"][layer]).reshape(b, n, 3, h, hd).transpose(2, 0, 3, 1, 4)
            cache.keys[layer, :, :, start:end] = _rotate(k, cos, sin)
            cache.values[layer, :, :, start:end] = v
            scores = (_rotate(q, cos, sin) * scale) @ cache.keys[layer, :, :, first:end].swapaxes(
                -1, -2
            ) + bias
            weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attended = (weights / weights.sum(axis=-1, keepdims=True)) @ cache.values[layer, :, :, first:end]
            x = x + attended.transpose(0, 2, 1, 3).reshape(b, n, -1) @ w["w_out"][layer]
            a = _layer_norm(x, w["ln2_gain"][layer], w["ln2_bias"][layer])
            x = x + _gelu(a @ w["w_up"][layer]) @ w["w_down"][layer]
        cache.length = end
        logits = _layer_norm(x, w["lnf_gain"], w["lnf_bias"]) @ w["head"]
        return logits[0] if single else logits

    def score_batch(self, cache: KVCache, tokens: npt.ArrayLike) -> np.ndarray:
        """Next-token distributions (float64) after each of ``tokens`` (shape (batch, n)), appended as a chain in one call.

        >>> model = Transformer.random(Config(n_layers=1, d_model=8, n_heads=2, vocab=5), seed=1)
        >>> rows = model.score_batch(model.new_cache(batch=2), [[1, 2], [3, 4]])
        >>> rows.shape, bool(np.allclose(rows[1], model.score(model.new_cache(), [3, 4]), atol=1e-6))
        ((2, 2, 5), True)
        """
        tokens = np.asarray(tokens, dtype=np.intp)
        n = tokens.shape[-1]
        positions = np.arange(cache.length, cache.length + n)
        logits = self.forward(cache, tokens, positions, causal_mask(cache.length, n, self.config.window))
        logits = logits.astype(np.float64)  # rows sum to 1 to float64 precision, as the verifiers check
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return probs / probs.sum(axis=-1, keepdims=True)

    def score(self, cache: KVCache, tokens: npt.ArrayLike) -> np.ndarray:
        """Append ``tokens`` to a single sequence in one call; row i is the next-token law after ``tokens[:i+1]``."""
        return self.score_batch(cache, np.asarray(tokens, dtype=np.intp)[None])[0]


def save(path: str | Path, model: Transformer, card: dict) -> None:
    """Write the weights as float16 ``path`` (.npz) and ``card`` plus the config beside it (.json)."""
    path = Path(path)
    arrays: dict[str, Any] = {k: v.astype(np.float16) for k, v in model.weights.items()}
    np.savez_compressed(path, **arrays)
    card = {**card, "config": asdict(model.config), "params": model.parameter_count}
    path.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n")


def model_card(name: str) -> dict:
    """The JSON card of a shipped model: corpus hash, config, seed, steps, losses, parameter count."""
    path = MODELS_DIR / f"{name}.json"
    if not path.exists():
        shipped = sorted(p.stem for p in MODELS_DIR.glob("*.json"))
        raise ValueError(f"name: no shipped model {name!r}; shipped: {shipped}")
    return json.loads(path.read_text())


def load(name: str) -> Transformer:
    """A shipped model (``"target"``, ``"draft"`` or ``"distilled"``) from ``specdec_lib/models``."""
    card = model_card(name)
    with np.load(MODELS_DIR / f"{name}.npz") as stored:
        return Transformer(Config(**card["config"]), dict(stored))
