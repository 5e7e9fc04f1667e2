"""The measurement's typed report, its verdicts, its JSON form and its text form.

The JSON object (``python -m specdec_lib.measure --json``) holds ``models``, ``drafts``,
``regimes`` (``temperature_1`` and ``greedy``, nested alike), ``roofline`` and the context
(``alpha_by_temperature``, ``by_draft``, ``cost_curve``, ``batch_curve``, ``machine``,
``workload``, ``elapsed_s``); the README lists every key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from .workload import Workload

VERDICTS = ("inside", "above", "below")


@dataclass(frozen=True)
class Verdict:
    """Where a prediction falls against the measured 95 % interval, and how far outside (relative)."""

    theorem38: str
    with_v: str
    theorem38_by: float  # prediction / nearer interval end − 1 (0 inside)
    with_v_by: float


def verdict(prediction: float, interval: tuple[float, float]) -> tuple[str, float]:
    """("inside" | "above" | "below", relative distance to the nearer end of ``interval``).

    >>> verdict(1.5, (1.2, 1.4))
    ('above', 0.0714)
    >>> verdict(1.3, (1.2, 1.4)), verdict(1.0, (1.25, 1.4))
    (('inside', 0.0), ('below', -0.2))
    """
    low, high = interval
    if prediction > high:
        return "above", round(prediction / high - 1, 4)
    if prediction < low:
        return "below", round(prediction / low - 1, 4)
    return "inside", 0.0


@dataclass(frozen=True)
class Gap:
    """Measured / Thm 3.8 = ``verify_cost`` × ``acceptance`` × ``overhead`` (exactly; see ``gap_factors``).

    Shares are in-loop and never exceed 1: the part of a round (of a baseline step) spent inside
    model calls. Pricings compare those in-loop call times with the isolated prices
    ((γc + v_γ)·T₁ for a round, T₁ for a step); ``overhead`` = (round share / round pricing) /
    (baseline share / baseline pricing).
    """

    total: float
    verify_cost: float
    acceptance: float
    overhead: float
    round_model_share: float
    baseline_model_share: float
    round_pricing: float
    baseline_pricing: float


@dataclass(frozen=True)
class GammaRow:
    """One γ: the two predictions, and what the held-out seeds measured (rounds pooled over seeds)."""

    gamma: int
    verify_ratio: float
    speedup_theorem38: float
    speedup_predicted_with_v: float
    speedup_measured: float
    speedup_measured_ci: tuple[float, float]
    speedup_by_repeat: tuple[float, ...]
    speedup_selection: float
    tokens_per_round: float  # measured E[K]: tokens per target call
    tokens_per_round_iid: float  # Σ α^j at the independently measured α
    acceptance_by_position: tuple[float | None, ...]
    emitted_counts: tuple[int, ...]  # rounds that emitted K = 1, …, γ + 1 tokens
    rounds: int
    round_s: float
    draft_s: float
    verify_s: float
    overhead_s: float
    gap: Gap


@dataclass(frozen=True)
class RegimeReport:
    """One decoding regime with one draft: the inputs, the held-out result at the chosen γ, its verdict, every γ."""

    draft: str
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
    verdict: Verdict
    gamma_selected_on_seeds: tuple[int, ...]
    reported_on_seeds: tuple[int, ...]
    baseline_step_s: float
    baseline_rate_by_repeat: tuple[float, ...]
    rows: tuple[GammaRow, ...]

    def row(self, gamma: int) -> GammaRow:
        return next(r for r in self.rows if r.gamma == gamma)


@dataclass(frozen=True)
class CostCurve:
    """Median seconds per call (10th/90th percentiles) after ``context`` tokens, calls interleaved."""

    context: int
    positions: tuple[int, ...]
    target_s: tuple[float, ...]
    target_p10: tuple[float, ...]
    target_p90: tuple[float, ...]
    draft_s: dict[str, float]  # each draft, one call on one position
    calls: int

    def ratio(self, positions: int) -> float:
        """:math:`v_b = T_{target}(b) / T_{target}(1)`."""
        return self.target_s[positions - 1] / self.target_s[0]

    def c(self, draft: str) -> float:
        """Def 3.7's c for ``draft``: one draft call over one target call."""
        return self.draft_s[draft] / self.target_s[0]


@dataclass(frozen=True)
class BatchPoint:
    """Costs at one batch size (median seconds per call) and the speedup Thm 3.8 gives with them."""

    batch: int
    target_s: float
    target_verify_s: float
    draft_s: float
    target_s_per_token: float
    speedup_predicted: float


@dataclass(frozen=True)
class BatchCurve:
    """How the gain at the temperature-1 γ shrinks as more sequences share each call."""

    draft: str
    gamma: int
    alpha: float
    points: tuple[BatchPoint, ...]
    saturation_batch: int | None
    crossover_batch: int | None


@dataclass(frozen=True)
class Roofline:
    """This machine's roofline and a weight stack timed on it (see :mod:`specdec_lib.measure.roofline`)."""

    bandwidth_gb_s: float
    peak_gflop_s: float
    llc_bytes: int
    stack_bytes: int
    stack_layers: int
    stack_width: int
    positions: tuple[int, ...]
    predicted_s: tuple[float, ...]
    measured_s: tuple[float, ...]
    crossover_predicted: float
    crossover_measured: float
    target_flat: dict[str, float]  # the trained target's T(1) against its parts


@dataclass(frozen=True)
class Report:
    """Everything one measurement found (JSON keys: the field names)."""

    models: dict[str, dict[str, float | int]]
    drafts: dict[str, dict[str, float]]  # name -> alpha, alpha_se, c (temperature 1)
    regimes: dict[str, RegimeReport]  # the primary draft in both regimes
    roofline: Roofline
    alpha_by_temperature: dict[str, dict[str, tuple[float, float]]]  # draft -> temperature -> (α, s.e.)
    by_draft: dict[str, dict[str, RegimeReport]]  # draft -> regime -> report
    cost_curve: CostCurve
    batch_curve: BatchCurve
    machine: dict
    workload: Workload
    elapsed_s: float


def to_json_dict(report: Report) -> dict:
    """The report as plain JSON-ready data (dataclasses to dicts, tuples to lists)."""
    return asdict(report)


def _seeds(seeds: Sequence[int]) -> str:
    return f"seeds {seeds[0]}–{seeds[-1]}"


def format_regime(regime: RegimeReport) -> list[str]:
    """The table of one regime: inputs, then one line per γ (held-out seeds), then the selected γ and verdicts."""
    lines = [
        f"draft {regime.draft}: α (Cor 3.6) = {regime.alpha_per_prefix:.3f} ± {regime.alpha_per_prefix_se:.3f} "
        f"(s.e., {regime.alpha_prefixes} prefixes of target text); c (Def 3.7) = {regime.c_single_call:.4f}",
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
    v = regime.verdict
    lines.append(
        f"γ = {regime.gamma} chosen on {_seeds(regime.gamma_selected_on_seeds)}; held-out "
        f"({_seeds(regime.reported_on_seeds)}): {regime.speedup_measured:.2f}× [{low:.2f}, {high:.2f}]; "
        f"Thm 3.8 {regime.speedup_theorem38:.2f}× ({v.theorem38}, {v.theorem38_by:+.1%}), "
        f"with v_γ {regime.speedup_predicted_with_v:.2f}× ({v.with_v}, {v.with_v_by:+.1%})"
    )
    return lines


def format_report(report: Report) -> str:
    """The human-readable report: models, machine, roofline, cost curve, every draft's tables, the batch curve."""
    m, curve, batches, roof = report.machine, report.cost_curve, report.batch_curve, report.roofline
    lines = [f"machine: {m['cpu']} ({m['cores']} cores), Python {m['python']}, numpy {m['numpy']}", "models:"]
    lines += [
        f"  {name:<10} {row['params']:>9,} params  {row['heldout_bits_per_char']:.3f} bits/char held out"
        for name, row in report.models.items()
    ]
    lines.append(
        "α by temperature: "
        + "; ".join(
            f"{draft} " + ", ".join(f"T={t}: {a:.3f}" for t, (a, _) in by_t.items())
            for draft, by_t in report.alpha_by_temperature.items()
        )
    )
    lines += [
        f"roofline: triad {roof.bandwidth_gb_s:.1f} GB/s, matmul {roof.peak_gflop_s:.1f} GFLOP/s, LLC "
        f"{roof.llc_bytes / 2**20:.0f} MiB; {roof.stack_bytes / 2**20:.0f} MiB stack crossover n = "
        f"{roof.crossover_predicted:.1f} predicted, {roof.crossover_measured:.1f} measured",
        "one call alone, ms: "
        + ", ".join(f"draft {name} {s * 1e3:.3f}" for name, s in curve.draft_s.items())
        + "; target by positions: "
        + "  ".join(f"{b}:{s * 1e3:.2f}" for b, s in zip(curve.positions, curve.target_s)),
    ]
    for draft, regimes in report.by_draft.items():
        for name, regime in regimes.items():
            lines += ["", f"== {draft} draft, {name} ({regime.verifier}) =="] + format_regime(regime)
    lines += [
        "",
        f"== batch curve ({batches.draft} draft, temperature 1, γ = {batches.gamma}) ==",
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
