"""The measurement, in order: the models' table, the independent inputs, the decoding runs, the batch curve, the roofline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any, TextIO

import numpy as np

from ..counting import expected_output_count
from ..generate import Generation, autoregressive_generate, speculative_generate
from ..pair import DRAFTS, PRIMARY_DRAFT, load_model, model_table
from ..speedup import improvement_factor
from ..timing import one_blas_thread
from ..transformer import Transformer
from .estimators import (
    acceptance_by_position,
    alpha_per_prefix,
    batch_curve,
    cost_curve,
    gap_factors,
    predicted_speedup,
    speedup_interval,
)
from .report import CostCurve, GammaRow, RegimeReport, Report, Verdict, verdict
from .roofline import measure_roofline
from .workload import (
    CLOCKS,
    PROMPT_CHARS,
    REGIMES,
    TEMPERATURES,
    LanguageModel,
    Workload,
    machine_info,
    prompt_for_seed,
    validate,
)


class Progress:
    """A one-line progress bar on ``stream`` (or nothing when it is None)."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.done, self.total, self.stream = 0, total, stream

    def step(self, label: str) -> None:
        self.done += 1
        if self.stream is not None:
            filled = int(30 * min(self.done, self.total) / self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {label:<32}")
            self.stream.flush()


#: One set of seeds' runs: the plain baselines, and the speculative runs by (draft, γ).
Decoded = tuple[list[Generation], dict[tuple[str, int], list[Generation]]]


def target_texts(
    target: LanguageModel, workload: Workload, temperature: float, progress: Progress
) -> tuple[list[np.ndarray], list[int]]:
    """The α texts: prompt + ``alpha_tokens`` the target wrote at ``temperature``, one per α seed."""
    texts, prompt_lengths = [], []
    for seed in workload.alpha_seeds:
        prompt = prompt_for_seed(seed)
        written = autoregressive_generate(
            target, prompt, workload.alpha_tokens, seed=seed, temperature=temperature
        )
        texts.append(np.r_[prompt, written.tokens])
        prompt_lengths.append(len(prompt))
        progress.step(f"alpha text T={temperature}, seed {seed}")
    return texts, prompt_lengths


@one_blas_thread()
def decode_seeds(
    target: LanguageModel,
    drafts: dict[str, LanguageModel],
    seeds: Sequence[int],
    workload: Workload,
    temperature: float,
    verifier: Callable[..., Any],
    progress: Progress,
) -> Decoded:
    """Per seed: the plain baseline and every (draft, γ), in an order that rotates with the seed."""
    baseline: list[Generation] = []
    speculative: dict[tuple[str, int], list[Generation]] = {
        (d, g): [] for d in drafts for g in workload.gammas
    }
    jobs: list[tuple[str, int] | None] = [None, *speculative]
    clock = CLOCKS[workload.clock]
    for i, seed in enumerate(seeds):
        prompt = prompt_for_seed(seed)
        for job in jobs[i % len(jobs) :] + jobs[: i % len(jobs)]:
            if job is None:
                run = autoregressive_generate(
                    target, prompt, workload.new_tokens, seed=seed, temperature=temperature, clock=clock
                )
                baseline.append(run)
            else:
                run = speculative_generate(
                    target,
                    drafts[job[0]],
                    prompt,
                    workload.new_tokens,
                    job[1],
                    seed=seed,
                    temperature=temperature,
                    verifier=verifier,
                    clock=clock,
                )
                speculative[job].append(run)
            progress.step(f"seed {seed}: {'baseline' if job is None else f'{job[0]}, gamma={job[1]}'}")
    return baseline, speculative


def _emitted(run: Generation) -> int:
    return sum(r.emitted for r in run.rounds)


def pooled_speedup(runs: Sequence[Generation], baseline: Sequence[Generation]) -> float:
    """(Σ tokens / Σ seconds) of the speculative runs over the same for their baselines."""
    rate = sum(_emitted(run) for run in runs) / sum(run.wall for run in runs)
    return rate / (sum(len(run.tokens) for run in baseline) / sum(run.wall for run in baseline))


def gamma_row(
    g: int,
    runs: list[Generation],
    baseline: list[Generation],
    selection: list[Generation],
    selection_baseline: list[Generation],
    alpha: float,
    c: float,
    v: float,
    t_target: float,
    workload: Workload,
) -> GammaRow:
    """Everything measured at one γ on the held-out seeds, beside both predictions."""
    rounds = [r for run in runs for r in run.rounds]
    base_rounds = [r for run in baseline for r in run.rounds]
    n = len(rounds)
    tokens, walls = [_emitted(run) for run in runs], [run.wall for run in runs]
    base_tokens, base_walls = [len(run.tokens) for run in baseline], [run.wall for run in baseline]
    round_s, baseline_s = sum(walls) / n, sum(base_walls) / sum(base_tokens)
    tokens_per_round = sum(tokens) / n
    round_model_s = sum(r.t_draft + r.t_verify for r in rounds) / n
    baseline_model_s = sum(r.t_verify for r in base_rounds) / len(base_rounds)
    return GammaRow(
        gamma=g,
        verify_ratio=v,
        speedup_theorem38=float(improvement_factor(alpha, g, c)),
        speedup_predicted_with_v=predicted_speedup(alpha, g, c, v),
        speedup_measured=pooled_speedup(runs, baseline),
        speedup_measured_ci=speedup_interval(
            tokens, walls, base_tokens, base_walls, resamples=workload.resamples, seed=g
        ),
        speedup_by_repeat=tuple(
            (t / w) / (bt / bw) for t, w, bt, bw in zip(tokens, walls, base_tokens, base_walls)
        ),
        speedup_selection=pooled_speedup(selection, selection_baseline),
        tokens_per_round=tokens_per_round,
        tokens_per_round_iid=float(expected_output_count(alpha, g)),
        acceptance_by_position=tuple(acceptance_by_position(rounds, g)),
        emitted_counts=tuple(sum(r.emitted == k for r in rounds) for k in range(1, g + 2)),
        rounds=n,
        round_s=round_s,
        draft_s=sum(r.t_draft for r in rounds) / n,
        verify_s=sum(r.t_verify for r in rounds) / n,
        overhead_s=sum(r.t_overhead for r in rounds) / n,
        gap=gap_factors(
            alpha, g, c, v, tokens_per_round, round_s, baseline_s, t_target, round_model_s, baseline_model_s
        ),
    )


def regime_report(
    draft: str,
    temperature: float,
    verifier: Callable[..., Any],
    alpha: tuple[float, float, int],
    curve: CostCurve,
    selection: Decoded,
    held_out: Decoded,
    workload: Workload,
) -> RegimeReport:
    """One draft in one regime: γ chosen on the selection seeds, reported on the held-out ones, with verdicts."""
    c = curve.c(draft)
    v = {g: curve.ratio(g + 1) for g in workload.gammas}
    rows = tuple(
        gamma_row(
            g,
            held_out[1][draft, g],
            held_out[0],
            selection[1][draft, g],
            selection[0],
            alpha[0],
            c,
            v[g],
            curve.target_s[0],
            workload,
        )
        for g in workload.gammas
    )
    chosen = max(rows, key=lambda r: r.speedup_selection)
    (theorem38, theorem38_by), (with_v, with_v_by) = (
        verdict(prediction, chosen.speedup_measured_ci)
        for prediction in (chosen.speedup_theorem38, chosen.speedup_predicted_with_v)
    )
    baseline = held_out[0]
    return RegimeReport(
        draft=draft,
        temperature=temperature,
        verifier=verifier.__name__,
        alpha_per_prefix=alpha[0],
        alpha_per_prefix_se=alpha[1],
        alpha_prefixes=alpha[2],
        c_single_call=c,
        verify_ratio_curve={str(g): v[g] for g in workload.gammas},
        gamma=chosen.gamma,
        speedup_measured=chosen.speedup_measured,
        speedup_measured_ci=chosen.speedup_measured_ci,
        speedup_theorem38=chosen.speedup_theorem38,
        speedup_predicted_with_v=chosen.speedup_predicted_with_v,
        verdict=Verdict(theorem38, with_v, theorem38_by, with_v_by),
        gamma_selected_on_seeds=workload.selection_seeds,
        reported_on_seeds=workload.held_out_seeds,
        baseline_step_s=sum(run.wall for run in baseline) / sum(len(run.tokens) for run in baseline),
        baseline_rate_by_repeat=tuple(len(run.tokens) / run.wall for run in baseline),
        rows=rows,
    )


@one_blas_thread()
def measure(
    workload: Workload,
    *,
    target: LanguageModel | None = None,
    drafts: dict[str, LanguageModel] | None = None,
    primary: str = PRIMARY_DRAFT,
    progress: TextIO | None = None,
) -> Report:
    """Run ``workload`` on ``target`` and ``drafts`` ({name: model}; default: the shipped models).

    First the inputs, each measured apart from the runs it predicts: the models' held-out loss,
    the cost curve (c per draft, v_γ), α per draft at every temperature in :data:`TEMPERATURES`
    on text the target wrote. Then both regimes' decoding runs for every draft and γ, on the
    selection and the held-out seeds; the batch curve of the ``primary`` draft; the roofline.
    ``progress``: a text stream for a progress bar, or None.

    >>> from specdec_lib.transformer import Config, Transformer
    >>> tiny = Workload(new_tokens=6, repeats=2, gammas=(2,), alpha_sequences=2, alpha_tokens=4, cost_calls=1,
    ...                 max_batch=2, batch_calls=1, roofline_repeats=1, roofline_max_positions=2, resamples=10)
    >>> target, draft = (Transformer.random(Config(1, 16, 2), seed=s) for s in (0, 1))
    >>> report = measure(tiny, target=target, drafts={"d": draft}, primary="d")
    >>> report.regimes["greedy"].verifier, [r.gamma for r in report.by_draft["d"]["temperature_1"].rows]
    ('verify_greedy_unchecked', [2])
    >>> report.regimes["temperature_1"].verdict.theorem38 in ("inside", "above", "below")
    True
    """
    started = perf_counter()
    workload = validate(workload)
    clock = CLOCKS[workload.clock]
    target = load_model("target") if target is None else target
    if not isinstance(target, Transformer):  # the cost curve and roofline read its layer stack
        raise ValueError(f"target: must be a Transformer, got {type(target).__name__}")
    drafts = {name: load_model(name) for name in DRAFTS} if drafts is None else drafts
    if primary not in drafts:
        raise ValueError(f"primary: must name one of the drafts {sorted(drafts)}, got {primary!r}")
    runs_per_set = workload.repeats * (1 + len(drafts) * len(workload.gammas))
    progress = Progress(
        2 + len(TEMPERATURES) * workload.alpha_sequences + len(REGIMES) * 2 * runs_per_set, progress
    )
    models = model_table()
    progress.step("models' held-out loss")
    context = min(target.config.window, PROMPT_CHARS + workload.new_tokens // 2)
    curve = cost_curve(target, drafts, context, max(workload.gammas) + 1, workload.cost_calls, clock)
    progress.step("cost curve")
    alphas: dict[str, dict[str, tuple[float, float, int]]] = {name: {} for name in drafts}
    for temperature in TEMPERATURES:
        texts, lengths = target_texts(target, workload, temperature, progress)
        for name, draft in drafts.items():
            alphas[name][f"{temperature:g}"] = alpha_per_prefix(target, draft, texts, lengths, temperature)
    by_draft: dict[str, dict[str, RegimeReport]] = {name: {} for name in drafts}
    for regime, (temperature, verifier) in REGIMES.items():
        selection, held_out = (
            decode_seeds(target, drafts, seeds, workload, temperature, verifier, progress)
            for seeds in (workload.selection_seeds, workload.held_out_seeds)
        )
        for name in drafts:
            alpha = alphas[name][f"{temperature:g}"]
            by_draft[name][regime] = regime_report(
                name, temperature, verifier, alpha, curve, selection, held_out, workload
            )
    sampled = by_draft[primary]["temperature_1"]
    batches = batch_curve(
        target,
        drafts[primary],
        sampled.gamma,
        sampled.alpha_per_prefix,
        draft_name=primary,
        max_batch=workload.max_batch,
        calls=workload.batch_calls,
        clock=clock,
    )
    roofline = measure_roofline(target, workload.roofline_max_positions, workload.roofline_repeats, clock)
    if progress.stream is not None:
        progress.stream.write("\n")
    return Report(
        models=models,
        drafts={
            name: {"alpha": a[0], "alpha_se": a[1], "c": curve.c(name)}
            for name, a in ((name, alphas[name]["1"]) for name in drafts)
        },
        regimes=by_draft[primary],
        roofline=roofline,
        alpha_by_temperature={
            name: {t: (a[0], a[1]) for t, a in by_temperature.items()}
            for name, by_temperature in alphas.items()
        },
        by_draft=by_draft,
        cost_curve=curve,
        batch_curve=batches,
        machine=machine_info(),
        workload=workload,
        elapsed_s=perf_counter() - started,
    )
