r"""Decoding with token trees: draft a tree level by level, score it in one target call, keep the accepted path.

Every rule of the variants chapter runs through this one loop, so their timings are comparable:
a chain of γ drafts is the tree ``tree_shape((1,) * γ)``, plain decoding the empty tree ``()``.

A *tree model* offers three methods (``PathModel`` wraps a ``model(prefix) -> probabilities``
callable; ``tree_attention.TreeTransformer`` a cached transformer):

* ``start(prompt) -> state``: a state holding every prompt token but the last;
* ``score_tree(state, tokens, parents) -> rows``: append nodes; ``parents[i]`` is the index of
  node i's parent among the nodes appended since the last ``keep`` (earlier in the same or a
  previous call), or −1 for the last kept token. Row i is the next-token distribution after the
  path to node i;
* ``keep(state, indices)``: keep those appended nodes (a path, root first) after the kept
  tokens and forget the other appended nodes.

One round from the pending token (the last emitted, not yet scored): the draft scores what it
has not read and then, level by level, every node that gets children (one draft call per level);
children are drawn by the node rule (independent draws from q, or the draft's top k). The target
scores the pending token and every node in one call; the rule walks down from the root (a chain
``verifier`` with ``verify``'s signature may judge a chain instead); both caches keep the
accepted path. Times come from ``clock`` (CPU time of this process by default, as "Measuring it").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import process_time
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from . import _validate
from ._types import Model
from .sampling import sample_token
from .top_k import top_k_candidates
from .trees import NodeRule, _check_shape, node_rule, tree_shape

if TYPE_CHECKING:
    from .adaptive_gamma import GammaPolicy


class TreeModel(Protocol):
    """What ``tree_generate`` calls on a model (see the module): ``start``, ``score_tree``, ``keep``."""

    def start(self, prompt: Sequence[int]) -> Any: ...

    def score_tree(self, state: Any, tokens: Sequence[int], parents: Sequence[int]) -> np.ndarray: ...

    def keep(self, state: Any, indices: Sequence[int]) -> None: ...


@dataclass(frozen=True)
class TreeRound:
    """One round: tokens emitted, drafts accepted, rows the target scored, drafts proposed, seconds spent."""

    emitted: int
    accepted: int
    rows: int
    drafted: int
    t_draft: float
    t_verify: float
    t_overhead: float


@dataclass(frozen=True)
class TreeRun:
    """New tokens (prompt excluded; cut to the length asked), every round, and the decoding time in seconds."""

    tokens: tuple[int, ...]
    rounds: tuple[TreeRound, ...]
    seconds: float

    @property
    def tokens_per_call(self) -> float:
        return sum(r.emitted for r in self.rounds) / len(self.rounds)


class PathModel:
    """A ``model(prefix) -> probabilities`` callable as a tree model: each node scored from its whole path.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, _ = toy_model_pair(exact=False)
    >>> model = PathModel(target)
    >>> state = model.start((0, 1))
    >>> rows = model.score_tree(state, [1, 0, 2], [-1, 0, 0])  # the pending 1, then two children
    >>> bool(np.allclose(rows[1], target((0, 1, 0))))
    True
    """

    def __init__(self, model: Model) -> None:
        self.model = _validate.model("model", model)

    def start(self, prompt: Sequence[int]) -> dict:
        prompt = _prompt(prompt)
        return {"kept": prompt[:-1], "nodes": []}

    def score_tree(self, state: dict, tokens: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        rows = []
        for token, parent in zip(tokens, parents):
            state["nodes"].append((int(token), int(parent)))
            rows.append(np.asarray(self.model(state["kept"] + self._path(state, len(state["nodes"]) - 1))))
        return np.array(rows)

    def keep(self, state: dict, indices: Sequence[int]) -> None:
        state["kept"] += tuple(state["nodes"][i][0] for i in indices)
        state["nodes"] = []

    @staticmethod
    def _path(state: dict, node: int) -> tuple[int, ...]:
        path: list[int] = []
        while node >= 0:
            token, node = state["nodes"][node]
            path.append(token)
        return tuple(reversed(path))


def tree_generate(
    target: TreeModel,
    draft: TreeModel,
    prompt: Sequence[int],
    max_new_tokens: int,
    shape: tuple | None = None,
    *,
    rule: str | NodeRule = "specinfer",
    verifier: Callable | None = None,
    policy: GammaPolicy | None = None,
    seed: int = 0,
    clock: Callable[[], float] = process_time,
) -> TreeRun:
    """Decode ``max_new_tokens`` tokens with token trees of ``shape`` (a ``trees`` shape) judged by ``rule``.

    ``target``, ``draft``: tree models (see the module). ``rule``: a node rule of
    ``trees.NODE_RULES`` (``"specinfer"``, ``"spectr"``, ``"top_k"``) or a ``NodeRule``;
    ``verifier``: instead, a chain rule with ``verify``'s signature (``verify_block``,
    ``verify_typical``, …), for chain shapes; ``policy``: instead of ``shape``, an adaptive-γ
    policy (``adaptive_gamma``) whose ``gamma`` sets each round's chain and which learns from it.
    ``shape=()`` is plain decoding (one target call per token).

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = (PathModel(m) for m in toy_model_pair(exact=False))
    >>> run = tree_generate(target, draft, (0,), 12, tree_shape((2, 1)), seed=1)
    >>> len(run.tokens), all(1 <= r.emitted <= 3 and r.rows == 5 for r in run.rounds)
    (12, True)
    """
    max_new_tokens = _validate.count("max_new_tokens", max_new_tokens, minimum=1)
    if (shape is None) == (policy is None):
        raise ValueError("shape, policy: give exactly one (a tree shape, or an adaptive-γ policy)")
    if shape is not None:
        _check_shape(shape)
    rule = node_rule(rule)
    rng = np.random.default_rng(seed)
    prompt = _prompt(prompt)
    target_state, draft_state = target.start(prompt), draft.start(prompt)
    pending, feed = prompt[-1], [prompt[-1]]  # feed: tokens the draft has yet to read
    tokens: list[int] = []
    rounds: list[TreeRound] = []
    start = clock()
    while len(tokens) < max_new_tokens:
        t0 = clock()
        round_shape = tree_shape((1,) * policy.gamma) if policy is not None else shape
        assert round_shape is not None  # exactly one of shape, policy was given
        nodes, q_rows, draft_index = _draft(draft, draft_state, feed, round_shape, rule, rng)
        t1 = clock()
        p_rows = target.score_tree(
            target_state, [pending] + [t for t, _ in nodes], [-1] + [parent + 1 for _, parent in nodes]
        )
        t2 = clock()
        path, final = _verify(nodes, p_rows, q_rows, rule, verifier, rng)
        target.keep(target_state, [0] + [i + 1 for i in path])
        scored = [draft_index[i] for i in path if i in draft_index]
        draft.keep(draft_state, list(range(len(feed))) + scored)
        feed = [nodes[path[-1]][0], final] if path and path[-1] not in draft_index else [final]
        emitted = [nodes[i][0] for i in path] + [final]
        tokens += emitted
        pending = final
        if policy is not None and nodes:
            policy.update(len(nodes), len(path))
        t3 = clock()
        rounds.append(
            TreeRound(len(emitted), len(path), len(nodes) + 1, len(nodes), t1 - t0, t2 - t1, t3 - t2)
        )
    return TreeRun(tuple(tokens[:max_new_tokens]), tuple(rounds), clock() - start)


def _draft(
    draft: TreeModel, state: Any, feed: list[int], shape: tuple, rule: NodeRule, rng: np.random.Generator
) -> tuple[list[tuple[int, int]], dict[int, np.ndarray], dict[int, int]]:
    """Grow the round's tree: returns nodes [(token, parent node or −1)], q rows by node (−1: root), draft indices."""
    rows = draft.score_tree(state, feed, list(range(-1, len(feed) - 1)))
    q_rows, draft_index = {-1: rows[-1]}, {-1: len(feed) - 1}
    nodes: list[tuple[int, int]] = []
    frontier, placed = [(-1, shape)], len(feed)
    while frontier:
        grown = []
        for node, node_shape in frontier:
            q = q_rows[node]
            if rule.ranked:
                picks = top_k_candidates(q, len(node_shape))
            else:
                picks = [sample_token(q, rng) for _ in node_shape]
            for token, child_shape in zip(picks, node_shape):
                nodes.append((int(token), node))
                grown.append((len(nodes) - 1, child_shape))
        frontier = [(i, s) for i, s in grown if s]  # only nodes that get children need q
        if frontier:
            rows = draft.score_tree(
                state, [nodes[i][0] for i, _ in frontier], [draft_index[nodes[i][1]] for i, _ in frontier]
            )
            for row, (i, _) in zip(rows, frontier):
                q_rows[i], draft_index[i] = row, placed
                placed += 1
    del draft_index[-1]
    return nodes, q_rows, draft_index


def _verify(
    nodes: list[tuple[int, int]],
    p_rows: np.ndarray,
    q_rows: dict[int, np.ndarray],
    rule: NodeRule,
    verifier: Callable | None,
    rng: np.random.Generator,
) -> tuple[list[int], int]:
    """Walk down from the root: (accepted node indices, final token)."""
    children: dict[int, list[int]] = {-1: []}
    for i, (_, parent) in enumerate(nodes):
        children.setdefault(parent, []).append(i)
        children.setdefault(i, [])
    if verifier is not None:  # a chain rule judges the whole chain at once
        if any(parent != i - 1 for i, (_, parent) in enumerate(nodes)):
            raise ValueError("verifier: a chain rule needs a chain shape, tree_shape((1,) * γ)")
        chain = list(range(len(nodes)))
        verdict = verifier(
            [token for token, _ in nodes],
            [p_rows[i + 1] for i in [-1] + chain],
            [q_rows[i] for i in [-1] + chain[:-1]],
            rng,
        )
        return chain[: verdict.num_accepted], verdict.tokens[-1]
    path: list[int] = []
    node = -1
    while children[node]:
        kids = children[node]
        verdict = rule.verify([nodes[i][0] for i in kids], p_rows[node + 1], q_rows[node], rng)
        if verdict.accepted is None:
            return path, verdict.token
        node = kids[verdict.accepted]
        path.append(node)
    return path, sample_token(p_rows[node + 1], rng)


def _prompt(prompt: Sequence[int]) -> tuple[int, ...]:
    tokens = tuple(_validate.count(f"prompt[{i}]", t) for i, t in enumerate(prompt))
    if not tokens:
        raise ValueError("prompt: need at least one token")
    return tokens
