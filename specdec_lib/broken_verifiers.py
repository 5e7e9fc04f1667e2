"""Planted bugs: verifiers with ``verify``'s signature that each get one detail wrong.

Each is a slip that is easy to make when Algorithm 1 is written into a real serving
stack. They are negative controls: ``check_verifier`` must reject every one of them with
a reason.
``BROKEN_VERIFIERS`` maps a name to ``(verifier, description of the bug)``.
``BROKEN_VARIANTS`` does the same for the exact variants (block, multi-draft, token tree, top-k, SpecTr): each
``PlantedVariantBug`` carries a broken sampler and its broken exact distribution.

>>> always_accept, bug = BROKEN_VERIFIERS["always_accept"]
>>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
>>> always_accept([2, 2], [p, p, p], [q, q], rng=0).num_accepted  # p(2) = 0.1 < q(2), kept anyway
2
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from . import spectr, top_k, trees, variants
from ._types import Model, Probabilities, Seed
from .sampling import sample_token
from .transforms import sampling_transform
from .verification import VerifiedRound

MISMATCHED_TEMPERATURE = 0.5  # the temperature the buggy verifier applies to the target rows


def _normalised(weights: np.ndarray) -> np.ndarray:
    return weights / weights.sum()


def _correct_residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return _normalised(np.maximum(p - q, 0.0))


def _round(
    draft_tokens: Any,
    target_probs: Any,
    draft_probs: Any,
    rng: Seed = None,
    *,
    accept: Callable[[float, float], float] = lambda p, q: min(1.0, p / q),
    correction: Callable[[np.ndarray, np.ndarray], np.ndarray] = _correct_residual,
    bonus_row: int = -1,
    bonus: bool = True,
    keep_later_drafts: bool = False,
    target_transform: Callable[[np.ndarray], np.ndarray] = lambda p: p,
    draft_transform: Callable[[np.ndarray], np.ndarray] = lambda q: q,
    unchecked: int = 0,
) -> VerifiedRound:
    """Algorithm 1 of Leviathan et al. (2023) with every detail a keyword, so a bug is one argument."""
    rng = np.random.default_rng(rng)
    p_rows = [target_transform(np.asarray(p, dtype=float)) for p in target_probs]
    q_rows = [draft_transform(np.asarray(q, dtype=float)) for q in draft_probs]
    emitted = []
    for i, (x, p, q) in enumerate(zip(draft_tokens, p_rows, q_rows)):
        if i < unchecked or rng.random() < accept(p[x], q[x]):
            emitted.append(int(x))
            continue
        emitted.append(sample_token(correction(p, q), rng))
        if keep_later_drafts:
            emitted += [int(t) for t in draft_tokens[i + 1 :]]
        return VerifiedRound(tuple(emitted), i, bonus=False)
    if bonus:
        emitted.append(sample_token(p_rows[bonus_row], rng))
    return VerifiedRound(tuple(emitted), len(emitted) - bonus, bonus=bonus)


BROKEN_VERIFIERS = {
    "correction_from_target": (
        partial(_round, correction=lambda p, q: p),
        "After a rejection the correction is drawn from the target p instead of the residual "
        "[p − q]+: the 'just resample from the big model' shortcut. Tokens the draft over-proposes "
        "come out too often.",
    ),
    "residual_reversed": (
        partial(_round, correction=lambda p, q: _normalised(np.maximum(q - p, 0.0))),
        "The residual is computed as [q − p]+ (operands swapped), so corrections favour exactly the "
        "tokens the draft already over-proposes.",
    ),
    "always_accept": (
        partial(_round, accept=lambda p, q: 1.0),
        "Every draft token is accepted: verification is skipped or its comparison is always true, "
        "so the output follows the draft, not the target.",
    ),
    "ratio_inverted": (
        partial(_round, accept=lambda p, q: min(1.0, q / p) if p > 0 else 1.0),
        "The acceptance test uses q(x)/p(x) instead of p(x)/q(x), rewarding tokens the target dislikes.",
    ),
    "no_bonus": (
        partial(_round, bonus=False),
        "When all γ drafts are accepted no bonus token is sampled from the target's last row: the "
        "output distribution survives, but every fully accepted round gives up a token that the "
        "verification call had already paid for.",
    ),
    "bonus_from_wrong_row": (
        partial(_round, bonus_row=-2),
        "The bonus token is drawn from the target row of the last draft position instead of the row "
        "after it: an off-by-one in indexing the target's logits.",
    ),
    "temperature_mismatch": (
        partial(_round, target_transform=partial(sampling_transform, temperature=MISMATCHED_TEMPERATURE)),
        f"The target rows are warped with temperature {MISMATCHED_TEMPERATURE} inside verification while "
        "the caller's target is at temperature 1: a logits processor applied on one path only.",
    ),
    "keeps_drafts_after_rejection": (
        partial(_round, keep_later_drafts=True),
        "After a rejection the correction is emitted but the later drafts are kept too, although they "
        "were drafted from a prefix that no longer exists.",
    ),
}


# --- planted off-by-ones in the exact variants (``specdec_lib.variants``, ``specdec_lib.trees``) ----


@dataclass(frozen=True)
class PlantedVariantBug:
    """One slip in an exact variant, as a drop-in for both of its halves.

    ``verifier`` has the signature of the variant's sampler and ``exact`` that of its exact
    distribution (``block_emitted_distribution``, ``multi_draft_output_distribution`` or
    ``tree_round_distribution``), so the test that proves the variant exact must reject it.
    """

    verifier: Callable[..., Any]
    exact: Callable[..., Any]
    description: str


def _rows_read_late(rule: Callable[..., Any]) -> Callable[..., Any]:
    """``rule`` handed the target rows one position late: row i+1 for draft i (the last row repeated)."""

    def shifted(draft_tokens: Any, target_probs: Any, draft_probs: Any, *args: Any, **kwargs: Any) -> Any:
        rows = list(target_probs)
        return rule(draft_tokens, rows[1:] + rows[-1:], draft_probs, *args, **kwargs)

    return shifted


def _parent_row(model: Model) -> Model:
    """``model`` read one token short: the row of the node's parent (the root keeps its own)."""
    return lambda prefix: model(prefix[:-1] if len(prefix) > 1 else prefix)


def _stale_residuals(p: Probabilities, q: Probabilities, k: int) -> list[Any]:
    """The residual sequence with its last update dropped: p_1..p_k, p_k."""
    residuals = trees._residuals(p, q, k)
    return residuals[:-1] + residuals[-2:-1]


def _multi_draft_stale(
    candidates: Any, target_probs: Probabilities, draft_probs: Probabilities, rng: Seed = None
) -> trees.MultiDraftVerdict:
    rng = np.random.default_rng(rng)
    p, q = np.asarray(target_probs, dtype=float), np.asarray(draft_probs, dtype=float)
    residuals = _stale_residuals(p, q, len(candidates))
    for i, x in enumerate(candidates):
        if rng.random() < residuals[i][x] / q[x]:
            return trees.MultiDraftVerdict(int(x), i)
    return trees.MultiDraftVerdict(sample_token(residuals[-1], rng), None)


def _multi_draft_stale_distribution(p: Probabilities, q: Probabilities, k: int) -> list[Any]:
    accepted, correction = trees._steps(_stale_residuals(p, q, k), q)
    return [sum(column) + c for column, c in zip(zip(*accepted), correction)]


_TOP_K_LATE = trees.NodeRule(
    "top_k_renormalised_late",
    partial(top_k.verify_top_k, _lag=1),
    partial(top_k.top_k_steps, _lag=1),
    ranked=True,
)
_SPECTR_SHORT = trees.NodeRule(
    "spectr_residual_one_term_short",
    partial(spectr.verify_spectr, _short=1),
    partial(spectr.spectr_steps, _short=1),
)

BROKEN_VARIANTS = {
    "block_rows_read_late": PlantedVariantBug(
        _rows_read_late(variants.verify_block),
        _rows_read_late(variants.block_emitted_distribution),
        "Block verification reads the target row one position late (row i+1 for draft i): the "
        "off-by-one of slicing the γ+1 scored logits from the wrong end.",
    ),
    "multi_draft_stale_residual": PlantedVariantBug(
        _multi_draft_stale,
        _multi_draft_stale_distribution,
        "After all k candidates are rejected the correction is drawn from the residual before the "
        "last update (p_k instead of p_{k+1}), so it can repeat what the last candidate was rejected for.",
    ),
    "tree_parent_row": PlantedVariantBug(
        lambda tree, target, draft, prefix=(), rng=None: trees.verify_tree(
            tree, _parent_row(target), draft, prefix, rng
        ),
        lambda target, draft, prefix, shape: trees.tree_round_distribution(
            _parent_row(target), draft, prefix, shape
        ),
        "Token-tree verification scores each node with its parent's target row: the tree-attention "
        "mask or position ids shifted by one level.",
    ),
    "top_k_renormalised_late": PlantedVariantBug(
        partial(top_k.verify_top_k, _lag=1),
        lambda target, draft, prefix, shape: trees.tree_round_distribution(
            target, draft, prefix, shape, rule=_TOP_K_LATE
        ),
        "Top-k verification renormalises p without the last rejected candidate: candidate i is "
        "accepted with p(c_i)/(1 − Σ_{j<i−1} p(c_j)), one rejection behind.",
    ),
    "spectr_residual_one_term_short": PlantedVariantBug(
        partial(spectr.verify_spectr, _short=1),
        lambda target, draft, prefix, shape: trees.tree_round_distribution(
            target, draft, prefix, shape, rule=_SPECTR_SHORT
        ),
        "SpecTr's residual subtracts the acceptance of k − 1 candidates instead of k: the geometric "
        "sum Σ_{i<k} (1 − β)^i stops one term early.",
    ),
}
