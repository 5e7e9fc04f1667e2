r"""Choosing γ round by round from the acceptance seen so far: two policies.

A policy holds the γ of the next round (``policy.gamma``) and learns from each round's verdict
(``policy.update(drafted, accepted)``). Changing γ never changes what is emitted (each round is a
strict round, exact for any γ); only the speed can move.

* ``HeuristicGamma``: Hugging Face transformers' assisted generation ("heuristic" schedule of
  ``AssistedCandidateGenerator.update_candidate_strategy``): γ + 2 after a round whose drafts were
  all accepted, otherwise γ − 1, never below 1.
* ``TheoryGamma``: the γ that maximises Leviathan et al.'s Thm 3.8 (``optimal_gamma``) at a running
  estimate of α, with the draft/target cost ratio c measured beforehand. α is estimated per checked
  draft, :math:`\hat\alpha = (a_0 + A)/(n_0 + N)` with A accepted and N checked drafts (a rejection is
  checked, drafts after it are not), both counts decaying by ``decay`` per round so the estimate
  follows a text whose difficulty drifts.
"""

from __future__ import annotations

import copy
from collections import defaultdict

from . import _validate
from .speedup import optimal_gamma
from .streams import round_distribution


class HeuristicGamma:
    """γ + 2 after a fully accepted round, else max(1, γ − 1) (Hugging Face's assisted-generation heuristic).

    >>> policy = HeuristicGamma(start=4)
    >>> policy.update(drafted=4, accepted=4); policy.gamma
    6
    >>> policy.update(drafted=6, accepted=2); policy.gamma
    5
    """

    def __init__(self, start: int = 5, max_gamma: int = 32):
        self.max_gamma = _validate.count("max_gamma", max_gamma, minimum=1)
        self.gamma = min(_validate.count("start", start, minimum=1), self.max_gamma)

    def update(self, drafted: int, accepted: int) -> None:
        drafted, accepted = _round_counts(drafted, accepted)
        self.gamma = min(self.gamma + 2, self.max_gamma) if accepted == drafted else max(1, self.gamma - 1)


class TheoryGamma:
    r"""γ = argmax of Thm 3.8's improvement factor at a running per-draft α estimate and a measured c.

    ``prior``: (accepted, checked) pseudo-counts the estimate starts from; ``decay``: the weight each
    round keeps of the past counts (1 = a plain running mean).

    >>> policy = TheoryGamma(c=0.1, prior=(4, 5), max_gamma=16)
    >>> round(policy.alpha, 2), policy.gamma
    (0.8, 6)
    >>> for _ in range(20): policy.update(drafted=6, accepted=6)
    >>> policy.gamma > 6
    True
    """

    def __init__(self, c: float, *, prior=(4, 5), decay: float = 0.9, max_gamma: int = 32):
        self.c = _validate.nonnegative("c", c)
        self.decay = float(_validate.probability("decay", decay))
        self.max_gamma = _validate.count("max_gamma", max_gamma, minimum=1)
        accepted, checked = prior
        if not 0 <= accepted < checked:
            raise ValueError(f"prior: need 0 <= accepted < checked, got {prior}")
        self.accepted, self.checked = float(accepted), float(checked)

    @property
    def alpha(self) -> float:
        return self.accepted / self.checked

    @property
    def gamma(self) -> int:
        # a round drafts at least one token: where no γ pays, optimal_gamma says 0, this policy 1
        return max(1, optimal_gamma(min(self.alpha, 1 - 1e-9), self.c, self.max_gamma))

    def update(self, drafted: int, accepted: int) -> None:
        drafted, accepted = _round_counts(drafted, accepted)
        checked = accepted + (accepted < drafted)
        self.accepted = self.decay * self.accepted + accepted
        self.checked = self.decay * self.checked + checked


def adaptive_stream_distribution(target, draft, prefix, length: int, policy) -> dict:
    r"""Exact law of the first ``length`` tokens when each strict round uses the γ ``policy`` holds then.

    Every history is enumerated with its own copy of the policy: a round from the stream so far
    has ``round_distribution``'s law at the current γ, then the policy learns how many of its γ
    drafts were accepted. With ``Fraction`` models it equals ``target_stream_distribution``
    exactly: γ depends only on rounds already over, so each round is a strict round.

    >>> from specdec_lib.streams import target_stream_distribution
    >>> from specdec_lib.toy_models import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> law = adaptive_stream_distribution(target, draft, (1,), 3, HeuristicGamma(start=1))
    >>> law == target_stream_distribution(target, (1,), 3)
    True
    """
    length = _validate.count("length", length, minimum=1)
    done, pending = defaultdict(int), [((), 1, copy.deepcopy(policy))]
    while pending:
        stream, mass, state = pending.pop()
        if len(stream) >= length:
            done[stream[:length]] += mass
            continue
        gamma = state.gamma
        for emitted, prob in round_distribution(target, draft, tuple(prefix) + stream, gamma).items():
            after = copy.deepcopy(state)
            after.update(drafted=gamma, accepted=len(emitted) - 1)
            pending.append((stream + emitted, mass * prob, after))
    return dict(done)


def _round_counts(drafted, accepted):
    drafted = _validate.count("drafted", drafted, minimum=1)
    accepted = _validate.count("accepted", accepted)
    if accepted > drafted:
        raise ValueError(f"accepted: {accepted} is more than the {drafted} drafted")
    return drafted, accepted
