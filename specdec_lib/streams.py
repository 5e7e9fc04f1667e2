"""Exact laws of whole token streams: plain sampling versus repeated speculative rounds.

A *model* is a callable ``model(prefix: tuple[int, ...]) -> probability vector``. With
``Fraction`` models every probability here is an exact ``Fraction``, so the theorem
"speculative decoding emits the target's stream law" is checked by ``==``, not by a
tolerance. Enumeration is exponential in the length: meant for toy vocabularies.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from . import _validate
from ._types import Law, Model, Number, Prefix, RoundLaw, Rule
from .distributions import acceptance_probabilities, correction_distribution


def target_stream_distribution(target: Model, prefix: Prefix, length: int) -> Law:
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
    streams: Law = {(): 1}
    for _ in range(length):
        longer = {}
        for stream, mass in streams.items():
            for token, prob in enumerate(target(prefix + stream)):
                if prob > 0:
                    longer[stream + (token,)] = mass * prob
        streams = longer
    return streams


def round_distribution(
    target: Model,
    draft: Model,
    prefix: Prefix,
    gamma: int,
    limit: int | None = None,
    *,
    emitted_distribution: Rule | None = None,
) -> Law:
    r"""Exact law of what one speculative round emits from ``prefix``: strict, or any rule given exactly.

    Enumerates every draft path :math:`x_i \sim q(\cdot \mid \text{prefix}, x_{<i})`, every
    accept branch (probability :math:`q(x)\min(1, p(x)/q(x))`) and every reject branch
    followed by a correction from the residual :math:`[p - q]_+`, and the bonus token
    from the last target row when all γ drafts are accepted. Returns a dict: emitted
    tuple -> probability. With ``limit``, rounds are cut after ``limit`` tokens (the
    rest of the round is summed out), which keeps stream enumeration small.

    ``emitted_distribution(drafts, target_rows, draft_rows) -> {emitted tuple: probability}``
    replaces strict verification by another rule (e.g. ``variants.block_emitted_distribution``):
    the round's law is then :math:`\sum_{x_{1..\gamma}} \prod_i q(x_i \mid x_{<i})\,
    E(\cdot \mid x_{1..\gamma})`, every draft path weighted by its probability under q.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> law = round_distribution(target, draft, (0,), 1)
    >>> sum(law.values())
    Fraction(1, 1)
    >>> law[(1,)]  # the draft was rejected; the residual puts all its mass on token 1
    Fraction(1, 6)
    """
    target, draft = _validate.model("target", target), _validate.model("draft", draft)
    prefix, gamma = _validate.prefix(prefix), _validate.count("gamma", gamma)
    limit = None if limit is None else _validate.count("limit", limit, minimum=1)
    if emitted_distribution is None:
        return _round(target, draft, prefix, gamma, limit)
    if not callable(emitted_distribution):
        raise ValueError(
            "emitted_distribution: expected a callable (drafts, target_rows, draft_rows) -> dict"
        )
    return _rule_round(target, draft, prefix, gamma, limit, emitted_distribution)


def _rule_round(
    target: Model, draft: Model, prefix: Prefix, gamma: int, limit: int | None, emitted_distribution: Rule
) -> Law:
    """Every draft path times the rule's exact verdict on it (cut after ``limit`` tokens)."""
    law: defaultdict[Prefix, Any] = defaultdict(int)
    paths: Law = {(): 1}
    for _ in range(gamma):
        paths = {
            path + (x,): mass * qx
            for path, mass in paths.items()
            for x, qx in enumerate(draft(prefix + path))
            if qx > 0
        }
    for path, mass in paths.items():
        p_rows = [target(prefix + path[:i]) for i in range(gamma + 1)]
        q_rows = [draft(prefix + path[:i]) for i in range(gamma)]
        for emitted, prob in emitted_distribution(list(path), p_rows, q_rows).items():
            law[emitted if limit is None else emitted[:limit]] += mass * prob
    return dict(law)


def _round(target: Model, draft: Model, prefix: Prefix, gamma: int, limit: int | None) -> Law:
    law: defaultdict[Prefix, Any] = defaultdict(int)

    def branch(accepted: Prefix, mass: Any) -> None:
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
            raise ValueError(
                f"target, draft: vocabulary sizes differ at prefix {prefix + accepted} ({len(p)} vs {len(q)})"
            )
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


def exact_stream_distribution(
    target: Model,
    draft: Model,
    prefix: Prefix,
    gamma: int,
    length: int,
    *,
    emitted_distribution: Rule | None = None,
) -> Law:
    r"""Law of the first ``length`` tokens emitted by repeated speculative rounds (strict by default).

    Each round drafts γ tokens from ``draft``, verifies them against ``target`` and
    continues from the emitted prefix (see ``round_distribution``). Leviathan et al.
    (2023) prove every round emits target-distributed tokens, so with Fraction models
    ``exact_stream_distribution(...) == target_stream_distribution(target, prefix, length)``
    holds exactly. ``emitted_distribution`` swaps in another verification rule, as in
    ``round_distribution``; ``stream_distribution`` takes any round law (token trees).

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> exact_stream_distribution(target, draft, (1,), 2, 3) == target_stream_distribution(target, (1,), 3)
    True
    """
    target, draft = _validate.model("target", target), _validate.model("draft", draft)
    gamma = _validate.count("gamma", gamma)
    if emitted_distribution is not None and not callable(emitted_distribution):
        raise ValueError(
            "emitted_distribution: expected a callable (drafts, target_rows, draft_rows) -> dict"
        )

    def one_round(at: Prefix, limit: int | None) -> Law:
        if emitted_distribution is None:
            return _round(target, draft, at, gamma, limit)
        return _rule_round(target, draft, at, gamma, limit, emitted_distribution)

    return _streams(one_round, prefix, length)


def stream_distribution(round_law: RoundLaw, prefix: Prefix, length: int) -> Law:
    r"""Law of the first ``length`` tokens emitted by repeated rounds, each with law ``round_law(prefix)``.

    ``round_law(prefix) -> {emitted tuple: probability}`` is the exact law of one round from
    ``prefix`` (e.g. ``trees.tree_round_distribution`` bound to a model pair and a tree shape);
    each round continues from the prefix the last one left. Rounds are cut at ``length`` tokens.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> law = lambda prefix: round_distribution(target, draft, prefix, 2)
    >>> stream_distribution(law, (1,), 3) == target_stream_distribution(target, (1,), 3)
    True
    """
    if not callable(round_law):
        raise ValueError("round_law: expected a callable prefix -> {emitted tuple: probability}")
    return _streams(lambda at, limit: dict(_summed(round_law(at), limit)), prefix, length)


def _summed(law: Law, limit: int | None) -> Any:
    """Items of ``law`` with emitted tuples cut at ``limit`` tokens, equal cuts summed."""
    cut: defaultdict[Prefix, Any] = defaultdict(int)
    for emitted, prob in law.items():
        if not emitted:
            raise ValueError("round_law: a round must emit at least one token")
        cut[emitted[:limit]] += prob
    return cut.items()


def _streams(one_round: Callable[[Prefix, int], Law], prefix: Prefix, length: int) -> Law:
    prefix = _validate.prefix(prefix)
    length = _validate.count("length", length)
    streams: Law = {(): 1}
    done: defaultdict[Prefix, Any] = defaultdict(int)
    while streams:
        unfinished: defaultdict[Prefix, Any] = defaultdict(int)
        for stream, mass in streams.items():
            if len(stream) >= length:
                done[stream] += mass  # the same stream can finish after different numbers of rounds
                continue
            for emitted, prob in one_round(prefix + stream, length - len(stream)).items():
                unfinished[stream + emitted] += mass * prob
        streams = unfinished
    return dict(done)


def stream_total_variation(a: Law, b: Law) -> Number:
    r"""Total variation between two stream laws (dicts): :math:`\tfrac12 \sum_s |a(s) - b(s)|`.

    Missing streams count as probability 0; exact for ``Fraction`` values.

    >>> from fractions import Fraction as F
    >>> stream_total_variation({(0,): F(1, 2), (1,): F(1, 2)}, {(0,): F(1)})
    Fraction(1, 2)
    """
    return sum((abs(a.get(s, 0) - b.get(s, 0)) for s in set(a) | set(b)), start=0) / 2


def expected_accepted(round_law: Law) -> Number:
    r"""Mean number of accepted drafts in one round: :math:`\sum_e (|e| - 1)\,P(e)` (one fewer than E[K]).

    >>> from fractions import Fraction as F
    >>> expected_accepted({(0,): F(1, 2), (0, 1): F(1, 2)})
    Fraction(1, 2)
    """
    return sum(((len(e) - 1) * v for e, v in round_law.items()), start=0)
