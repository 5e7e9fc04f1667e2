r"""The measurement's estimators: the inputs of Thm 3.8 measured apart from any speculative run, and the comparisons.

- α (Cor 3.6): the mean over prefixes of β = Σ_x min(p(x), q(x)) on text the target wrote;
- c (Def 3.7) and v_γ = T_target(γ+1) / T_target(1): from single calls, timed alone;
- the predictions :func:`predicted_speedup`, the measured speed-up's interval
  :func:`speedup_interval`, and :func:`gap_factors`, which splits their ratio exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np

from .. import _validate
from ..corpus import corpus_split
from ..counting import expected_output_count
from ..distributions import acceptance_rate
from ..generate import RoundRecord
from ..speedup import improvement_factor
from ..timing import Clock, one_blas_thread
from ..transforms import decoding_distribution
from .report import BatchCurve, BatchPoint, CostCurve, Gap
from .workload import CONFIDENCE, LanguageModel

if TYPE_CHECKING:
    from .run import Progress

BATCH_CONTEXT = 96  # tokens of held-out text each sequence of the batch curve has read
SATURATION = 0.9  # cost per token has stopped falling when doubling the batch keeps more than 90 % of it


def alpha_per_prefix(
    target: LanguageModel,
    draft: LanguageModel,
    texts: Sequence[Sequence[int] | np.ndarray],
    prompt_lengths: Sequence[int],
    temperature: float = 1.0,
) -> tuple[float, float, int]:
    r"""α as Cor 3.6 defines it, :math:`\alpha = \mathbb{E}_{h}[\beta(h)]`, β(h) = Σ_x min(p(x|h), q(x|h)).

    ``texts[s]`` is a prompt of ``prompt_lengths[s]`` tokens followed by tokens the target wrote;
    β is averaged over every prefix at which the target wrote one (p, q: both models' rows after
    :func:`~specdec_lib.transforms.decoding_distribution`). Returns (α, its standard error, prefixes): the
    error is that of the mean of the per-text means, since prefixes of one text are correlated.

    >>> from specdec_lib.transformer import Config, Transformer
    >>> target, draft = (Transformer.random(Config(1, 16, 2), seed=s) for s in (0, 1))
    >>> a, se, n = alpha_per_prefix(target, draft, [[1, 2, 3, 4], [5, 6, 7]], [2, 2])
    >>> 0 < a < 1, se >= 0, n
    (True, True, 3)
    """
    if len(texts) < 2 or len(texts) != len(prompt_lengths):
        raise ValueError("texts: need at least two texts (for a standard error) and one prompt length each")
    means: list[float] = []
    count = 0
    for text, start in zip(texts, prompt_lengths):
        start = _validate.count("prompt_lengths", start, minimum=1)
        if len(text) <= start:
            raise ValueError("texts: each text needs at least one token after its prompt")
        p_rows, q_rows = (m.score(m.new_state(), text[:-1])[start - 1 :] for m in (target, draft))
        betas = [
            float(
                acceptance_rate(decoding_distribution(p, temperature), decoding_distribution(q, temperature))
            )
            for p, q in zip(p_rows, q_rows)
        ]
        means.append(float(np.mean(betas)))
        count += len(betas)
    weights = np.array([len(t) - s for t, s in zip(texts, prompt_lengths)], dtype=float)
    alpha = float(np.average(means, weights=weights))
    se = float(np.std(means, ddof=1) / np.sqrt(len(means)))
    return alpha, se, count


@one_blas_thread()
def cost_curve(
    target: LanguageModel,
    drafts: dict[str, LanguageModel],
    context: int,
    max_positions: int = 9,
    calls: int = 30,
    clock: Clock = perf_counter,
) -> CostCurve:
    """Seconds per call, one call at a time: the target on 1..max_positions new positions, each draft on one.

    All after the same ``context`` tokens (held-out text); calls are interleaved so a slow spell
    hits them alike. Gives c (Def 3.7: draft call over target call, both on one position) and v_b.

    >>> from specdec_lib.transformer import Config, Transformer
    >>> target, draft = (Transformer.random(Config(1, 16, 2), seed=s) for s in (0, 1))
    >>> curve = cost_curve(target, {"d": draft}, context=8, max_positions=3, calls=2)
    >>> curve.positions, len(curve.target_s), curve.c("d") > 0
    ((1, 2, 3), 3, True)
    """
    max_positions = _validate.count("max_positions", max_positions, minimum=1)
    text = corpus_split()[1]
    prefix, new = text[:context], text[context : context + max_positions]
    models = [(target, b) for b in range(1, max_positions + 1)] + [(draft, 1) for draft in drafts.values()]
    states = {id(m): m.new_state() for m, _ in models}
    for model, _ in models:
        if states[id(model)].length == 0:
            model.score(states[id(model)], prefix)
    times = np.zeros((_validate.count("calls", calls, minimum=1), len(models)))
    for i in range(calls):
        for j, (model, b) in enumerate(models):
            state = states[id(model)]
            start = clock()
            model.score(state, new[:b])
            times[i, j] = clock() - start
            state.rollback(context)
    median = np.median(times, axis=0)
    return CostCurve(
        context=context,
        positions=tuple(range(1, max_positions + 1)),
        target_s=tuple(float(v) for v in median[:max_positions]),
        target_p10=tuple(float(v) for v in np.percentile(times[:, :max_positions], 10, axis=0)),
        target_p90=tuple(float(v) for v in np.percentile(times[:, :max_positions], 90, axis=0)),
        draft_s={name: float(v) for name, v in zip(drafts, median[max_positions:])},
        calls=calls,
    )


def predicted_speedup(alpha: float, gamma: int, c: float, verify_ratio: float) -> float:
    r"""Thm 3.8's speedup with a measured verification cost: :math:`\frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v)}`.

    ``verify_ratio`` v is T_target(γ+1)/T_target(1); with v = 1 this is
    :func:`~specdec_lib.counting.improvement_factor`.

    >>> from specdec_lib import improvement_factor
    >>> predicted_speedup(0.8, 4, 0.05, 1.0) == improvement_factor(0.8, 4, 0.05)
    True
    >>> round(predicted_speedup(0.8, 4, 0.05, 1.2), 3)
    2.401
    """
    c = _validate.nonnegative("c", c)
    verify_ratio = _validate.positive("verify_ratio", verify_ratio)
    return float(improvement_factor(alpha, gamma, c)) * (gamma * c + 1) / (gamma * c + verify_ratio)


def gap_factors(
    alpha: float,
    gamma: int,
    c: float,
    verify_ratio: float,
    tokens_per_round: float,
    round_s: float,
    baseline_step_s: float,
    target_call_s: float,
    round_model_s: float,
    baseline_model_s: float,
) -> Gap:
    r"""Split measured / Thm 3.8 into three factors whose product is exactly that ratio.

    With :math:`S_{meas} = \mathbb{E}[K]_{meas}\,T_{base} / T_{round}` (measured tokens per round,
    seconds per baseline token and per round) and :math:`T_1` (``target_call_s``) one target call alone:

    .. math::

        \frac{S_{meas}}{S_{3.8}} =
        \underbrace{\frac{\gamma c + 1}{\gamma c + v_\gamma}}_{\text{verify cost}} \times
        \underbrace{\frac{\mathbb{E}[K]_{meas}}{\sum_{j=0}^{\gamma}\alpha^j}}_{\text{acceptance (non-iid)}} \times
        \underbrace{\frac{(\gamma c + v_\gamma)\,T_{base}}{T_{round}}}_{\text{overhead}} .

    The overhead factor is the isolated price of a round's calls, :math:`(\gamma c + v_\gamma) T_1`,
    over the round's time, divided by the same for a baseline step, :math:`T_1 / T_{base}`. It is
    reported in four in-loop parts: the share of a round (of a step) spent inside model calls
    (``round_model_s`` / ``baseline_model_s`` seconds, so at most 1) and the pricing, in-loop call
    time over isolated price, whose departure from 1 is what timing calls alone misses.

    >>> g = gap_factors(0.8, 4, 0.05, 1.2, tokens_per_round=3.2, round_s=1.5e-3, baseline_step_s=1.05e-3,
    ...                 target_call_s=1e-3, round_model_s=1.4e-3, baseline_model_s=1e-3)
    >>> round(g.verify_cost * g.acceptance * g.overhead, 12) == round(g.total, 12)
    True
    >>> round(g.verify_cost, 3), round(g.acceptance, 3), round(g.overhead, 3)
    (0.857, 0.952, 0.98)
    >>> parts = (g.round_model_share / g.round_pricing) / (g.baseline_model_share / g.baseline_pricing)
    >>> round(parts, 12) == round(g.overhead, 12), g.round_model_share <= 1
    (True, True)
    """
    c = _validate.nonnegative("c", c)
    verify_ratio = _validate.positive("verify_ratio", verify_ratio)
    tokens_per_round = _validate.positive("tokens_per_round", tokens_per_round)
    round_s = _validate.positive("round_s", round_s)
    baseline_step_s = _validate.positive("baseline_step_s", baseline_step_s)
    target_call_s = _validate.positive("target_call_s", target_call_s)
    round_model_s = _validate.positive("round_model_s", round_model_s)
    baseline_model_s = _validate.positive("baseline_model_s", baseline_model_s)
    priced = gamma * c + verify_ratio
    measured = tokens_per_round * baseline_step_s / round_s
    return Gap(
        total=measured / improvement_factor(alpha, gamma, c),
        verify_cost=(gamma * c + 1) / priced,
        acceptance=tokens_per_round / float(expected_output_count(alpha, gamma)),
        overhead=priced * baseline_step_s / round_s,
        round_model_share=round_model_s / round_s,
        baseline_model_share=baseline_model_s / baseline_step_s,
        round_pricing=round_model_s / (priced * target_call_s),
        baseline_pricing=baseline_model_s / target_call_s,
    )


def speedup_interval(
    spec_tokens: Sequence[float],
    spec_wall: Sequence[float],
    base_tokens: Sequence[float],
    base_wall: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    r"""Percentile bootstrap interval of the pooled speedup over runs r (tokens n, seconds t).

    .. math::

        S = \frac{\sum_r n^{spec}_r / \sum_r t^{spec}_r}{\sum_r n^{base}_r / \sum_r t^{base}_r}

    Seeds r are resampled with replacement, each keeping its speculative and baseline run
    together (they ran side by side, so a slow spell hits both).

    >>> low, high = speedup_interval([100, 110, 90], [1.0, 1.0, 1.0], [50, 50, 50], [1.0, 1.1, 0.9])
    >>> low <= 2.0 <= high
    True
    """
    arrays = [np.asarray(a, dtype=float) for a in (spec_tokens, spec_wall, base_tokens, base_wall)]
    n = len(arrays[0])
    if n < 2 or any(len(a) != n for a in arrays):
        raise ValueError(
            "spec_tokens, spec_wall, base_tokens, base_wall: need equally many runs, at least two"
        )
    picks = np.random.default_rng(seed).integers(
        0, n, size=(_validate.count("resamples", resamples, minimum=1), n)
    )
    sums = [a[picks].sum(axis=1) for a in arrays]
    ratios = (sums[0] / sums[1]) / (sums[2] / sums[3])
    tail = 100 * (1 - _validate.probability("confidence", confidence)) / 2
    return float(np.percentile(ratios, tail)), float(np.percentile(ratios, 100 - tail))


def acceptance_by_position(rounds: Sequence[RoundRecord], gamma: int) -> list[float | None]:
    """Fraction of rounds reaching draft position i (1..γ) whose draft i was accepted (None if none reached it).

    Under the iid assumption every entry estimates the same α.

    >>> from specdec_lib.generate import RoundRecord
    >>> rounds = [RoundRecord(2, (True, False), 2, 0, 0, 0), RoundRecord(2, (True, True), 3, 0, 0, 0)]
    >>> acceptance_by_position(rounds, 2)
    [1.0, 0.5]
    """
    reached, accepted = np.zeros(gamma), np.zeros(gamma)
    for r in rounds:
        reached[: len(r.accepted)] += 1
        accepted[: len(r.accepted)] += r.accepted
    return [float(a / n) if n else None for a, n in zip(accepted, reached)]


@one_blas_thread()
def batch_curve(
    target: LanguageModel,
    draft: LanguageModel,
    gamma: int,
    alpha: float,
    *,
    draft_name: str = "draft",
    max_batch: int = 1024,
    calls: int = 5,
    clock: Clock = perf_counter,
    progress: Progress | None = None,
) -> BatchCurve:
    r"""Cost per call against the number of sequences scored together, and Thm 3.8's speedup at each batch.

    At batch B: :math:`S(B) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c_B + v_B)}` with
    :math:`c_B = T_{draft}(B,1)/T_{target}(B,1)` and :math:`v_B = T_{target}(B,\gamma+1)/T_{target}(B,1)`,
    all measured (medians of ``calls`` calls, at least 64 / B). B doubles from 1 until the cost
    per token has stopped falling and S(B) < 1 at two batches in a row, or up to ``max_batch``.
    The crossover is the first measured batch from which every S(B) stays below 1; saturation,
    the first from which doubling B keeps more than :data:`SATURATION` of the cost per token.
    (Every sequence of a batch is taken to accept as many drafts; in a real batch they differ.)

    >>> from specdec_lib.transformer import Config, Transformer
    >>> target, draft = (Transformer.random(Config(1, 16, 2), seed=s) for s in (0, 1))
    >>> curve = batch_curve(target, draft, 2, 0.8, max_batch=2, calls=1)
    >>> [p.batch for p in curve.points], curve.gamma
    ([1, 2], 2)
    """
    gamma = _validate.count("gamma", gamma, minimum=1)
    context = corpus_split()[1][:BATCH_CONTEXT]
    points: list[BatchPoint] = []
    batch = 1
    while batch <= _validate.count("max_batch", max_batch, minimum=1):
        states = {id(m): m.new_state(batch, capacity=len(context)) for m in (target, draft)}
        for model in (target, draft):
            model.score_batch(states[id(model)], np.tile(context[: -gamma - 1], (batch, 1)))
        base, new = len(context) - gamma - 1, np.tile(context[-gamma - 1 :], (batch, 1))
        times = np.zeros((max(_validate.count("calls", calls, minimum=1), 64 // batch), 3))
        for i in range(len(times)):
            for j, (model, b) in enumerate(((target, 1), (target, gamma + 1), (draft, 1))):
                start = clock()
                model.score_batch(states[id(model)], new[:, :b])
                times[i, j] = clock() - start
                states[id(model)].rollback(base)
        t1, tv, td = (float(v) for v in np.median(times, axis=0))
        points.append(
            BatchPoint(batch, t1, tv, td, t1 / batch, predicted_speedup(alpha, gamma, td / t1, tv / t1))
        )
        if progress is not None:
            progress.step(f"batch {batch}")
        saturated = [
            b.target_s_per_token > SATURATION * a.target_s_per_token for a, b in zip(points, points[1:])
        ]
        losing = [p.speedup_predicted < 1 for p in points]
        if saturated[-1:] == [True] and losing[-2:] == [True, True]:
            break
        batch *= 2
    return BatchCurve(
        draft_name,
        gamma,
        float(alpha),
        tuple(points),
        _first_of_final_run([False] + saturated, points),
        _first_of_final_run(losing, points),
    )


def _first_of_final_run(flags: list[bool], points: list[BatchPoint]) -> int | None:
    """The batch where the final run of True flags begins (None if the last flag is False)."""
    if not flags or not flags[-1]:
        return None
    start = len(flags) - 1
    while start > 0 and flags[start - 1]:
        start -= 1
    return points[start].batch
