"""Sampling transforms (temperature, top-k, nucleus top-p) and what a mismatch between them costs.

A verifier is exact only for the distributions it is given. If the drafts were sampled
under one transform and the verifier divides by q under another, the output follows
neither law; ``mismatched_output_distribution`` computes what it does follow and
``total_variation_distance`` measures how far that is from the target. ``decoding_distribution``
is what a decoder samples from: a transform, or the argmax at temperature 0.
"""

from __future__ import annotations

import numpy as np

from . import _validate
from ._types import FloatArray, Number, Probabilities
from .distributions import correction_distribution

TOP_P_TOLERANCE = 1e-12  # float round-off allowed when a cumulative mass reaches top_p


def sampling_transform(
    probs: Probabilities, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> FloatArray:
    r"""Temperature, then top-k, then nucleus top-p, each followed by renormalisation.

    Temperature: :math:`p_T(x) = p(x)^{1/T} / \sum_y p(y)^{1/T}` (T < 1 sharpens, T > 1
    flattens; zeros stay zero). Top-k keeps the k most probable tokens (ties go to the
    lower token id). Top-p keeps the smallest set of most probable tokens whose mass is
    at least ``top_p``. Tokens outside the kept set get probability 0; the rest are
    renormalised. Works in float and returns a float64 array.

    >>> sampling_transform([0.6, 0.3, 0.1], temperature=0.5).round(4).tolist()
    [0.7826, 0.1957, 0.0217]
    >>> sampling_transform([0.6, 0.3, 0.1], top_k=2).round(4).tolist()
    [0.6667, 0.3333, 0.0]
    >>> sampling_transform([0.6, 0.3, 0.1], top_p=0.9).round(4).tolist()
    [0.6667, 0.3333, 0.0]
    >>> sampling_transform([0.6, 0.3, 0.1], temperature=0)
    Traceback (most recent call last):
    ...
    ValueError: temperature: must be > 0, got 0.0
    """
    probs = _validate.distribution("probs", probs, exact=False)
    temperature = _validate.positive("temperature", temperature)
    with np.errstate(divide="ignore"):
        logits = np.log(probs) / temperature
    out = np.exp(logits - logits.max())  # stable even when p^(1/T) would underflow
    order = np.argsort(-out, kind="stable")  # most probable first, ties by token id
    keep = len(out)
    if top_k is not None:
        keep = min(keep, _validate.count("top_k", top_k, minimum=1))
    if top_p is not None:
        top_p = _validate.probability("top_p", top_p)
        if top_p == 0:
            raise ValueError("top_p: must lie in (0, 1], got 0")
        cumulative = np.cumsum(out[order[:keep]]) / out[order[:keep]].sum()
        keep = 1 + int(np.searchsorted(cumulative, float(top_p) - TOP_P_TOLERANCE))
    out[order[keep:]] = 0.0
    return out / out.sum()


def mismatched_output_distribution(p: Probabilities, q: Probabilities, proposal: Probabilities) -> FloatArray:
    r"""Law of the token one verification step emits when drafts are drawn from ``proposal`` but verified as if from q.

    :math:`\text{out}(y) = s(y)\min(1, p(y)/q(y)) + \big(\sum_x s(x)\,[1 - \min(1, p(x)/q(x))]\big)\, r(y)`
    with s the proposal and r the residual of p and q. With s = q it is
    ``output_distribution(p, q)`` = p; with s ≠ q (say the draft sampled at another
    temperature than the q the verifier was handed) it is not p.

    >>> p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    >>> mismatched_output_distribution(p, q, q).round(12).tolist()
    [0.6, 0.3, 0.1]
    >>> mismatched_output_distribution(p, q, [0.1, 0.2, 0.7]).round(12).tolist()
    [0.66, 0.2, 0.14]
    """
    p, q, _ = _validate.distribution_pair(p, q)
    proposal = _validate.distribution("proposal", proposal, exact=False)
    if len(proposal) != len(p):
        raise ValueError(f"proposal: has {len(proposal)} tokens, expected {len(p)}")
    _validate.proposable("proposal", proposal, q)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    accept = np.minimum(1.0, np.divide(p, q, out=np.zeros_like(p), where=q > 0))
    accepted = proposal * accept
    return accepted + (1.0 - float(accepted.sum())) * np.asarray(correction_distribution(p, q))


def total_variation_distance(p: Probabilities, q: Probabilities) -> Number:
    r"""How far apart two laws are: :math:`\mathrm{TV}(p, q) = \tfrac12 \sum_x |p(x) - q(x)| = 1 - \alpha`.

    The largest difference in probability the two laws give to any event.

    >>> round(total_variation_distance([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]), 12)
    0.4
    >>> from fractions import Fraction as F
    >>> total_variation_distance([F(1, 2), F(1, 2)], [F(1, 3), F(2, 3)])
    Fraction(1, 6)
    """
    p, q, exact = _validate.distribution_pair(p, q)
    if exact:
        return sum((abs(a - b) for a, b in zip(p, q)), start=0) / 2
    return 0.5 * float(np.abs(p - q).sum())


def decoding_distribution(
    probs: FloatArray, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> np.ndarray:
    """The distribution a decoder samples from: ``sampling_transform(probs, …)``, or at temperature 0 the argmax.

    Temperature 0 is greedy decoding: the one-hot row at the argmax, as
    :func:`~specdec_lib.greedy.argmax_distribution` gives without its input checks (the models'
    rows are valid by construction; top-k and top-p keep the argmax, so they change nothing). At
    temperature 1 with neither top-k nor top-p the row is returned as it is (the identity).

    >>> from specdec_lib import argmax_distribution
    >>> p = np.array([0.2, 0.5, 0.3])
    >>> decoding_distribution(p, temperature=0).tolist() == argmax_distribution(p).tolist() == [0.0, 1.0, 0.0]
    True
    >>> decoding_distribution(np.array([0.6, 0.3, 0.1]), temperature=0.5).round(4).tolist()
    [0.7826, 0.1957, 0.0217]
    """
    if _validate.nonnegative("temperature", temperature) == 0:
        onehot = np.zeros(len(probs))
        onehot[int(np.argmax(probs))] = 1.0
        return onehot
    if temperature == 1 and top_k is None and top_p is None:
        return probs
    return sampling_transform(probs, temperature, top_k, top_p)
