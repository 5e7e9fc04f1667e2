"""Several drafts per position and token trees built from them, under three exact node rules.

A *tree shape* is a nested tuple: a node is the tuple of its children's shapes, a leaf is ``()``
(``tree_shape`` builds one from branching factors per depth). A *drafted tree* has the same
nesting with tokens: a node is a tuple of ``(token, child node)`` pairs. A *node rule* decides
which child a node keeps (``NODE_RULES``): ``"specinfer"`` (SpecInfer's multi-round rule, the
default) and ``"spectr"`` (SpecTr's k-sequential selection, ``spectr``) need every node's
children drawn independently from the draft at that node's prefix (duplicates allowed);
``"top_k"`` (``top_k``) takes the draft's k most likely tokens instead, in rank order. Models are
callables ``model(prefix) -> probabilities`` as in ``streams``; the target scores the root and
every drafted node (``tree_size(shape) + 1`` positions), in one call with tree attention.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _validate
from ._types import Law, Model, Prefix, Probabilities, Seed
from .distributions import correction_distribution
from .sampling import sample_token
from .spectr import spectr_steps, verify_spectr
from .top_k import top_k_candidates, top_k_steps, verify_top_k
from .verification import VerifiedRound


@dataclass(frozen=True)
class MultiDraftVerdict:
    """What ``verify_multi_draft`` decided at one position.

    ``token``: the emitted token. ``accepted``: the index of the accepted candidate, or None
    when every candidate was rejected and ``token`` is a correction from the last residual.
    """

    token: int
    accepted: int | None


@dataclass(frozen=True)
class NodeRule:
    """How a tree node chooses among its k candidates, as a sampler and as an exact law.

    ``verify(candidates, target_probs, draft_probs, rng) -> MultiDraftVerdict``;
    ``steps(p, q, k) -> (accepted, correction)`` as ``multi_draft_steps`` returns them;
    ``ranked``: the candidates are the draft's top k (``top_k.top_k_candidates``), not k draws.
    """

    name: str
    verify: Callable
    steps: Callable
    ranked: bool = False


def node_rule(rule: str | NodeRule) -> NodeRule:
    """The ``NodeRule`` named ``rule`` (a key of ``NODE_RULES``), or ``rule`` itself if it is one.

    >>> node_rule("top_k").ranked
    True
    """
    if isinstance(rule, NodeRule):
        return rule
    if rule not in NODE_RULES:
        raise ValueError(f"rule: expected one of {sorted(NODE_RULES)} or a NodeRule, got {rule!r}")
    return NODE_RULES[rule]


def residual_sequence(p: Probabilities, q: Probabilities, k: int) -> list[Probabilities]:
    r"""The targets the k candidates are checked against: :math:`p_1 = p`, :math:`p_{i+1} = [p_i - q]_+` normalised.

    Returns :math:`p_1, \dots, p_{k+1}`; the last one is the correction distribution after k rejections.
    Where :math:`p_i = q` no rejection can happen, and :math:`p_{i+1} = p_i` stands in.

    >>> from fractions import Fraction as F
    >>> residual_sequence([F(1, 2), F(1, 2)], [F(3, 4), F(1, 4)], 2)
    [[Fraction(1, 2), Fraction(1, 2)], [Fraction(0, 1), Fraction(1, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    p, q, _ = _validate.distribution_pair(p, q)
    return _residuals(p, q, _validate.count("k", k, minimum=1))


def verify_multi_draft(
    candidates: Sequence[int], target_probs: Probabilities, draft_probs: Probabilities, rng: Seed = None
) -> MultiDraftVerdict:
    r"""Check k candidates for one position in turn against a shrinking residual (SpecInfer, Miao et al. 2024).

    ``candidates``: k token ids drawn independently from q = ``draft_probs`` (one row);
    ``target_probs``: the target row p at the same prefix. Candidate i is accepted with probability
    :math:`\min(1, p_i(x_i)/q(x_i))` where :math:`p_i` is the i-th entry of ``residual_sequence``;
    on rejection the next candidate meets :math:`p_{i+1} = [p_i - q]_+` normalised; after k
    rejections the token is drawn from :math:`p_{k+1}`. Each step is one strict step with target
    :math:`p_i`, so the token follows p exactly (``multi_draft_output_distribution``).

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> verify_multi_draft([2, 1], p, q, rng=0)
    MultiDraftVerdict(token=0, accepted=None)
    """
    p = _validate.distribution("target_probs", target_probs, exact=False)
    q = _validate.distribution("draft_probs", draft_probs, exact=False)
    if len(p) != len(q):
        raise ValueError(f"target_probs, draft_probs: length mismatch ({len(p)} vs {len(q)} tokens)")
    candidates = _candidates(candidates, q)
    residuals = _residuals(p, q, len(candidates))
    rng = np.random.default_rng(rng)
    for i, x in enumerate(candidates):
        if rng.random() < residuals[i][x] / q[x]:
            return MultiDraftVerdict(x, i)
    return MultiDraftVerdict(sample_token(residuals[-1], rng), None)


def multi_draft_steps(p: Probabilities, q: Probabilities, k: int) -> tuple[list[list], list]:
    r"""Exact verdict of ``verify_multi_draft`` with k fresh candidates from q, step by step.

    Returns ``(accepted, correction)``: ``accepted[i][x]`` is the probability that candidates
    1..i were rejected and candidate i+1 is x and accepted, :math:`\prod_{j \le i}(1-\alpha_j)\,
    \min(q(x), p_{i+1}(x))` with :math:`\alpha_j = \sum_x \min(q(x), p_j(x))`; ``correction[y]``
    that all k were rejected and y was drawn from :math:`p_{k+1}`.

    >>> from fractions import Fraction as F
    >>> accepted, correction = multi_draft_steps([F(1, 2), F(1, 2)], [F(3, 4), F(1, 4)], 2)
    >>> accepted, correction
    ([[Fraction(1, 2), Fraction(1, 4)], [Fraction(0, 1), Fraction(1, 16)]], [Fraction(0, 1), Fraction(3, 16)])
    """
    p, q, _ = _validate.distribution_pair(p, q)
    return _steps(_residuals(p, q, _validate.count("k", k, minimum=1)), q)


def _steps(residuals: list[Probabilities], q: Probabilities) -> tuple[list[list], list]:
    """(accepted masses per candidate, correction masses) of the multi-round rule, from its residual sequence."""
    reached: Any = 1
    accepted: list[list] = []
    for target in residuals[:-1]:
        kept = [min(a, b) for a, b in zip(q, target)]
        accepted.append([reached * v for v in kept])
        reached *= 1 - sum(kept)
    return accepted, [reached * v for v in residuals[-1]]


def multi_draft_output_distribution(p: Probabilities, q: Probabilities, k: int) -> list:
    r"""Distribution of the token ``verify_multi_draft`` emits: :math:`\sum_i \text{accepted}_i + \text{correction}`.

    It is p for every k (each step is a strict step with target :math:`p_i`).

    >>> from fractions import Fraction as F
    >>> p = [F(3, 5), F(3, 10), F(1, 10)]
    >>> multi_draft_output_distribution(p, [F(1, 5), F(3, 10), F(1, 2)], 3) == p
    True
    """
    accepted, correction = multi_draft_steps(p, q, k)
    return [sum(column) + c for column, c in zip(zip(*accepted), correction)]


def tree_shape(branching: Sequence[int]) -> tuple:
    """The shape of a full tree with ``branching[d]`` children under every node at depth d.

    ``(1,) * γ`` is one chain of γ drafts; ``(k,) + (1,) * (γ - 1)`` is k independent drafts of
    length γ; ``(2, 2)`` a binary tree of depth 2.

    >>> tree_shape((2, 1))
    (((),), ((),))
    >>> tree_size(tree_shape((2, 2)))
    6
    """
    branching = [_validate.count(f"branching[{d}]", b, minimum=1) for d, b in enumerate(branching)]
    shape: tuple = ()
    for b in reversed(branching):
        shape = (shape,) * b
    return shape


def tree_size(shape: tuple) -> int:
    """Number of draft nodes in a tree shape (or drafted tree); the target scores one more row.

    >>> tree_size(tree_shape((3,)))
    3
    """
    return sum(1 + tree_size(_child(node)) for node in shape)


def draft_tree(
    draft: Model, prefix: Sequence[int], shape: tuple, rng: Seed = None, *, rule: str | NodeRule = "specinfer"
) -> tuple:
    """Draw a tree of drafts: every node's children independently from ``draft`` at that node.

    Under a ranked rule (``rule="top_k"``) a node's children are the draft's top tokens there instead,
    most likely first, and ``rng`` is not used.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> _, draft = toy_model_pair()
    >>> draft_tree(draft, (0,), tree_shape((2, 1)), rng=0)
    ((1, ((0, ()),)), (0, ((0, ()),)))
    """
    draft, prefix = _validate.model("draft", draft), _validate.prefix(prefix)
    _check_shape(shape)
    ranked = node_rule(rule).ranked
    rng = np.random.default_rng(rng)

    def grow(path: Prefix, node_shape: tuple) -> tuple:
        if not node_shape:
            return ()
        q = np.asarray(draft(prefix + path), dtype=float)
        ranks = top_k_candidates(q, len(node_shape)) if ranked else None
        children = []
        for i, child_shape in enumerate(node_shape):
            x = ranks[i] if ranks is not None else sample_token(q, rng)
            children.append((x, grow(path + (x,), child_shape)))
        return tuple(children)

    return grow((), shape)


def verify_tree(
    tree: tuple,
    target: Model,
    draft: Model,
    prefix: Sequence[int] = (),
    rng: Seed = None,
    *,
    rule: str | NodeRule = "specinfer",
) -> VerifiedRound:
    r"""Verify a drafted token tree: a node rule at each node, down the accepted branch.

    At the node reached so far (prefix :math:`c`), its children's tokens are the candidates,
    checked with the rule's sampler (``verify_multi_draft`` by default, ``verify_spectr``,
    ``verify_top_k``) against :math:`p(\cdot \mid c)` and :math:`q(\cdot \mid c)`.
    An accepted child becomes the next node; when all are rejected the correction ends the round,
    and at a leaf a bonus token from :math:`p(\cdot \mid c)` does. A chain is ``verify``.
    ``tree`` comes from ``draft_tree`` (the same ``draft``, ``prefix`` and ``rule``); returns a ``VerifiedRound``
    whose ``num_accepted`` is the depth reached.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> tree = ((1, ((0, ()),)), (0, ((0, ()),)))
    >>> verify_tree(tree, target, draft, (0,), rng=0)
    VerifiedRound(tokens=(1, 0, 0), num_accepted=2, bonus=True)
    """
    target, draft, prefix = (
        _validate.model("target", target),
        _validate.model("draft", draft),
        _validate.prefix(prefix),
    )
    _check_shape(tree, drafted=True)
    verify_node = node_rule(rule).verify
    rng = np.random.default_rng(rng)
    path: Prefix = ()
    node = tree
    while node:
        verdict = verify_node([x for x, _ in node], target(prefix + path), draft(prefix + path), rng)
        path += (verdict.token,)
        if verdict.accepted is None:
            return VerifiedRound(path, len(path) - 1, bonus=False)
        node = node[verdict.accepted][1]
    bonus = sample_token(np.asarray(target(prefix + path), dtype=float), rng)
    return VerifiedRound(path + (bonus,), len(path), bonus=True)


def tree_round_distribution(
    target: Model, draft: Model, prefix: Sequence[int], shape: tuple, *, rule: str | NodeRule = "specinfer"
) -> Law:
    r"""Exact law of what one token-tree round emits from ``prefix`` (trees drawn by ``draft_tree``).

    At a node with children shapes :math:`s_1..s_k` and prefix c: with the steps of the node
    rule (``multi_draft_steps`` by default), candidate i is token x and accepted with probability
    ``accepted[i][x]``, and the round continues in shape :math:`s_i` from c + (x,);
    ``correction[y]`` ends it with y; a leaf ends it with a bonus y ~ p(· | c).
    Fraction models give exact results.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> from specdec_lib.streams import expected_accepted, round_distribution
    >>> target, draft = toy_model_pair()
    >>> tree_round_distribution(target, draft, (1,), tree_shape((1, 1))) == round_distribution(target, draft, (1,), 2)
    True
    >>> expected_accepted(tree_round_distribution(target, draft, (1,), tree_shape((2, 1))))
    Fraction(5909, 4800)
    """
    target, draft, prefix = (
        _validate.model("target", target),
        _validate.model("draft", draft),
        _validate.prefix(prefix),
    )
    _check_shape(shape)
    steps = node_rule(rule).steps
    law: defaultdict[Prefix, Any] = defaultdict(int)

    def walk(path: Prefix, node_shape: tuple, mass: Any) -> None:
        p = target(prefix + path)
        if not node_shape:
            for y, prob in enumerate(p):
                if prob > 0:
                    law[path + (y,)] += mass * prob
            return
        accepted, correction = steps(p, draft(prefix + path), len(node_shape))
        for child_shape, kept in zip(node_shape, accepted):
            for x, prob in enumerate(kept):
                if prob > 0:
                    walk(path + (x,), child_shape, mass * prob)
        for y, prob in enumerate(correction):
            if prob > 0:
                law[path + (y,)] += mass * prob

    walk((), shape, 1)
    return dict(law)


def _residuals(p: Probabilities, q: Probabilities, k: int) -> list[Probabilities]:
    residuals = [p]
    for _ in range(k):
        residuals.append(correction_distribution(residuals[-1], q))
    return residuals


def _child(node: tuple) -> tuple:
    """The shape below a shape node or a drafted ``(token, subtree)`` pair."""
    return node[1] if len(node) == 2 and isinstance(node[0], (int, np.integer)) else node


def _candidates(candidates: Sequence[int], q: Sequence | np.ndarray) -> list[int]:
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__len__") or len(candidates) == 0:
        raise ValueError("candidates: expected a non-empty sequence of token ids drawn from draft_probs")
    out = []
    for i, x in enumerate(candidates):
        x = _validate.count(f"candidates[{i}]", x)
        if x >= len(q) or q[x] == 0:
            raise ValueError(
                f"candidates[{i}]: token {x} is outside the vocabulary or has draft probability 0"
            )
        out.append(x)
    return out


def _check_shape(shape: Any, drafted: bool = False) -> None:
    what = (
        "tree: expected a drafted tree, a tuple of (token, subtree) pairs"
        if drafted
        else "shape: expected a tree shape, a nested tuple of child shapes (see tree_shape)"
    )
    if not isinstance(shape, tuple):
        raise ValueError(what)
    for node in shape:
        if drafted:
            if not (isinstance(node, tuple) and len(node) == 2 and isinstance(node[0], (int, np.integer))):
                raise ValueError(what)
            _check_shape(node[1], drafted)
        else:
            _check_shape(node)


NODE_RULES = {
    "specinfer": NodeRule("specinfer", verify_multi_draft, multi_draft_steps),
    "spectr": NodeRule("spectr", verify_spectr, spectr_steps),
    "top_k": NodeRule("top_k", verify_top_k, top_k_steps, ranked=True),
}
