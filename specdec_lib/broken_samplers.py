"""Broken samplers: the failure modes of the chapter "When speculative decoding goes wrong".

Two kinds of slip. A *verifier slip* lives inside the verification step, so it has ``verify``'s
signature and ``check_verifier`` judges it: ``BROKEN_SAMPLERS`` maps a name to ``(sampler,
description)``, the two bonus-token slips of ``broken_verifiers`` included. A *drafting slip*
happens around the verifier: the drafts come from one law while the verifier is handed another, a
penalty reaches one model only, the two vocabularies differ. It is described by the rows each side
sees, as callables ``rows(start, accepted) -> probability vector`` (``start``: the prefix the
round began from; ``accepted``: the drafts accepted so far in it). ``round_law`` is the exact law
of one such round and ``sample_round`` draws one; ``stream_distance`` measures how far repeated
rounds are from the target's stream law, exactly to the last digit with ``Fraction`` models.

>>> from specdec_lib import toy_model_pair
>>> target, draft = toy_model_pair()
>>> honest = round_law((1,), 2, rows_of(draft), rows_of(draft), rows_of(target))
>>> from specdec_lib import round_distribution
>>> honest == round_distribution(target, draft, (1,), 2)
True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from . import _validate
from ._types import Law, Model, Number, Prefix, Probabilities, Rows, Seed
from .broken_verifiers import BROKEN_VERIFIERS, _round
from .distributions import acceptance_probabilities, correction_distribution
from .sampling import sample_token
from .streams import stream_distribution, stream_total_variation, target_stream_distribution
from .transforms import sampling_transform
from .verification import VerifiedRound

#: What one side of a round is handed: (round's prefix, drafts accepted so far) -> probability vector.
SideRows = Callable[[Prefix, Prefix], Probabilities]
#: A sampler with ``verify``'s signature.
Sampler = Callable[..., VerifiedRound]

VERIFIER_TEMPERATURE = 2.0  # the temperature the slip of case 1 applies to q inside the verifier


def _normalised(weights: np.ndarray) -> np.ndarray:
    return weights / weights.sum()


def _leftover_on_last(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """[p − q]+ fed, unnormalised, to an inverse CDF that assumes its weights sum to 1.

    A uniform above the weights' total runs off the end of the CDF; clipped to the last token id,
    the missing mass 1 − Σ[p − q]+ = α lands there.
    """
    weights = np.maximum(p - q, 0.0)
    weights[-1] += 1.0 - weights.sum()
    return weights


BROKEN_SAMPLERS: dict[str, tuple[Sampler, str]] = {
    "verifier_q_at_other_temperature": (
        partial(_round, draft_transform=partial(sampling_transform, temperature=VERIFIER_TEMPERATURE)),
        f"The drafts are sampled from q, but the verifier divides by q warped to temperature "
        f"{VERIFIER_TEMPERATURE:g}: a sampling transform applied on one side only (case 1).",
    ),
    "no_bonus": BROKEN_VERIFIERS["no_bonus"],
    "bonus_from_wrong_row": BROKEN_VERIFIERS["bonus_from_wrong_row"],
    "first_draft_unchecked": (
        partial(_round, unchecked=1),
        "The first draft token is kept without the test u < p(x)/q(x): the loop starts at the "
        "second draft, as if the first one were the target's own token (case 4).",
    ),
    "residual_not_normalised": (
        partial(_round, correction=_leftover_on_last),
        "The residual [p − q]+ is not divided by its total (1 − α) before an inverse-CDF draw that "
        "assumes the weights sum to 1; the missing mass falls on the last token id (case 5).",
    ),
    "residual_on_wrong_support": (
        partial(_round, correction=lambda p, q: _normalised(np.where(p > q, p, 0.0))),
        "After a rejection the correction is drawn from p renormalised over the tokens where p > q, "
        "not from p − q there: the right support, the wrong weights (case 5).",
    ),
}


# --- drafting slips: what each side of a round is handed ----------------------------------------------


def rows_of(model: Model) -> SideRows:
    """The honest rows of ``model``: its law at the round's prefix plus the drafts accepted so far.

    >>> from fractions import Fraction as F
    >>> rows = rows_of(lambda prefix: [F(1, len(prefix)), 1 - F(1, len(prefix))])
    >>> rows((0,), (1, 2))  # the law at prefix (0, 1, 2)
    [Fraction(1, 3), Fraction(2, 3)]
    """
    model = _validate.model("model", model)
    return lambda start, accepted: model(start + accepted)


def round_law(
    prefix: Sequence[int],
    gamma: int,
    proposal: SideRows,
    draft_rows: SideRows,
    target_rows: SideRows,
    limit: int | None = None,
) -> Law:
    r"""Exact law of one round whose drafts come from ``proposal`` while the verifier is handed other rows.

    At each position the next draft x is drawn from :math:`s = ` ``proposal(prefix, accepted)``;
    the verifier, handed :math:`q = ` ``draft_rows(...)`` and :math:`p = ` ``target_rows(...)``,
    keeps it with probability :math:`\min(1, p(x)/q(x))`, otherwise emits a correction from
    :math:`[p - q]_+` normalised and stops; after γ kept drafts the bonus comes from
    ``target_rows(prefix, drafts)``. So a position emits token y with probability
    :math:`s(y)\min(1, p(y)/q(y)) + \big(\sum_x s(x)[1 - \min(1, p(x)/q(x))]\big)\,r(y)`, which is
    p(y) for every p when s = q, the honest round (``rows_of``). Rounds are cut after ``limit``
    tokens, as in ``round_distribution``. Returns {emitted tuple: probability}.

    >>> from fractions import Fraction as F
    >>> p, q = [F(1, 2), F(1, 2)], [F(3, 4), F(1, 4)]
    >>> argmax = [F(1), F(0)]  # the draft proposes its argmax but hands the verifier q
    >>> round_law((), 0, None, None, lambda s, a: p)  # γ = 0: plain sampling from p
    {(0,): Fraction(1, 2), (1,): Fraction(1, 2)}
    >>> law = round_law((), 1, lambda s, a: argmax, lambda s, a: q, lambda s, a: p, limit=1)
    >>> law  # the first token should follow p = (1/2, 1/2)
    {(0,): Fraction(2, 3), (1,): Fraction(1, 3)}
    """
    prefix, gamma = _validate.prefix(prefix), _validate.count("gamma", gamma)
    limit = None if limit is None else _validate.count("limit", limit, minimum=1)
    law: defaultdict[Prefix, Any] = defaultdict(int)

    def branch(accepted: Prefix, mass: Any) -> None:
        if limit is not None and len(accepted) >= limit:
            law[accepted[:limit]] += mass
            return
        p = target_rows(prefix, accepted)
        if len(accepted) == gamma:
            for token, prob in enumerate(p):
                if prob > 0:
                    law[accepted + (token,)] += mass * prob
            return
        s, q = proposal(prefix, accepted), draft_rows(prefix, accepted)
        if not len(s) == len(q) == len(p):
            raise ValueError(
                f"proposal, draft_rows, target_rows: vocabulary sizes differ ({len(s)}, {len(q)}, {len(p)})"
            )
        keep = acceptance_probabilities(p, q)
        rejected = 0 * p[0]
        for token, (sx, ax) in enumerate(zip(s, keep)):
            if sx > 0:
                if ax is None or ax != ax:  # q(x) = 0: the verifier cannot score this draft
                    raise ValueError(
                        f"proposal: drafts token {token}, to which draft_rows give probability 0"
                    )
                if ax > 0:
                    branch(accepted + (token,), mass * sx * ax)
                rejected += sx * (1 - ax)
        if rejected > 0:
            for token, rx in enumerate(correction_distribution(p, q)):
                if rx > 0:
                    law[accepted + (token,)] += mass * rejected * rx

    branch((), 1)
    return dict(law)


def stream_distance(
    prefix: Prefix,
    gamma: int,
    length: int,
    proposal: SideRows,
    draft_rows: SideRows,
    target_rows: SideRows,
    reference: Model,
) -> Number:
    r"""Total variation between the first ``length`` tokens of repeated slipped rounds and plain sampling from ``reference``.

    :math:`\tfrac12\sum_s |P_{\text{rounds}}(s) - P_{\text{reference}}(s)|` over every stream s, the rounds'
    law from ``round_law`` (each round continuing from where the last one stopped), the reference's
    from ``target_stream_distribution``. 0 means exact; with ``Fraction`` models it is exact.

    >>> from specdec_lib import toy_model_pair
    >>> target, draft = toy_model_pair()
    >>> stream_distance((1,), 2, 3, rows_of(draft), rows_of(draft), rows_of(target), target)
    Fraction(0, 1)
    >>> stream_distance((1,), 2, 3, argmax_rows(draft), rows_of(draft), rows_of(target), target)
    Fraction(12, 25)
    """
    law = stream_distribution(
        lambda at: round_law(at, gamma, proposal, draft_rows, target_rows), prefix, length
    )
    return stream_total_variation(law, target_stream_distribution(reference, prefix, length))


def sample_round(
    prefix: Sequence[int],
    gamma: int,
    proposal: SideRows,
    draft_rows: SideRows,
    target_rows: SideRows,
    rng: Seed = None,
) -> VerifiedRound:
    """Draw one round of ``round_law``: drafts from ``proposal``, verified against the rows the verifier is handed.

    >>> from specdec_lib import toy_model_pair
    >>> target, draft = toy_model_pair(exact=False)
    >>> sample_round((1,), 2, rows_of(draft), rows_of(draft), rows_of(target), rng=0).tokens
    (1, 0, 2)
    """
    prefix, gamma = _validate.prefix(prefix), _validate.count("gamma", gamma)
    rng = np.random.default_rng(rng)
    accepted: Prefix = ()
    for _ in range(gamma):
        p = np.asarray(target_rows(prefix, accepted), dtype=float)
        q = np.asarray(draft_rows(prefix, accepted), dtype=float)
        x = sample_token(np.asarray(proposal(prefix, accepted), dtype=float), rng)
        if rng.random() < p[x] / q[x]:
            accepted += (x,)
            continue
        return VerifiedRound(
            accepted + (sample_token(correction_distribution(p, q), rng),), len(accepted), False
        )
    bonus = sample_token(np.asarray(target_rows(prefix, accepted), dtype=float), rng)
    return VerifiedRound(accepted + (bonus,), gamma, True)


def argmax_rows(model: Model) -> SideRows:
    """Rows of a greedy drafter: all mass on ``model``'s most probable token (lowest id on ties), exact if the model is.

    >>> from fractions import Fraction as F
    >>> argmax_rows(lambda prefix: [F(1, 4), F(3, 4)])((), ())
    [Fraction(0, 1), Fraction(1, 1)]
    """
    model = _validate.model("model", model)

    def rows(start: Prefix, accepted: Prefix) -> Probabilities:
        row = model(start + accepted)
        best = max(range(len(row)), key=lambda x: (row[x], -x))
        return [1 - 0 * row[x] if x == best else 0 * row[x] for x in range(len(row))]

    return rows


def warped_rows(model: Model, temperature: float) -> SideRows:
    """Rows of ``model`` after a sampling temperature (``sampling_transform``), in float.

    >>> warped_rows(lambda prefix: [0.6, 0.3, 0.1], 0.5)((), ()).round(4).tolist()
    [0.7826, 0.1957, 0.0217]
    """
    model = _validate.model("model", model)
    return lambda start, accepted: sampling_transform(model(start + accepted), temperature=temperature)


def frequency_penalised(row: Probabilities, history: Prefix, factor: Number = Fraction(1, 2)) -> list:
    r"""A frequency penalty in probability space: :math:`p'(x) \propto p(x)\,f^{c(x)}`, c(x) the count of x in ``history``.

    Subtracting :math:`\lambda\,c(x)` from the logits, as serving systems do, is this with
    :math:`f = e^{-\lambda}`; f = 1/2 keeps exact inputs exact.

    >>> from fractions import Fraction as F
    >>> frequency_penalised([F(1, 2), F(1, 2)], (0, 0))
    [Fraction(1, 5), Fraction(4, 5)]
    """
    weights = [v * factor ** history.count(x) for x, v in enumerate(row)]
    total = sum(weights)
    return [w / total for w in weights]


def penalised_rows(model: Model, factor: Number = Fraction(1, 2)) -> SideRows:
    """Honest rows of ``model`` with a frequency penalty counted over the whole prefix, accepted drafts included.

    >>> from fractions import Fraction as F
    >>> penalised_rows(lambda prefix: [F(1, 2), F(1, 2)])((0,), (0,))
    [Fraction(1, 5), Fraction(4, 5)]
    """
    model = _validate.model("model", model)
    return lambda start, accepted: frequency_penalised(model(start + accepted), start + accepted, factor)


def stale_penalised_rows(model: Model, factor: Number = Fraction(1, 2)) -> SideRows:
    """The penalty's counts taken at the start of the round only: the drafts accepted in it are not counted.

    >>> from fractions import Fraction as F
    >>> stale_penalised_rows(lambda prefix: [F(1, 2), F(1, 2)])((0,), (0,))  # one 0 counted, not two
    [Fraction(1, 3), Fraction(2, 3)]
    """
    model = _validate.model("model", model)
    return lambda start, accepted: frequency_penalised(model(start + accepted), start, factor)


def padded_model(model: Model, extra: int, mass: Number = Fraction(1, 50)) -> Model:
    """``model`` with ``extra`` padding tokens appended to its vocabulary, given ``mass`` in total (shared equally).

    A padded embedding whose unused rows still get a little probability. Padding tokens in the
    prefix carry no information: the model reads the prefix without them.

    >>> from fractions import Fraction as F
    >>> padded_model(lambda prefix: [F(1, 2), F(1, 2)], 1, F(1, 10))(())
    [Fraction(9, 20), Fraction(9, 20), Fraction(1, 10)]
    """
    model = _validate.model("model", model)
    extra = _validate.count("extra", extra, minimum=1)
    vocab = len(model(()))

    def padded(prefix: Prefix) -> list:
        return [v * (1 - mass) for v in model(tuple(t for t in prefix if t < vocab))] + [mass / extra] * extra

    return padded


def vocabulary_rows(model: Model, vocab: int, renormalise: bool = True) -> SideRows:
    """Rows of ``model`` cut or zero-padded to ``vocab`` tokens (cut rows renormalised unless told not to).

    The model reads the prefix without the token ids outside its own vocabulary.

    >>> from fractions import Fraction as F
    >>> vocabulary_rows(lambda prefix: [F(1, 2), F(1, 4), F(1, 4)], 2)((), ())
    [Fraction(2, 3), Fraction(1, 3)]
    >>> vocabulary_rows(lambda prefix: [F(1, 2), F(1, 2)], 3)((), ())
    [Fraction(1, 2), Fraction(1, 2), 0]
    """
    model = _validate.model("model", model)
    vocab = _validate.count("vocab", vocab, minimum=1)

    own = len(model(()))

    def rows(start: Prefix, accepted: Prefix) -> list:
        row = list(model(tuple(t for t in start + accepted if t < own)))  # ids it cannot embed are skipped
        if len(row) < vocab:
            return row + [0] * (vocab - len(row))
        kept = row[:vocab]
        total = sum(kept)
        return [v / total for v in kept] if renormalise else kept

    return rows


def mystery_samplers(seed: int, count: int = 3) -> dict[str, Sampler]:
    """``count`` slips of ``BROKEN_SAMPLERS``, drawn with ``seed``, under the letters A, B, C, …: the puzzle of "Find the bug".

    Each is a plain function with ``verify``'s signature that names nothing about its slip; which
    slip hides behind which letter follows from the seed (the assignment's tests know it).

    >>> mystery = mystery_samplers(seed=0)
    >>> sorted(mystery), mystery["A"].__name__
    (['A', 'B', 'C'], 'sampler')
    """
    count = _validate.count("count", count, minimum=1)
    names = sorted(BROKEN_SAMPLERS)
    if count > len(names):
        raise ValueError(f"count: at most {len(names)} slips exist, got {count}")
    chosen = np.random.default_rng(_validate.count("seed", seed)).choice(names, count, replace=False)

    def hide(slip: Sampler) -> Sampler:
        def sampler(
            draft_tokens: Sequence[int], target_probs: Rows, draft_probs: Rows, rng: Seed = None
        ) -> VerifiedRound:
            return slip(draft_tokens, target_probs, draft_probs, rng)

        return sampler

    return {chr(ord("A") + i): hide(BROKEN_SAMPLERS[str(name)][0]) for i, name in enumerate(chosen)}
