"""Generating text, plainly and speculatively, with every round's time split into draft, verify and overhead.

Both generators sample from the same law: the target's row passed through
:func:`~specdec_lib.transforms.decoding_distribution`
with the same settings (:func:`~specdec_lib.transforms.sampling_transform`, or the argmax at
temperature 0). The speculative one drafts γ tokens from the draft's transformed rows (q is
exactly what each draft token was sampled from), scores the pending token and the γ drafts in
one target call, verifies them with :func:`~specdec_lib.verification.verify_unchecked`
(``verify``'s own rule; ``verifier=`` swaps it, e.g. for ``verify_greedy``), and rolls both
caches back past whatever was rejected. The prompt is read before the clock starts; what is
timed is decoding. ``clock`` (default ``time.perf_counter``, wall time) can be any seconds
counter, e.g. ``time.process_time`` to leave out time a shared machine spent on other programs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from time import perf_counter
from typing import Any

import numpy as np

from . import _validate
from ._types import ScoringModel, Seed
from .corpus import decode
from .sampling import sample_token
from .transforms import decoding_distribution
from .verification import VerifiedRound, verify_unchecked

#: (drafts, target rows, draft rows, rng) -> the round's verdict, as ``verify`` decides it.
Verifier = Callable[[list[int], list[np.ndarray], list[np.ndarray], np.random.Generator], VerifiedRound]


@dataclass(frozen=True)
class RoundRecord:
    """One round of decoding and where its time went (seconds).

    ``accepted``: the verdict on each draft position verification reached, in order; a
    rejection (False) ends the round. ``emitted``: K, the tokens the round added.
    A plain decoding step is a round with γ = 0, no drafts and K = 1; its target call is
    booked as ``t_verify`` and its sampling as ``t_overhead``.
    """

    gamma: int
    accepted: tuple[bool, ...]
    emitted: int
    t_draft: float
    t_verify: float
    t_overhead: float

    @property
    def num_accepted(self) -> int:
        return sum(self.accepted)

    @property
    def wall(self) -> float:
        return self.t_draft + self.t_verify + self.t_overhead


@dataclass(frozen=True)
class Generation:
    """New tokens (prompt excluded), per-round records and the decoding wall time in seconds."""

    tokens: tuple[int, ...]
    rounds: tuple[RoundRecord, ...]
    wall: float

    @property
    def text(self) -> str:
        return decode(self.tokens)


def _start(model: ScoringModel, prompt: Iterable[int]) -> tuple[Any, int]:
    """A cache holding all of the prompt but its last token, which is scored by the first timed call."""
    prompt = [int(t) for t in prompt]
    if not prompt:
        raise ValueError("prompt: need at least one token")
    state = model.new_state()
    if len(prompt) > 1:
        model.score(state, prompt[:-1])
    return state, prompt[-1]


def autoregressive_generate(
    target: ScoringModel,
    prompt: Iterable[int],
    max_new_tokens: int,
    *,
    seed: Seed = 0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    clock: Callable[[], float] = perf_counter,
) -> Generation:
    """Plain decoding: one target call per token, each token sampled from the target row's :func:`decoding_distribution`.

    >>> from specdec_lib.corpus import encode
    >>> from specdec_lib.pair import build_model_pair
    >>> target, _ = build_model_pair()
    >>> out = autoregressive_generate(target, encode("the draft "), 5, seed=1)
    >>> len(out.tokens), len(out.rounds), out.rounds[0].gamma
    (5, 5, 0)
    """
    max_new_tokens = _validate.count("max_new_tokens", max_new_tokens, minimum=1)
    rng = np.random.default_rng(seed)
    state, pending = _start(target, prompt)
    tokens: list[int] = []
    rounds: list[RoundRecord] = []
    start = last = clock()
    while len(tokens) < max_new_tokens:
        p = decoding_distribution(target.score(state, [pending])[0], temperature, top_k, top_p)
        scored = clock()
        pending = sample_token(p, rng)
        tokens.append(pending)
        now = clock()
        rounds.append(RoundRecord(0, (), 1, 0.0, scored - last, now - scored))
        last = now
    return Generation(tuple(tokens), tuple(rounds), clock() - start)


def speculative_generate(
    target: ScoringModel,
    draft: ScoringModel,
    prompt: Iterable[int],
    max_new_tokens: int,
    gamma: int,
    *,
    seed: Seed = 0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    verifier: Verifier = verify_unchecked,
    clock: Callable[[], float] = perf_counter,
) -> Generation:
    """Speculative decoding: γ draft calls, one target call on γ+1 positions, verify, roll back.

    Output is cut to ``max_new_tokens``; the records keep every round whole. ``verifier`` decides
    each round from ``(drafts, target_rows, draft_rows, rng)`` and returns a ``VerifiedRound``;
    the default is strict verification (``verify_unchecked``). Any function with ``verify``'s
    signature works too; at ``temperature=0`` the rows are one-hot argmaxes, for ``verify_greedy``.

    >>> from specdec_lib.corpus import encode
    >>> from specdec_lib.pair import build_model_pair
    >>> target, draft = build_model_pair()
    >>> out = speculative_generate(target, draft, encode("the draft "), 20, gamma=4, seed=1)
    >>> len(out.tokens), all(1 <= r.emitted <= 5 for r in out.rounds)
    (20, True)
    """
    max_new_tokens = _validate.count("max_new_tokens", max_new_tokens, minimum=1)
    gamma = _validate.count("gamma", gamma, minimum=1)
    rng = np.random.default_rng(seed)
    target_state, pending = _start(target, prompt)
    draft_state, _ = _start(draft, prompt)
    draft_feed = [pending]  # tokens the draft has yet to read: one, or two after a bonus
    tokens: list[int] = []
    rounds: list[RoundRecord] = []
    start = last = clock()
    while len(tokens) < max_new_tokens:
        drafts, q_rows = [], []
        for _ in range(gamma):
            q = decoding_distribution(draft.score(draft_state, draft_feed)[-1], temperature, top_k, top_p)
            draft_feed = [sample_token(q, rng)]
            drafts.append(draft_feed[0])
            q_rows.append(q)
        drafted = clock()
        base = target_state.length
        p_rows = [
            decoding_distribution(row, temperature, top_k, top_p)
            for row in target.score(target_state, [pending] + drafts)
        ]
        scored = clock()
        verified = verifier(drafts, p_rows, q_rows, rng)
        k, pending = verified.num_accepted, verified.tokens[-1]
        target_state.rollback(base + 1 + k)
        if k < gamma:
            draft_state.rollback(draft_state.length - (gamma - 1 - k))
            draft_feed = [pending]
        else:
            draft_feed = [drafts[-1], pending]
        tokens += drafts[:k] + [pending]
        now = clock()
        rounds.append(
            RoundRecord(
                gamma,
                (True,) * k + (False,) * (k < gamma),
                k + 1,
                drafted - last,
                scored - drafted,
                now - scored,
            )
        )
        last = now
    return Generation(tuple(tokens[:max_new_tokens]), tuple(rounds), clock() - start)
