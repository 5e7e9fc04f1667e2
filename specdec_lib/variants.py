"""Other verification rules for one chain of γ drafts: block (exact), typical and lenient (lossy).

Each rule comes twice, from one description: a sampler with ``verify``'s signature
(``draft_tokens, target_probs, draft_probs, rng=None``, parameters as keywords) returning a
``VerifiedRound``, so ``check_verifier``, the stream enumeration and ``speculative_generate``
take it; and its ``*_emitted_distribution``: the exact distribution of the tokens the rule
emits given the drafts and rows (a dict: emitted tuple -> probability, ``Fraction`` values for
``Fraction`` rows). ``round_distribution(..., emitted_distribution=...)`` turns the latter into
the distribution of a whole round and ``exact_stream_distribution`` into that of a stream.

Rows follow ``verify``: ``target_probs[i]`` is p at the prefix extended by the first i drafts
(γ+1 rows), ``draft_probs[i]`` the q that draft i was sampled from (γ rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from . import _validate
from ._types import Law, Number, Prefix, Probabilities, Rows, Seed
from .distributions import correction_distribution
from .sampling import sample_token
from .verification import VerifiedRound

MEDUSA_EPSILON = 0.09  # Medusa's posterior_threshold default (FasterDecoding/Medusa, medusa_generate)
MEDUSA_DELTA = 0.3  # Medusa's posterior_alpha default, "recommended to be sqrt(posterior_threshold)"
DEFAULT_LENIENCE = 0.5  # an authored example value; Leviathan et al. (2023) fix none


# --- block verification (Sun et al. 2024, Algorithm 2) -------------------------------------------


def _block_weights(drafts: list[int], p_rows: list, q_rows: list) -> tuple[list, list]:
    """(w_0..w_γ, stopping chances ρ_1..ρ_γ) of block verification; exact for Fraction rows."""
    gamma, one = len(drafts), p_rows[0][0] * 0 + 1
    weights, chances = [one], []
    for i, x in enumerate(drafts, start=1):
        weights.append(min(one, weights[-1] * p_rows[i - 1][x] / q_rows[i - 1][x]))
        w = weights[-1]
        h = (
            w
            if i == gamma
            else sum((max(w * a - b, 0 * a) for a, b in zip(p_rows[i], q_rows[i])), start=0 * one)
        )
        chances.append(h / (h + 1 - w) if h > 0 else 0 * one)  # never stop where the residual is empty
    return weights, chances


def _block_residual(weight: Any, p: Probabilities, q: Probabilities) -> Probabilities:
    """The correction after stopping at τ < γ: max(w_τ p_{τ+1} − q_{τ+1}, 0), normalised."""
    if weight == 1:
        return correction_distribution(p, q)
    excess = [max(weight * a - b, 0 * a) for a, b in zip(p, q)]
    mass = sum(excess)
    return [e / mass for e in excess]


def verify_block(
    draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows, rng: Seed = None
) -> VerifiedRound:
    r"""Block verification (Sun et al. 2024, Algorithm 2): judge the drafts jointly, keep the longest prefix.

    With drafts :math:`x_1..x_\gamma`, rows :math:`p_i = p(\cdot \mid x_{<i})`,
    :math:`q_i = q(\cdot \mid x_{<i})`: :math:`w_0 = 1`, :math:`w_i = \min(1, w_{i-1} p_i(x_i)/q_i(x_i))`;
    :math:`h_i = \sum_y \max(w_i p_{i+1}(y) - q_{i+1}(y), 0)` for i < γ and :math:`h_\gamma = w_\gamma`.
    With independent uniforms :math:`\eta_i`, τ is the largest i with
    :math:`\eta_i \le h_i/(h_i + 1 - w_i)` (0 if none; never an i with :math:`h_i = 0`).
    Emit :math:`x_1..x_\tau`, then one token from :math:`\max(w_\tau p_{\tau+1} - q_{\tau+1}, 0)`
    normalised if τ < γ, or from :math:`p_{\gamma+1}` if τ = γ. Exact; in expectation it keeps at
    least as many drafts as ``verify`` (the paper proves it optimal). Same rows and result as ``verify``.

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> verify_block([2, 0], [p, p, p], [q, q], rng=0)
    VerifiedRound(tokens=(2, 0, 0), num_accepted=2, bonus=True)
    """
    drafts, p_rows, q_rows = _validate.verification_round(draft_tokens, target_probs, draft_probs)
    rng = np.random.default_rng(rng)
    weights, chances = _block_weights(drafts, p_rows, q_rows)
    passed = [i for i, chance in enumerate(chances, start=1) if rng.random() <= chance]
    tau = passed[-1] if passed else 0
    if tau == len(drafts):
        return VerifiedRound(tuple(drafts) + (sample_token(p_rows[-1], rng),), tau, bonus=True)
    correction = sample_token(_block_residual(weights[tau], p_rows[tau], q_rows[tau]), rng)
    return VerifiedRound(tuple(drafts[:tau]) + (correction,), tau, bonus=False)


def block_emitted_distribution(draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows) -> Law:
    r"""Exact distribution of what ``verify_block`` emits given its drafts and rows.

    :math:`P(\tau = i) = \rho_i \prod_{j > i} (1 - \rho_j)` with :math:`\rho_i = h_i/(h_i + 1 - w_i)`
    (:math:`\rho_0 = 1`), then the correction or bonus of ``verify_block``. On the binary example
    of Sun et al. (2024), p = (1/3, 2/3) and q = (2/3, 1/3) at every prefix with γ = 2, block
    verification keeps 11/9 drafts per round in expectation and token-wise ``verify`` 10/9:

    >>> from fractions import Fraction as F
    >>> from specdec_lib.streams import expected_accepted, round_distribution
    >>> target, draft = (lambda prefix: [F(1, 3), F(2, 3)]), (lambda prefix: [F(2, 3), F(1, 3)])
    >>> block = round_distribution(target, draft, (), 2, emitted_distribution=block_emitted_distribution)
    >>> expected_accepted(block), expected_accepted(round_distribution(target, draft, (), 2))
    (Fraction(11, 9), Fraction(10, 9))
    """
    drafts, p_rows, q_rows = _exact_round(draft_tokens, target_probs, draft_probs)
    weights, chances = _block_weights(drafts, p_rows, q_rows)
    gamma = len(drafts)
    out: Law = {}
    later_fail = 1 + 0 * weights[0]  # ∏_{j > i} (1 − ρ_j), built from the end
    for tau in range(gamma, -1, -1):
        chance = 1 if tau == 0 else chances[tau - 1]
        mass = chance * later_fail
        if mass > 0:
            row = p_rows[-1] if tau == gamma else _block_residual(weights[tau], p_rows[tau], q_rows[tau])
            _emit(out, tuple(drafts[:tau]), mass, row)
        if tau:
            later_fail *= 1 - chances[tau - 1]
    return out


# --- typical acceptance (Cai et al. 2024, Medusa) ------------------------------------------------


def _typical_threshold(p: Probabilities, epsilon: Number, delta: Number) -> float:
    """min(ε, δ·exp(−H(p))), H in nats (computed in float: exp is irrational)."""
    entropy = -sum(float(v) * math.log(float(v)) for v in p if v > 0)
    return min(float(epsilon), float(delta) * math.exp(-entropy))


def _typical_accepted(drafts: list[int], p_rows: list, epsilon: Number, delta: Number) -> int:
    """How many drafts in a row pass p(x) > min(ε, δ·exp(−H(p)))."""
    for i, x in enumerate(drafts):
        if not float(p_rows[i][x]) > _typical_threshold(p_rows[i], epsilon, delta):
            return i
    return len(drafts)


def verify_typical(
    draft_tokens: Sequence[int],
    target_probs: Rows,
    draft_probs: Rows,
    rng: Seed = None,
    *,
    epsilon: Number = MEDUSA_EPSILON,
    delta: Number = MEDUSA_DELTA,
) -> VerifiedRound:
    r"""Typical acceptance (Medusa, Cai et al. 2024): keep a draft the target finds plausible enough.

    Accept draft x at position i when :math:`p_i(x) > \min(\varepsilon, \delta\,e^{-H(p_i)})`, with
    :math:`H(p) = -\sum_y p(y)\ln p(y)`; stop at the first failure and emit one token drawn from
    :math:`p_i` itself (or the bonus from :math:`p_{\gamma+1}` after γ acceptances). q only
    proposes: it never enters the test, so the output follows neither p nor q in general (lossy).
    Defaults ε = 0.09, δ = 0.3 are Medusa's. When the threshold is ≥ 1 (for instance ε ≥ 1 and
    δ ≥ the vocabulary size) nothing is accepted and every token is drawn from p: exact, one
    token per round. This is the chain form of Medusa's sampling-path rule; Medusa verifies a tree
    of candidates and keeps the longest accepted path, and its released ``medusa_generate``
    defaults to temperature 0 (a candidate is kept when it equals the target's argmax). Here the
    token after the accepted drafts is drawn from p untruncated, so acceptance is the only
    departure from p.

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> verify_typical([1, 2], [p, p, p], [q, q], rng=0)  # threshold min(0.09, 0.3·e^−H) = 0.09: both pass
    VerifiedRound(tokens=(1, 2, 1), num_accepted=2, bonus=True)
    >>> verify_typical([1, 2], [p, p, p], [q, q], rng=0, epsilon=1, delta=3).num_accepted
    0
    """
    drafts, p_rows, _ = _validate.verification_round(draft_tokens, target_probs, draft_probs)
    epsilon, delta = _validate.nonnegative("epsilon", epsilon), _validate.nonnegative("delta", delta)
    rng = np.random.default_rng(rng)
    k = _typical_accepted(drafts, p_rows, epsilon, delta)
    return VerifiedRound(tuple(drafts[:k]) + (sample_token(p_rows[k], rng),), k, bonus=k == len(drafts))


def typical_emitted_distribution(
    draft_tokens: Sequence[int],
    target_probs: Rows,
    draft_probs: Rows,
    *,
    epsilon: Number = MEDUSA_EPSILON,
    delta: Number = MEDUSA_DELTA,
) -> Law:
    r"""Exact distribution of what ``verify_typical`` emits given its drafts and rows.

    The accepted prefix is fixed by the rows (k drafts pass :math:`p_i(x) > \min(\varepsilon,
    \delta e^{-H(p_i)})`); the last token follows :math:`p_{k+1}`. The threshold is compared in
    float; the probabilities are exact for ``Fraction`` rows.

    >>> from fractions import Fraction as F
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    >>> typical_emitted_distribution([2], [p, p], [q], epsilon=F(1, 5))
    {(0,): Fraction(3, 5), (1,): Fraction(3, 10), (2,): Fraction(1, 10)}
    """
    drafts, p_rows, _ = _exact_round(draft_tokens, target_probs, draft_probs)
    epsilon, delta = _validate.nonnegative("epsilon", epsilon), _validate.nonnegative("delta", delta)
    k = _typical_accepted(drafts, p_rows, epsilon, delta)
    out: Law = {}
    _emit(out, tuple(drafts[:k]), 1, p_rows[k])
    return out


# --- lenient acceptance (Leviathan et al. 2023, Appendix A.5) ------------------------------------


def _lenient_accept(p_x: Any, q_x: Any, lenience: Number) -> Any:
    """min(1, p(x)/(l·q(x))); 1 at l = 0."""
    return 1 if lenience == 0 else min(1, p_x / (lenience * q_x))


def _lenient_correction(p: Probabilities, q: Probabilities, lenience: Number) -> Probabilities:
    """[p − l·q]+ normalised (``correction_distribution`` at l = 1)."""
    if lenience == 1:
        return correction_distribution(p, q)
    excess = [max(a - lenience * b, 0 * a) for a, b in zip(p, q)]
    mass = sum(excess)  # >= 1 − l > 0
    return [e / mass for e in excess]


def verify_lenient(
    draft_tokens: Sequence[int],
    target_probs: Rows,
    draft_probs: Rows,
    rng: Seed = None,
    *,
    lenience: Number = DEFAULT_LENIENCE,
) -> VerifiedRound:
    r"""Lenient verification (Leviathan et al. 2023, Appendix A.5) with lenience l ∈ [0, 1].

    Accept draft x with probability :math:`\min(1, p(x)/(l\,q(x)))`; at the first rejection emit a
    token from :math:`[p - l\,q]_+` normalised and stop; after γ acceptances the bonus from the last
    target row. Per position this is the rule of ``lenient_acceptance_rate`` and
    ``lenient_output_distribution``. In this parametrisation (the paper's) l = 1 is strict
    verification (exact) and every l < 1 is lossy, drifting toward q (l = 0 accepts every draft).
    (Writing the rule with 1/l instead, lossiness is l > 1.)

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> verify_lenient([2, 2], [p, p, p], [q, q], rng=0, lenience=0)  # l = 0 keeps every draft
    VerifiedRound(tokens=(2, 2, 0), num_accepted=2, bonus=True)
    >>> from specdec_lib import verify
    >>> verify_lenient([1, 2], [p, p, p], [q, q], rng=0, lenience=1) == verify([1, 2], [p, p, p], [q, q], rng=0)
    True
    """
    drafts, p_rows, q_rows = _validate.verification_round(draft_tokens, target_probs, draft_probs)
    lenience = float(_validate.probability("lenience", lenience))
    rng = np.random.default_rng(rng)
    for i, x in enumerate(drafts):
        if rng.random() < _lenient_accept(p_rows[i][x], q_rows[i][x], lenience):
            continue
        correction = sample_token(_lenient_correction(p_rows[i], q_rows[i], lenience), rng)
        return VerifiedRound(tuple(drafts[:i]) + (correction,), i, bonus=False)
    return VerifiedRound(tuple(drafts) + (sample_token(p_rows[-1], rng),), len(drafts), bonus=True)


def lenient_emitted_distribution(
    draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows, *, lenience: Number = DEFAULT_LENIENCE
) -> Law:
    r"""Exact distribution of what ``verify_lenient`` emits given its drafts and rows.

    :math:`P(k \text{ accepted}, y) = \prod_{j \le k} a_j \cdot (1 - a_{k+1})\, r_{k+1}(y)` with
    :math:`a_j = \min(1, p_j(x_j)/(l\,q_j(x_j)))` and r the lenient correction; the bonus after γ.

    >>> from fractions import Fraction as F
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    >>> lenient_emitted_distribution([2], [p, p], [q], lenience=F(1, 2))
    {(0,): Fraction(6, 13), (1,): Fraction(9, 65), (2, 0): Fraction(6, 25), (2, 1): Fraction(3, 25), (2, 2): Fraction(1, 25)}
    """
    drafts, p_rows, q_rows = _exact_round(draft_tokens, target_probs, draft_probs)
    lenience = _validate.probability("lenience", lenience)
    out: Law = {}
    reached: Any = 1
    for i, x in enumerate(drafts):
        accept = _lenient_accept(p_rows[i][x], q_rows[i][x], lenience)
        if accept < 1:
            _emit(
                out,
                tuple(drafts[:i]),
                reached * (1 - accept),
                _lenient_correction(p_rows[i], q_rows[i], lenience),
            )
        reached *= accept
        if reached == 0:
            return out
    _emit(out, tuple(drafts), reached, p_rows[-1])
    return out


# --- shared helpers -------------------------------------------------------------------------------


def _emit(out: Law, accepted: Prefix, mass: Any, row: Probabilities) -> None:
    """Add ``accepted + (y,)`` with probability mass·row[y] for every y in the row's support."""
    exact = isinstance(mass, (int, Fraction)) and all(_validate.is_exact(v) for v in row)
    for y, prob in enumerate(row):
        if prob > 0:
            key = accepted + (y,)
            value = mass * prob if exact else float(mass * prob)
            out[key] = out.get(key, 0) + value


def _exact_round(
    draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows
) -> tuple[list[int], list, list]:
    """``verification_round``'s checks, keeping ``Fraction`` rows exact when every row is exact."""
    try:
        drafts = [_validate.count(f"draft_tokens[{i}]", t) for i, t in enumerate(draft_tokens)]
        target_probs, draft_probs = list(target_probs), list(draft_probs)
    except TypeError:
        raise ValueError("draft_tokens, target_probs, draft_probs: expected sequences") from None
    exact = all(_validate.is_exact(v) for row in target_probs + draft_probs for v in row)
    if not exact:
        return _validate.verification_round(drafts, target_probs, draft_probs)
    if len(target_probs) != len(drafts) + 1 or len(draft_probs) != len(drafts):
        raise ValueError(
            f"target_probs, draft_probs: need γ+1 = {len(drafts) + 1} and γ = {len(drafts)} rows, "
            f"got {len(target_probs)} and {len(draft_probs)}"
        )
    p_rows = [_validate.distribution(f"target_probs[{i}]", r, exact=True) for i, r in enumerate(target_probs)]
    q_rows = [_validate.distribution(f"draft_probs[{i}]", r, exact=True) for i, r in enumerate(draft_probs)]
    vocab = len(p_rows[0])
    for name, rows in (("target_probs", p_rows), ("draft_probs", q_rows)):
        for i, row in enumerate(rows):
            if len(row) != vocab:
                raise ValueError(f"{name}[{i}]: has {len(row)} tokens, expected vocabulary size {vocab}")
    for i, x in enumerate(drafts):
        if x >= vocab or q_rows[i][x] == 0:
            raise ValueError(
                f"draft_tokens[{i}]: token {x} is outside the vocabulary or has draft probability 0"
            )
    return drafts, p_rows, q_rows
