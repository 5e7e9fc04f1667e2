"""Planted bugs: verifiers with ``verify``'s signature that each get one detail wrong.

Each is a slip that is easy to make when Algorithm 1 is written into a real serving
stack. They are negative controls: ``check_verifier`` must reject every one of them with
a reason.
``BROKEN_VERIFIERS`` maps a name to ``(verifier, description of the bug)``.

>>> always_accept, bug = BROKEN_VERIFIERS["always_accept"]
>>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
>>> always_accept([2, 2], [p, p, p], [q, q], rng=0).num_accepted  # p(2) = 0.1 < q(2), kept anyway
2
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .transforms import sampling_transform
from .sampling import sample_token
from .verification import VerifiedRound

MISMATCHED_TEMPERATURE = 0.5  # the temperature the buggy verifier applies to the target rows


def _normalised(weights):
    return weights / weights.sum()


def _correct_residual(p, q):
    return _normalised(np.maximum(p - q, 0.0))


def _round(draft_tokens, target_probs, draft_probs, rng=None, *, accept=lambda p, q: min(1.0, p / q),
           correction=_correct_residual, bonus_row=-1, bonus=True, keep_later_drafts=False,
           target_transform=lambda p: p) -> VerifiedRound:
    """Algorithm 1 of Leviathan et al. (2023) with every detail a keyword, so a bug is one argument."""
    rng = np.random.default_rng(rng)
    p_rows = [target_transform(np.asarray(p, dtype=float)) for p in target_probs]
    q_rows = [np.asarray(q, dtype=float) for q in draft_probs]
    emitted = []
    for i, (x, p, q) in enumerate(zip(draft_tokens, p_rows, q_rows)):
        if rng.random() < accept(p[x], q[x]):
            emitted.append(int(x))
            continue
        emitted.append(sample_token(correction(p, q), rng))
        if keep_later_drafts:
            emitted += [int(t) for t in draft_tokens[i + 1:]]
        return VerifiedRound(tuple(emitted), i, bonus=False)
    if bonus:
        emitted.append(sample_token(p_rows[bonus_row], rng))
    return VerifiedRound(tuple(emitted), len(emitted) - bonus, bonus=bonus)


BROKEN_VERIFIERS = {
    "correction_from_target": (
        partial(_round, correction=lambda p, q: p),
        "After a rejection the correction is drawn from the target p instead of the residual "
        "[p − q]+: the 'just resample from the big model' shortcut. Tokens the draft over-proposes "
        "come out too often."),
    "residual_reversed": (
        partial(_round, correction=lambda p, q: _normalised(np.maximum(q - p, 0.0))),
        "The residual is computed as [q − p]+ (operands swapped), so corrections favour exactly the "
        "tokens the draft already over-proposes."),
    "always_accept": (
        partial(_round, accept=lambda p, q: 1.0),
        "Every draft token is accepted: verification is skipped or its comparison is always true, "
        "so the output follows the draft, not the target."),
    "ratio_inverted": (
        partial(_round, accept=lambda p, q: min(1.0, q / p) if p > 0 else 1.0),
        "The acceptance test uses q(x)/p(x) instead of p(x)/q(x), rewarding tokens the target dislikes."),
    "no_bonus": (
        partial(_round, bonus=False),
        "When all γ drafts are accepted no bonus token is sampled from the target's last row: the "
        "output law survives, but every fully accepted round wastes the free token."),
    "bonus_from_wrong_row": (
        partial(_round, bonus_row=-2),
        "The bonus token is drawn from the target row of the last draft position instead of the row "
        "after it: an off-by-one in indexing the target's logits."),
    "temperature_mismatch": (
        partial(_round, target_transform=partial(sampling_transform, temperature=MISMATCHED_TEMPERATURE)),
        f"The target rows are warped with temperature {MISMATCHED_TEMPERATURE} inside verification while "
        "the caller's target is at temperature 1: a logits processor applied on one path only."),
    "keeps_drafts_after_rejection": (
        partial(_round, keep_later_drafts=True),
        "After a rejection the correction is emitted but the later drafts are kept too, although they "
        "were drafted from a prefix that no longer exists."),
}
