r"""Measure speculative decoding on this machine and test the paper's prediction against it.

``python -m specdec_lib.measure [--quick] [--json]`` builds the course's model pair
(:func:`~specdec_lib.text_models.build_model_pair`, fitted to the shipped corpus) and runs an
experiment whose prediction can fail. First, separately from any speculative run, it measures
the three inputs of Leviathan et al.'s Thm 3.8:

- α (Cor 3.6): the mean over prefixes of β = Σ_x min(p(x), q(x)) on text the target wrote
  (plain decoding on their own seeds), with its standard error over those texts;
- c (Def 3.7): the median time of one draft call over that of one target call, timed alone;
- v_γ = T_target(γ+1) / T_target(1): the target's cost curve, one call on γ + 1 positions
  against one on a single position.

From these alone it predicts (a) Thm 3.8 as stated (verification costs one target step) and
(b) the same bound with the measured v_γ:

.. math::

    S_{3.8}(\gamma) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + 1)}, \qquad
    S_{v}(\gamma) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v_\gamma)}.

Then it decodes, plainly and speculatively for every γ, on two disjoint sets of seeds (each
seed picks a prompt from the corpus and the sampler's random numbers): γ is chosen on the
first set and every speedup is reported on the second, with a 95 % bootstrap interval over
its seeds. The gap splits into factors that multiply to exactly measured / Thm 3.8
(:func:`gap_factors`). Both regimes run: temperature 1 (strict verification) and greedy
(temperature 0, ``verify_greedy``). Last, the batch curve: the target's cost per call when
several sequences are scored together, and the speedup Thm 3.8 gives with those costs.

Rates count every token a round emitted, including those of the last round past the requested
length: they are valid samples, and counting them gives the steady decoding rate the theorem
describes. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache
from time import perf_counter, process_time

import numpy as np

from . import _validate
from .counting import expected_output_count, improvement_factor
from .distributions import acceptance_rate
from .generate import autoregressive_generate, decoding_distribution, speculative_generate
from .greedy import verify_greedy_unchecked
from .text_models import build_model_pair, corpus_text, encode
from .verification import verify_unchecked

COST_CONTEXT = "the target scores several positions in one call, so checking drafts costs about one step. "
PROMPT_CHARS = 24  # characters of corpus text each seed's prompt starts from
CONFIDENCE = 0.95
SATURATION = 0.9  # cost per token has stopped falling when doubling the batch keeps more than 90 % of it
CLOCKS = {"cpu": process_time, "wall": perf_counter}  # cpu: this process's CPU time, blind to other programs


@dataclass(frozen=True)
class Workload:
    """What one measurement runs.

    ``repeats`` seeds in each of two disjoint sets (γ is chosen on the first, reported on the
    second), ``new_tokens`` per decoding run, the γ sweep; α on ``alpha_sequences`` target texts of
    ``alpha_tokens`` tokens; ``cost_calls`` timed calls per point of the cost curve; the batch
    curve doubles the batch up to ``max_batch``, ``batch_calls`` calls per point (more at small
    batches, where calls are cheap). ``clock`` names the timer in :data:`CLOCKS`: ``"cpu"`` (this
    process's CPU time, so other programs on a shared machine do not count; on an idle machine it
    equals wall time for this single-threaded decoder) or ``"wall"``.
    """

    new_tokens: int
    repeats: int
    gammas: tuple[int, ...] = tuple(range(1, 9))
    alpha_sequences: int = 8
    alpha_tokens: int = 200
    cost_calls: int = 30
    max_batch: int = 1024
    batch_calls: int = 5
    resamples: int = 2000  # bootstrap resamples for each interval
    clock: str = "cpu"

    @property
    def selection_seeds(self) -> tuple[int, ...]:
        return tuple(range(self.repeats))

    @property
    def held_out_seeds(self) -> tuple[int, ...]:
        return tuple(range(self.repeats, 2 * self.repeats))

    @property
    def alpha_seeds(self) -> tuple[int, ...]:
        return tuple(range(2 * self.repeats, 2 * self.repeats + self.alpha_sequences))


WORKLOADS = {
    "chapter": Workload(
        new_tokens=100,
        repeats=4,
        gammas=(1, 2, 4, 6, 8),
        alpha_sequences=4,
        alpha_tokens=100,
        cost_calls=15,
        max_batch=1024,
        batch_calls=3,
        resamples=1000,
    ),
    "quick": Workload(
        new_tokens=100,
        repeats=3,
        alpha_sequences=3,
        alpha_tokens=100,
        cost_calls=10,
        max_batch=128,
        batch_calls=3,
        resamples=500,
    ),
    "full": Workload(
        new_tokens=600,
        repeats=16,
        alpha_sequences=16,
        alpha_tokens=300,
        cost_calls=100,
        max_batch=4096,
        batch_calls=5,
    ),
}
REGIMES = {"temperature 1": (1.0, verify_unchecked), "greedy": (0.0, verify_greedy_unchecked)}


# --- the report ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """Measured / Thm 3.8 = ``verify_cost`` × ``acceptance`` × ``overhead`` (exactly; see :func:`gap_factors`)."""

    total: float
    verify_cost: float
    acceptance: float
    overhead: float
    round_model_share: float  # share of a round's wall time that the isolated call prices account for
    baseline_model_share: float  # the same for a baseline step


@dataclass(frozen=True)
class GammaRow:
    """One γ: the two predictions, and what the held-out seeds measured (rounds pooled over seeds)."""

    gamma: int
    verify_ratio: float
    speedup_theorem38: float
    speedup_predicted_with_v: float
    speedup_measured: float
    speedup_measured_ci: tuple[float, float]
    speedup_by_repeat: tuple[float, ...]  # each held-out seed's speculative rate over its own baseline's
    speedup_selection: float  # the same γ on the selection seeds
    tokens_per_round: float  # measured E[K]
    tokens_per_round_iid: float  # Σ α^j at the independently measured α
    acceptance_by_position: tuple[float | None, ...]
    emitted_counts: tuple[int, ...]  # rounds that emitted K = 1, …, γ + 1 tokens
    rounds: int
    round_s: float
    draft_s: float  # in-run parts of a round: drafting, the target call, everything else
    verify_s: float
    overhead_s: float
    gap: Gap


@dataclass(frozen=True)
class RegimeReport:
    """One decoding regime: the independent inputs, the selected γ's held-out result, every γ's row."""

    temperature: float
    verifier: str
    alpha_per_prefix: float
    alpha_per_prefix_se: float
    alpha_prefixes: int
    c_single_call: float
    verify_ratio_curve: dict[str, float]  # γ (as text) -> v_γ = T_target(γ+1) / T_target(1)
    gamma: int  # chosen on the selection seeds
    speedup_measured: float  # at that γ, on the held-out seeds
    speedup_measured_ci: tuple[float, float]
    speedup_theorem38: float
    speedup_predicted_with_v: float
    gamma_selected_on_seeds: tuple[int, ...]
    reported_on_seeds: tuple[int, ...]
    baseline_step_s: float  # held-out plain decoding, seconds per token
    baseline_rate_by_repeat: tuple[float, ...]  # tokens/s of each held-out seed's baseline
    rows: tuple[GammaRow, ...]

    def row(self, gamma: int) -> GammaRow:
        return next(r for r in self.rows if r.gamma == gamma)


@dataclass(frozen=True)
class CostCurve:
    """Median seconds per call (10th/90th percentiles) at a fixed context, calls interleaved."""

    positions: tuple[int, ...]
    target_s: tuple[float, ...]
    target_p10: tuple[float, ...]
    target_p90: tuple[float, ...]
    draft_s: float  # one draft call on one position
    calls: int

    def ratio(self, positions: int) -> float:
        """:math:`v_b = T_{target}(b) / T_{target}(1)`."""
        return self.target_s[positions - 1] / self.target_s[0]


@dataclass(frozen=True)
class BatchPoint:
    """Costs at one batch size (median seconds per call) and the speedup Thm 3.8 gives with them."""

    batch: int
    target_s: float  # B sequences, one position each
    target_verify_s: float  # B sequences, γ + 1 positions each
    draft_s: float  # B sequences, one position each
    target_s_per_token: float
    speedup_predicted: float


@dataclass(frozen=True)
class BatchCurve:
    """How the gain at the temperature-1 γ shrinks as more sequences share each call."""

    gamma: int
    alpha: float
    points: tuple[BatchPoint, ...]
    saturation_batch: int | None  # first batch whose cost per token is > SATURATION of the previous one's
    crossover_batch: int | None  # first batch where the predicted speedup is below 1


@dataclass(frozen=True)
class Report(RegimeReport):
    """Temperature 1 at the top level (``RegimeReport``'s fields), the greedy regime, the batch curve, context."""

    greedy: RegimeReport
    batch_curve: BatchCurve
    cost_curve: CostCurve
    machine: dict
    workload: Workload
    elapsed_s: float


# --- the independent inputs ------------------------------------------------------------------------


def machine_info() -> dict:
    """CPU model, core count and software versions of the machine the numbers were measured on.

    >>> sorted(machine_info())
    ['cores', 'cpu', 'numpy', 'python', 'system']
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "system": platform.system(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def prompt_for_seed(seed: int) -> np.ndarray:
    """The prompt of run ``seed``: :data:`PROMPT_CHARS` characters of the corpus from a word start the seed picks.

    >>> from specdec_lib.text_models import decode
    >>> decode(prompt_for_seed(0)) == decode(prompt_for_seed(0)) != decode(prompt_for_seed(1))
    True
    """
    tokens = _corpus_tokens()
    starts = np.flatnonzero(tokens[:-PROMPT_CHARS] == 0) + 1  # after a space
    start = starts[np.random.default_rng([_validate.count("seed", seed), 1]).integers(len(starts))]
    return tokens[start : start + PROMPT_CHARS]


@lru_cache(maxsize=1)
def _corpus_tokens() -> np.ndarray:
    return encode(corpus_text())


def alpha_per_prefix(target, draft, texts, prompt_lengths, temperature=1.0) -> tuple[float, float, int]:
    r"""α as Cor 3.6 defines it, :math:`\alpha = \mathbb{E}_{h}[\beta(h)]`, β(h) = Σ_x min(p(x|h), q(x|h)).

    ``texts[s]`` is a prompt of ``prompt_lengths[s]`` tokens followed by tokens the target wrote;
    β is averaged over every prefix at which the target wrote one (p, q: both models' rows after
    :func:`~specdec_lib.generate.decoding_distribution`). Returns (α, its standard error, prefixes): the
    error is that of the mean of the per-text means, since prefixes of one text are correlated.

    >>> target, draft = build_model_pair(target_layers=1)
    >>> texts = [autoregressive_generate(target, encode("the draft "), 30, seed=s) for s in (0, 1)]
    >>> a, se, n = alpha_per_prefix(target, draft, [np.r_[encode("the draft "), t.tokens] for t in texts], [10, 10])
    >>> 0.5 < a < 1, se >= 0, n
    (True, True, 60)
    """
    if len(texts) < 2 or len(texts) != len(prompt_lengths):
        raise ValueError("texts: need at least two texts (for a standard error) and one prompt length each")
    means, count = [], 0
    for text, start in zip(texts, prompt_lengths):
        start = _validate.count("prompt_lengths", start, minimum=1)
        if len(text) <= start:
            raise ValueError("texts: each text needs at least one token after its prompt")
        p_rows, q_rows = (m.score(m.new_state(), text[:-1])[start - 1 :] for m in (target, draft))
        betas = [
            acceptance_rate(decoding_distribution(p, temperature), decoding_distribution(q, temperature))
            for p, q in zip(p_rows, q_rows)
        ]
        means.append(np.mean(betas))
        count += len(betas)
    weights = np.array([len(t) - s for t, s in zip(texts, prompt_lengths)], dtype=float)
    alpha = float(np.average(means, weights=weights))
    se = float(np.std(means, ddof=1) / np.sqrt(len(means)))
    return alpha, se, count


def cost_curve(target, draft, max_positions=9, calls=30, clock=perf_counter) -> CostCurve:
    """Seconds per call, one call at a time: the target on 1..max_positions new positions and the draft on one.

    All after the same context; calls are interleaved so a slow spell hits them alike. Gives c
    (Def 3.7: draft call over target call, both on one position) and v_b.

    >>> target, draft = build_model_pair(target_layers=1)
    >>> curve = cost_curve(target, draft, max_positions=3, calls=2)
    >>> curve.positions, len(curve.target_s), curve.draft_s > 0
    ((1, 2, 3), 3, True)
    """
    context = encode(COST_CONTEXT)
    states = {m: m.new_state() for m in (target, draft)}
    for model, state in states.items():
        model.score(state, context)
    base, new = len(context), context[: _validate.count("max_positions", max_positions, minimum=1)]
    times = np.zeros((_validate.count("calls", calls, minimum=1), max_positions + 1))
    for i in range(calls):
        for j, (model, b) in enumerate([(draft, 1)] + [(target, b) for b in range(1, max_positions + 1)]):
            start = clock()
            model.score(states[model], new[:b])
            times[i, j] = clock() - start
            states[model].rollback(base)
    median = np.median(times, axis=0)
    return CostCurve(
        tuple(range(1, max_positions + 1)),
        tuple(float(v) for v in median[1:]),
        tuple(float(v) for v in np.percentile(times[:, 1:], 10, axis=0)),
        tuple(float(v) for v in np.percentile(times[:, 1:], 90, axis=0)),
        float(median[0]),
        calls,
    )


def predicted_speedup(alpha, gamma, c, verify_ratio) -> float:
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
    return improvement_factor(alpha, gamma, c) * (gamma * c + 1) / (gamma * c + verify_ratio)


def gap_factors(
    alpha, gamma, c, verify_ratio, tokens_per_round, round_s, baseline_step_s, target_call_s
) -> Gap:
    r"""Split measured / Thm 3.8 into three factors whose product is exactly that ratio.

    With :math:`S_{meas} = \mathbb{E}[K]_{meas}\,T_{base} / T_{round}` (measured tokens per round,
    seconds per baseline token and per round) and :math:`T_1` (``target_call_s``) one target call alone:

    .. math::

        \frac{S_{meas}}{S_{3.8}} =
        \underbrace{\frac{\gamma c + 1}{\gamma c + v_\gamma}}_{\text{verify cost}} \times
        \underbrace{\frac{\mathbb{E}[K]_{meas}}{\sum_{j=0}^{\gamma}\alpha^j}}_{\text{acceptance (non-iid)}} \times
        \underbrace{\frac{(\gamma c + v_\gamma)\,T_{base}}{T_{round}}}_{\text{overhead}} .

    The overhead factor is the share of a round's time that the isolated call prices account for,
    :math:`(\gamma c + v_\gamma) T_1 / T_{round}`, over the same share of a baseline step,
    :math:`T_1 / T_{base}`: time outside the model calls (sampling, verification arithmetic, cache
    rollback, the loop) on either side.

    >>> g = gap_factors(0.8, 4, 0.05, 1.2, tokens_per_round=3.2, round_s=1.5e-3, baseline_step_s=1.05e-3,
    ...                 target_call_s=1e-3)
    >>> round(g.verify_cost * g.acceptance * g.overhead, 12) == round(g.total, 12)
    True
    >>> round(g.verify_cost, 3), round(g.acceptance, 3), round(g.overhead, 3)
    (0.857, 0.952, 0.98)
    >>> round(g.round_model_share / g.baseline_model_share, 12) == round(g.overhead, 12)
    True
    """
    c = _validate.nonnegative("c", c)
    verify_ratio = _validate.positive("verify_ratio", verify_ratio)
    tokens_per_round = _validate.positive("tokens_per_round", tokens_per_round)
    round_s = _validate.positive("round_s", round_s)
    baseline_step_s = _validate.positive("baseline_step_s", baseline_step_s)
    target_call_s = _validate.positive("target_call_s", target_call_s)
    priced = gamma * c + verify_ratio
    measured = tokens_per_round * baseline_step_s / round_s
    return Gap(
        total=measured / improvement_factor(alpha, gamma, c),
        verify_cost=(gamma * c + 1) / priced,
        acceptance=tokens_per_round / float(expected_output_count(alpha, gamma)),
        overhead=priced * baseline_step_s / round_s,
        round_model_share=priced * target_call_s / round_s,
        baseline_model_share=target_call_s / baseline_step_s,
    )


def speedup_interval(
    spec_tokens, spec_wall, base_tokens, base_wall, *, resamples=2000, seed=0, confidence=CONFIDENCE
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


def acceptance_by_position(rounds, gamma) -> list[float | None]:
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


def batch_curve(
    target, draft, gamma, alpha, *, max_batch=1024, calls=5, clock=perf_counter, progress=None
) -> BatchCurve:
    r"""Cost per call against the number of sequences scored together, and Thm 3.8's speedup at each batch.

    At batch B: :math:`S(B) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c_B + v_B)}` with
    :math:`c_B = T_{draft}(B,1)/T_{target}(B,1)` and :math:`v_B = T_{target}(B,\gamma+1)/T_{target}(B,1)`,
    all measured (medians of ``calls`` calls, at least 64 / B). B doubles from 1 until the cost
    per token has stopped falling and S(B) < 1 at two batches in a row, or up to ``max_batch``.
    The crossover is the first measured batch from which every S(B) stays below 1; saturation,
    the first from which doubling B keeps more than :data:`SATURATION` of the cost per token. (Every sequence of a batch is taken to accept as many
    drafts; in a real batch they differ, and the shorter ones waste positions.)

    >>> target, draft = build_model_pair(target_layers=1)
    >>> curve = batch_curve(target, draft, 2, 0.8, max_batch=2, calls=1)
    >>> [p.batch for p in curve.points], curve.gamma
    ([1, 2], 2)
    """
    gamma = _validate.count("gamma", gamma, minimum=1)
    context = encode(COST_CONTEXT)[-target.shape.window :]
    points, batch = [], 1
    while batch <= _validate.count("max_batch", max_batch, minimum=1):
        states = {m: m.new_state(batch, capacity=len(context)) for m in (target, draft)}
        for model, state in states.items():
            model.score_batch(state, np.tile(context[: -gamma - 1], (batch, 1)))
        base, new = len(context) - gamma - 1, np.tile(context[-gamma - 1 :], (batch, 1))
        times = np.zeros((max(_validate.count("calls", calls, minimum=1), 64 // batch), 3))
        for i in range(len(times)):
            for j, (model, b) in enumerate(((target, 1), (target, gamma + 1), (draft, 1))):
                start = clock()
                model.score_batch(states[model], new[:, :b])
                times[i, j] = clock() - start
                states[model].rollback(base)
        t1, tv, td = (float(v) for v in np.median(times, axis=0))
        points.append(
            BatchPoint(batch, t1, tv, td, t1 / batch, predicted_speedup(alpha, gamma, td / t1, tv / t1))
        )
        _progress(len(points), None, f"batch {batch}", progress)
        saturated = [
            b.target_s_per_token > SATURATION * a.target_s_per_token for a, b in zip(points, points[1:])
        ]
        losing = [p.speedup_predicted < 1 for p in points]
        if saturated[-1:] == [True] and losing[-2:] == [True, True]:
            break
        batch *= 2
    return BatchCurve(
        gamma,
        float(alpha),
        tuple(points),
        _first_of_final_run([False] + saturated, points),
        _first_of_final_run(losing, points),
    )


def _first_of_final_run(flags, points):
    """The batch where the final run of True flags begins (None if the last flag is False)."""
    if not flags or not flags[-1]:
        return None
    start = len(flags) - 1
    while start > 0 and flags[start - 1]:
        start -= 1
    return points[start].batch


# --- the runs --------------------------------------------------------------------------------------


def _progress(done, total, label, stream):
    if stream is not None:
        if total is None:
            stream.write(f"\r{label:<40}")
        else:
            filled = int(30 * done / total)
            stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {label:<28}")
        stream.flush()


class _Progress:
    def __init__(self, total, stream):
        self.done, self.total, self.stream = 0, total, stream

    def step(self, label):
        self.done += 1
        _progress(self.done, self.total, label, self.stream)


def _decode_seeds(target, draft, seeds, workload, temperature, verifier, progress):
    """Per seed: the baseline and every γ, in an order that rotates with the seed."""
    baseline, speculative = [], {g: [] for g in workload.gammas}
    jobs, clock = [None] + list(workload.gammas), CLOCKS[workload.clock]
    for i, seed in enumerate(seeds):
        prompt = prompt_for_seed(seed)
        for g in jobs[i % len(jobs) :] + jobs[: i % len(jobs)]:
            if g is None:
                baseline.append(
                    autoregressive_generate(
                        target, prompt, workload.new_tokens, seed=seed, temperature=temperature, clock=clock
                    )
                )
            else:
                speculative[g].append(
                    speculative_generate(
                        target,
                        draft,
                        prompt,
                        workload.new_tokens,
                        g,
                        seed=seed,
                        temperature=temperature,
                        verifier=verifier,
                        clock=clock,
                    )
                )
            progress.step(f"seed {seed}: {'baseline' if g is None else f'gamma={g}'}")
    return baseline, speculative


def _pooled_speedup(runs, baseline):
    return (sum(sum(r.emitted for r in run.rounds) for run in runs) / sum(run.wall for run in runs)) / (
        sum(len(run.tokens) for run in baseline) / sum(run.wall for run in baseline)
    )


def _gamma_row(g, runs, baseline, selection_runs, selection_baseline, alpha, c, v, t_target, workload):
    rounds = [r for run in runs for r in run.rounds]
    n = len(rounds)
    tokens = [sum(r.emitted for r in run.rounds) for run in runs]
    walls = [run.wall for run in runs]
    base_tokens, base_walls = [len(run.tokens) for run in baseline], [run.wall for run in baseline]
    round_s, baseline_s = sum(walls) / n, sum(base_walls) / sum(base_tokens)
    tokens_per_round = sum(tokens) / n
    gap = gap_factors(alpha, g, c, v, tokens_per_round, round_s, baseline_s, t_target)
    return GammaRow(
        gamma=g,
        verify_ratio=v,
        speedup_theorem38=float(improvement_factor(alpha, g, c)),
        speedup_predicted_with_v=predicted_speedup(alpha, g, c, v),
        speedup_measured=_pooled_speedup(runs, baseline),
        speedup_measured_ci=speedup_interval(
            tokens, walls, base_tokens, base_walls, resamples=workload.resamples, seed=g
        ),
        speedup_by_repeat=tuple(
            (t / w) / (bt / bw) for t, w, bt, bw in zip(tokens, walls, base_tokens, base_walls)
        ),
        speedup_selection=_pooled_speedup(selection_runs, selection_baseline),
        tokens_per_round=tokens_per_round,
        tokens_per_round_iid=float(expected_output_count(alpha, g)),
        acceptance_by_position=tuple(acceptance_by_position(rounds, g)),
        emitted_counts=tuple(sum(r.emitted == k for r in rounds) for k in range(1, g + 2)),
        rounds=n,
        round_s=round_s,
        draft_s=sum(r.t_draft for r in rounds) / n,
        verify_s=sum(r.t_verify for r in rounds) / n,
        overhead_s=sum(r.t_overhead for r in rounds) / n,
        gap=gap,
    )


def measure_regime(target, draft, workload, curve, temperature, verifier, progress) -> RegimeReport:
    """One regime: α on its own target texts, then decoding on the selection and the held-out seeds."""
    texts, prompt_lengths = [], []
    for seed in workload.alpha_seeds:
        prompt = prompt_for_seed(seed)
        written = autoregressive_generate(
            target, prompt, workload.alpha_tokens, seed=seed, temperature=temperature
        )
        texts.append(np.r_[prompt, written.tokens])
        prompt_lengths.append(len(prompt))
        progress.step(f"alpha: seed {seed}")
    alpha, alpha_se, prefixes = alpha_per_prefix(target, draft, texts, prompt_lengths, temperature)
    c = curve.draft_s / curve.target_s[0]
    v = {g: curve.ratio(g + 1) for g in workload.gammas}
    selection = _decode_seeds(
        target, draft, workload.selection_seeds, workload, temperature, verifier, progress
    )
    held_out = _decode_seeds(
        target, draft, workload.held_out_seeds, workload, temperature, verifier, progress
    )
    rows = tuple(
        _gamma_row(
            g,
            held_out[1][g],
            held_out[0],
            selection[1][g],
            selection[0],
            alpha,
            c,
            v[g],
            curve.target_s[0],
            workload,
        )
        for g in workload.gammas
    )
    chosen = max(rows, key=lambda r: r.speedup_selection)
    baseline = held_out[0]
    return RegimeReport(
        temperature=temperature,
        verifier=verifier.__name__,
        alpha_per_prefix=alpha,
        alpha_per_prefix_se=alpha_se,
        alpha_prefixes=prefixes,
        c_single_call=c,
        verify_ratio_curve={str(g): v[g] for g in workload.gammas},
        gamma=chosen.gamma,
        speedup_measured=chosen.speedup_measured,
        speedup_measured_ci=chosen.speedup_measured_ci,
        speedup_theorem38=chosen.speedup_theorem38,
        speedup_predicted_with_v=chosen.speedup_predicted_with_v,
        gamma_selected_on_seeds=workload.selection_seeds,
        reported_on_seeds=workload.held_out_seeds,
        baseline_step_s=sum(run.wall for run in baseline) / sum(len(run.tokens) for run in baseline),
        baseline_rate_by_repeat=tuple(len(run.tokens) / run.wall for run in baseline),
        rows=rows,
    )


def measure(workload: Workload, *, models=None, progress=None) -> Report:
    """Run ``workload``: independent inputs, both regimes, the batch curve (module docstring: the formulas).

    ``models`` is a (target, draft) pair (default: :func:`~specdec_lib.text_models.build_model_pair`);
    ``progress`` a text stream for a progress bar, or None.

    >>> tiny = Workload(new_tokens=6, repeats=2, gammas=(2,), alpha_sequences=2, alpha_tokens=4, cost_calls=1,
    ...                 max_batch=2, batch_calls=1, resamples=10)
    >>> report = measure(tiny, models=build_model_pair(target_layers=1))
    >>> report.gamma, report.greedy.verifier, [r.gamma for r in report.rows], "held-out" in format_report(report)
    (2, 'verify_greedy_unchecked', [2], True)
    """
    started = perf_counter()
    if workload.repeats < 2:
        raise ValueError("repeats: need at least two seeds per set for an interval")
    if workload.clock not in CLOCKS:
        raise ValueError(f"clock: must be one of {sorted(CLOCKS)}, got {workload.clock!r}")
    target, draft = build_model_pair() if models is None else models
    per_regime = workload.alpha_sequences + 2 * workload.repeats * (1 + len(workload.gammas))
    progress_bar = _Progress(1 + len(REGIMES) * per_regime, progress)
    clock = CLOCKS[workload.clock]
    curve = cost_curve(
        target, draft, max_positions=max(workload.gammas) + 1, calls=workload.cost_calls, clock=clock
    )
    progress_bar.step("cost curve")
    regimes = {
        name: measure_regime(target, draft, workload, curve, temperature, verifier, progress_bar)
        for name, (temperature, verifier) in REGIMES.items()
    }
    sampled = regimes["temperature 1"]
    batches = batch_curve(
        target,
        draft,
        sampled.gamma,
        sampled.alpha_per_prefix,
        max_batch=workload.max_batch,
        calls=workload.batch_calls,
        clock=clock,
        progress=progress,
    )
    if progress is not None:
        progress.write("\n")
    top = {f.name: getattr(sampled, f.name) for f in dataclasses.fields(RegimeReport)}
    return Report(
        **top,
        greedy=regimes["greedy"],
        batch_curve=batches,
        cost_curve=curve,
        machine=machine_info(),
        workload=workload,
        elapsed_s=perf_counter() - started,
    )


# --- output ----------------------------------------------------------------------------------------


def _seeds(seeds) -> str:
    return f"seeds {seeds[0]}–{seeds[-1]}"


def format_regime(regime: RegimeReport) -> list[str]:
    """The table of one regime: inputs, then one line per γ (held-out seeds), then the selected γ."""
    lines = [
        f"α (Cor 3.6) = {regime.alpha_per_prefix:.3f} ± {regime.alpha_per_prefix_se:.3f} (s.e., "
        f"{regime.alpha_prefixes} prefixes of target text); c (Def 3.7) = {regime.c_single_call:.4f}",
        " γ   v_γ   Thm 3.8  with v_γ  measured [95 % interval]   select   E[K] meas/iid   "
        "meas/Thm3.8 = verify × accept × overhead",
    ]
    for r in regime.rows:
        low, high = r.speedup_measured_ci
        g = r.gap
        lines.append(
            f"{r.gamma:2d}  {r.verify_ratio:.2f}   {r.speedup_theorem38:.2f}×    {r.speedup_predicted_with_v:.2f}×"
            f"    {r.speedup_measured:.2f}× [{low:.2f}, {high:.2f}]      {r.speedup_selection:.2f}×    "
            f"{r.tokens_per_round:.2f}/{r.tokens_per_round_iid:.2f}      {g.total:.3f}  = {g.verify_cost:.3f}"
            f" × {g.acceptance:.3f} × {g.overhead:.3f}"
        )
    low, high = regime.speedup_measured_ci
    lines.append(
        f"γ = {regime.gamma} chosen on {_seeds(regime.gamma_selected_on_seeds)}; held-out "
        f"({_seeds(regime.reported_on_seeds)}): {regime.speedup_measured:.2f}× [{low:.2f}, {high:.2f}], "
        f"Thm 3.8 {regime.speedup_theorem38:.2f}×, with v_γ {regime.speedup_predicted_with_v:.2f}×; "
        f"measured / with v_γ = {regime.speedup_measured / regime.speedup_predicted_with_v:.3f}"
    )
    return lines


def format_report(report: Report) -> str:
    """The human-readable report: machine, cost curve, both regimes' tables and the batch curve."""
    m, curve, batches = report.machine, report.cost_curve, report.batch_curve
    lines = [
        f"machine: {m['cpu']} ({m['cores']} cores), Python {m['python']}, numpy {m['numpy']}",
        "one call alone, ms: draft "
        + f"{curve.draft_s * 1e3:.3f}; target by positions scored: "
        + "  ".join(f"{b}:{s * 1e3:.2f}" for b, s in zip(curve.positions, curve.target_s)),
        f"baseline: {1 / report.baseline_step_s:.0f} tokens/s at temperature 1, "
        f"{1 / report.greedy.baseline_step_s:.0f} greedy",
    ]
    for name, regime in (
        ("temperature 1 (verify_unchecked)", report),
        ("greedy (temperature 0, verify_greedy_unchecked)", report.greedy),
    ):
        lines += ["", f"== {name} =="] + format_regime(regime)
    lines += [
        "",
        f"== batch curve (temperature 1, γ = {batches.gamma}) ==",
        " batch   target ms/call (1 | γ+1 positions)   per token µs   draft ms   Thm 3.8 with these costs",
    ]
    for p in batches.points:
        lines.append(
            f"{p.batch:6d}   {p.target_s * 1e3:9.2f} | {p.target_verify_s * 1e3:9.2f}"
            f"               {p.target_s_per_token * 1e6:8.1f}     {p.draft_s * 1e3:7.3f}   {p.speedup_predicted:.2f}×"
        )
    lines.append(
        f"cost per token stops falling at batch {batches.saturation_batch or 'not reached'}; "
        f"speculation stops paying at batch {batches.crossover_batch or 'not reached'}"
    )
    lines.append(f"({report.elapsed_s:.1f} s)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m specdec_lib.measure", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds), not the full one")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    args = parser.parse_args(argv)
    report = measure(WORKLOADS["quick" if args.quick else "full"], progress=sys.stderr)
    print(json.dumps(asdict(report), indent=1, allow_nan=False) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
