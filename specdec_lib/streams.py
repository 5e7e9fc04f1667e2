"""Exact laws of whole token streams: plain sampling versus repeated speculative rounds.

A *model* is a callable ``model(prefix: tuple[int, ...]) -> probability vector``. With
``Fraction`` models every probability here is an exact ``Fraction``, so the theorem
"speculative decoding emits the target's stream law" is checked by ``==``, not by a
tolerance. Enumeration is exponential in the length: meant for toy vocabularies.
"""

from __future__ import annotations

from collections import defaultdict

from . import _validate
from .distributions import acceptance_probabilities, correction_distribution


def target_stream_distribution(target, prefix, length):
    r"""Law of the next ``length`` tokens under plain sampling from ``target``.

    :math:`P(x_{1..n}) = \prod_j p(x_j \mid \text{prefix}, x_{<j})`, the product of conditionals.

    Returns a dict mapping each continuation (tuple of ids) to its probability;
    continuations of probability 0 are omitted.

    >>> from fractions import Fraction as F
    >>> coin = lambda prefix: [F(1, 2), F(1, 2)]
    >>> target_stream_distribution(coin, (), 2)
    {(0, 0): Fraction(1, 4), (0, 1): Fraction(1, 4), (1, 0): Fraction(1, 4), (1, 1): Fraction(1, 4)}
    """
    target = _validate.model("target", target)
    prefix = _validate.prefix(prefix)
    length = _validate.count("length", length)
    streams = {(): 1}
    for _ in range(length):
        longer = {}
        for stream, mass in streams.items():
            for token, prob in enumerate(target(prefix + stream)):
                if prob > 0:
                    longer[stream + (token,)] = mass * prob
        streams = longer
    return streams


def round_distribution(target, draft, prefix, gamma, limit=None):
    r"""Exact law of what one strict speculative round emits from ``prefix``.

    Enumerates every draft path :math:`x_i \sim q(\cdot \mid \text{prefix}, x_{<i})`, every
    accept branch (probability :math:`q(x)\min(1, p(x)/q(x))`) and every reject branch
    followed by a correction from the residual :math:`[p - q]_+`, and the bonus token
    from the last target row when all γ drafts are accepted. Returns a dict: emitted
    tuple -> probability. With ``limit``, rounds are cut after ``limit`` tokens (the
    rest of the round is summed out), which keeps stream enumeration small.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> law = round_distribution(target, draft, (0,), 1)
    >>> sum(law.values())
    Fraction(1, 1)
    >>> law[(1,)]  # the draft was rejected; the residual puts all its mass on token 1
    Fraction(1, 6)
    """
    target, draft = _validate.model("target", target), _validate.model("draft", draft)
    return _round(target, draft, _validate.prefix(prefix), _validate.count("gamma", gamma),
                  None if limit is None else _validate.count("limit", limit, minimum=1))


def _round(target, draft, prefix, gamma, limit):
    law = defaultdict(int)

    def branch(accepted, mass):
        if limit is not None and len(accepted) >= limit:
            law[accepted[:limit]] += mass
            return
        p = target(prefix + accepted)
        if len(accepted) == gamma:  # every draft accepted: the bonus token
            for token, prob in enumerate(p):
                if prob > 0:
                    law[accepted + (token,)] += mass * prob
            return
        q = draft(prefix + accepted)
        if len(p) != len(q):
            raise ValueError(f"target, draft: vocabulary sizes differ at prefix {prefix + accepted} "
                             f"({len(p)} vs {len(q)})")
        accept = acceptance_probabilities(p, q)
        reject = sum((qx * (1 - ax) for qx, ax in zip(q, accept) if qx > 0), start=0 * q[0])
        for token, (qx, ax) in enumerate(zip(q, accept)):
            if qx > 0 and ax > 0:
                branch(accepted + (token,), mass * qx * ax)
        if reject > 0:
            for token, rx in enumerate(correction_distribution(p, q)):
                if rx > 0:
                    law[accepted + (token,)] += mass * reject * rx

    branch((), 1)
    return dict(law)


def exact_stream_distribution(target, draft, prefix, gamma, length):
    r"""Law of the first ``length`` tokens emitted by repeated strict speculative rounds.

    Each round drafts γ tokens from ``draft``, verifies them against ``target`` and
    continues from the emitted prefix (see ``round_distribution``). Leviathan et al.
    (2023) prove every round emits target-distributed tokens, so with Fraction models
    ``exact_stream_distribution(...) == target_stream_distribution(target, prefix, length)``
    holds exactly.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> exact_stream_distribution(target, draft, (1,), 2, 3) == target_stream_distribution(target, (1,), 3)
    True
    """
    target, draft = _validate.model("target", target), _validate.model("draft", draft)
    prefix = _validate.prefix(prefix)
    gamma = _validate.count("gamma", gamma)
    length = _validate.count("length", length)
    streams, done = {(): 1}, defaultdict(int)
    while streams:
        unfinished = defaultdict(int)
        for stream, mass in streams.items():
            if len(stream) >= length:
                done[stream] += mass  # the same stream can finish after different numbers of rounds
                continue
            for emitted, prob in _round(target, draft, prefix + stream, gamma, length - len(stream)).items():
                unfinished[stream + emitted] += mass * prob
        streams = unfinished
    return dict(done)
