r"""Tree attention: the numpy transformer scores a whole token tree in one call, and keeps only the accepted path.

A tree's nodes are appended to the key/value cache in breadth-first order, but each node may attend
only to the cached prefix and to its own ancestors (and itself): the *tree mask*. Its position
(the rotary angle) is its depth, counted on from the cached prefix, so a node sees exactly what
it would see if its path had been appended as a chain: the same keys, values and relative
positions, hence the same next-token distribution (``tests/test_tree_attention.py`` checks it to
float tolerance). After verification :meth:`TreeTransformer.keep` compacts the cache down to the
prefix plus the accepted path (``KVCache.keep``); the rejected branches are forgotten.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _validate
from .transformer import KVCache, Transformer


def tree_mask(parents: Sequence[int], cached: int = 0, window: int | None = None) -> np.ndarray:
    """Boolean mask (nodes, cached + nodes): node i sees the cached positions, its ancestors and itself.

    ``parents[i]``: the index of node i's parent among the nodes (earlier in the list), or −1 for a
    child of the last cached position. With ``window``, a node at depth d (position cached + d)
    sees only positions within ``window`` of its own. A chain (``parents = [-1, 0, 1, …]``) gives
    ``transformer.causal_mask``.

    >>> tree_mask([-1, 0, 0, 1]).astype(int)  # a root, its two children, a grandchild under the first
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [1, 0, 1, 0],
           [1, 1, 0, 1]])
    """
    parents, depths = _tree(parents)
    n = len(parents)
    mask = np.zeros((n, cached + n), dtype=bool)
    mask[:, :cached] = True
    for i, parent in enumerate(parents):
        mask[i, cached + i] = True
        if parent >= 0:
            mask[i, cached : cached + n] |= mask[parent, cached : cached + n]
    if window is not None:
        key_position = np.concatenate([np.arange(cached), cached + depths])
        mask &= key_position[None, :] > (cached + depths)[:, None] - window
    return mask


def tree_positions(parents: Sequence[int], cached: int = 0) -> np.ndarray:
    """Each node's position: ``cached`` + its depth (roots of the tree at depth 0).

    >>> tree_positions([-1, 0, 0, 1], cached=5).tolist()
    [5, 6, 6, 7]
    """
    _, depths = _tree(parents)
    return cached + depths


class TreeTransformer:
    """A ``transformer.Transformer`` as a tree model of ``tree_decoding``: start, score_tree, keep.

    Rows come back as float64 distributions (the network computes in float32; verification
    checks that rows sum to 1 within 1e-9).

    >>> from specdec_lib.transformer import Config
    >>> model = TreeTransformer(Transformer.random(Config(n_layers=1, d_model=8, n_heads=2, vocab=6), seed=0))
    >>> state = model.start([1, 2, 3])
    >>> rows = model.score_tree(state, [3, 4, 5], [-1, 0, 0])  # the pending 3, two children
    >>> model.keep(state, [0, 2])  # keep 3 and the second child
    >>> state.cache.length, rows.shape
    (4, (3, 6))
    """

    def __init__(self, model: Transformer):
        if not isinstance(model, Transformer):
            raise ValueError(f"model: expected a transformer.Transformer, got {type(model).__name__}")
        self.model = model

    def start(self, prompt: Sequence[int]) -> _TreeState:
        prompt = [_validate.count(f"prompt[{i}]", t) for i, t in enumerate(prompt)]
        if not prompt:
            raise ValueError("prompt: need at least one token")
        cache = self.model.new_cache()
        if len(prompt) > 1:
            self.model.score(cache, prompt[:-1])
        return _TreeState(cache)

    def score_tree(self, state: _TreeState, tokens: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """Append nodes (parents index every node appended since the last ``keep``); one forward call."""
        appended = len(state.parents)
        state.parents += [int(p) for p in parents]
        mask = tree_mask(state.parents, state.kept, self.model.config.window)[appended:]
        positions = tree_positions(state.parents, state.kept)[appended:]
        logits = self.model.forward(state.cache, tokens, positions, mask).astype(np.float64)
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return probs / probs.sum(axis=-1, keepdims=True)

    def keep(self, state: _TreeState, indices: Sequence[int]) -> None:
        """Keep the appended nodes ``indices`` (a path from a root, in order) after the prefix; forget the rest."""
        state.cache.keep(list(range(state.kept)) + [state.kept + int(i) for i in indices])
        state.kept, state.parents = state.cache.length, []


class _TreeState:
    """A cache, how many positions of it are kept (the prefix), and the parents of the nodes appended after them."""

    def __init__(self, cache: KVCache) -> None:
        self.cache, self.kept = cache, cache.length
        self.parents: list[int] = []


def _tree(parents: Sequence[int]) -> tuple[list[int], np.ndarray]:
    parents = [int(p) for p in parents]
    depths = np.zeros(len(parents), dtype=np.intp)
    for i, parent in enumerate(parents):
        if not -1 <= parent < i:
            raise ValueError(f"parents: node {i} needs a parent among the earlier nodes or −1, got {parent}")
        depths[i] = 0 if parent < 0 else depths[parent] + 1
    return parents, depths
