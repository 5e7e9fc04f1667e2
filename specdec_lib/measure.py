r"""Measure speculative decoding on this machine and check the paper's prediction against it.

``python -m specdec_lib.measure [--quick] [--json]`` builds the course's model pair
(:func:`~specdec_lib.text_models.build_model_pair`), times the target's cost for 1..9 positions per
call, then for each repeat decodes with the plain baseline and speculatively for every γ in
the sweep, and reports per γ: acceptance, cost ratio c, the draft/verify/overhead time per
round, and the measured and predicted speedup. Progress goes to stderr.

The prediction is Leviathan et al.'s Thm 3.8 with the measured α and c, corrected for what
one verification call really costs here:

.. math::

    S_{\text{pred}}(\gamma) = \text{improvement\_factor}(\alpha, \gamma, c)\,
    \frac{\gamma c + 1}{\gamma c + v_\gamma}
    = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v_\gamma)},
    \qquad c = \frac{T_{\text{draft}}/\gamma}{T_{\text{target}}(1)},\quad
    v_\gamma = \frac{T_{\text{verify}}(\gamma+1)}{T_{\text{target}}(1)},

where :math:`T_{\text{target}}(1)` is the baseline's measured time per token,
:math:`T_{\text{draft}}` and :math:`T_{\text{verify}}(\gamma+1)` are measured per round, and α is
the measured fraction of reached draft positions that were accepted. What the prediction
leaves out is the overhead (sampling, verification arithmetic, cache rollback) and any
departure of acceptance from iid; measured and predicted differ by exactly those.

Rates count every token a round emitted, including those of the last round past the requested
length: they are valid samples, and counting them gives the steady decoding rate the theorem
describes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import asdict, dataclass
from time import perf_counter

import numpy as np

from . import _validate
from .counting import expected_output_count, improvement_factor
from .generate import autoregressive_generate, speculative_generate
from .text_models import build_model_pair, encode

COST_CONTEXT = "the target scores several positions in one call, so checking drafts costs about one step. "


@dataclass(frozen=True)
class Workload:
    """What one measurement runs: tokens per generation, repeats, the γ sweep, prompt and sampling settings."""

    new_tokens: int
    repeats: int
    gammas: tuple[int, ...] = tuple(range(1, 9))
    cost_calls: int = 30  # target calls per position count for the cost curve
    prompt: str = "speculative decoding "
    temperature: float = 1.0


WORKLOADS = {
    "chapter": Workload(new_tokens=60, repeats=3, cost_calls=12),
    "quick": Workload(new_tokens=100, repeats=6, cost_calls=20),
    "full": Workload(new_tokens=500, repeats=16, cost_calls=100),
}


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
    return {"cpu": cpu, "cores": os.cpu_count(), "system": platform.system(), "python": platform.python_version(),
            "numpy": np.__version__}


def predicted_speedup(alpha, gamma, c, verify_ratio) -> float:
    r"""Thm 3.8's speedup with a measured verification cost: :math:`\frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v)}`.

    ``verify_ratio`` v is T_verify(γ+1)/T_target(1); with v = 1 this is
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


def acceptance_by_position(rounds, gamma) -> list[float]:
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


def target_cost_curve(target, max_positions=9, calls=30) -> dict:
    """Seconds per target call scoring b = 1..max_positions new positions after a fixed context.

    Calls for different b are interleaved so a slow spell hits them alike; returns the median
    and the 10th/90th percentiles per b.

    >>> target, _ = build_model_pair(target_layers=1)
    >>> curve = target_cost_curve(target, max_positions=3, calls=2)
    >>> curve["positions"], len(curve["seconds"])
    ([1, 2, 3], 3)
    """
    state = target.new_state()
    target.score(state, encode(COST_CONTEXT))
    base, new = state.length, encode(COST_CONTEXT)[:max_positions]
    times = np.zeros((calls, max_positions))
    for i in range(calls):
        for b in range(1, max_positions + 1):
            start = perf_counter()
            target.score(state, new[:b])
            times[i, b - 1] = perf_counter() - start
            state.rollback(base)
    return {"positions": list(range(1, max_positions + 1)),
            "seconds": [float(v) for v in np.median(times, axis=0)],
            "p10": [float(v) for v in np.percentile(times, 10, axis=0)],
            "p90": [float(v) for v in np.percentile(times, 90, axis=0)]}


def _progress(done, total, label, stream):
    if stream is not None:
        filled = int(30 * done / total)
        stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {label:<24}")
        stream.write("\n" if done == total else "")
        stream.flush()


def _gamma_summary(gamma, runs, t_step):
    """Pool one γ's runs: acceptance, time per round by part, c, v, measured and predicted speedup."""
    rounds = [r for run in runs for r in run.rounds]
    n = len(rounds)
    alpha = sum(r.num_accepted for r in rounds) / sum(len(r.accepted) for r in rounds)
    parts = {part: sum(getattr(r, part) for r in rounds) / n for part in ("t_draft", "t_verify", "t_overhead")}
    wall_per_round = sum(run.wall for run in runs) / n
    c = parts["t_draft"] / gamma / t_step
    verify_ratio = parts["t_verify"] / t_step
    rate = sum(r.emitted for r in rounds) / sum(run.wall for run in runs)
    return {
        "gamma": gamma,
        "alpha": alpha,
        "acceptance_by_position": acceptance_by_position(rounds, gamma),
        "tokens_per_round": sum(r.emitted for r in rounds) / n,
        "tokens_per_round_iid": float(expected_output_count(alpha, gamma)),
        "emitted_counts": [sum(r.emitted == k for r in rounds) for k in range(1, gamma + 2)],
        "c": c,
        "verify_ratio": verify_ratio,
        **{f"{part}_per_round": value for part, value in parts.items()},
        "wall_per_round": wall_per_round,
        "parts_over_wall": sum(parts.values()) / wall_per_round,
        "speculative_tokens_per_s": rate,
        "speedup_measured": rate * t_step,
        "speedup_by_repeat": [sum(r.emitted for r in run.rounds) / run.wall * t_step for run in runs],
        "speedup_predicted": predicted_speedup(alpha, gamma, c, verify_ratio),
    }


def measure(workload: Workload, *, models=None, progress=None) -> dict:
    """Run ``workload`` and return the report as a JSON-ready dict (see the module docstring for the formulas).

    ``models`` is a (target, draft) pair (default: :func:`~specdec_lib.text_models.build_model_pair`);
    ``progress`` a text stream for a progress bar, or None. Repeat r uses seed r for the
    baseline and for every γ; runs alternate so slow spells on the machine hit all of them.

    >>> tiny = Workload(new_tokens=6, repeats=1, gammas=(2,), cost_calls=1)
    >>> report = measure(tiny, models=build_model_pair(target_layers=1))
    >>> report["gamma"], [s["gamma"] for s in report["sweep"]], "best measured" in format_report(report)
    (2, [2], True)
    """
    started = perf_counter()
    target, draft = build_model_pair() if models is None else models
    prompt = encode(workload.prompt)
    settings = {"temperature": workload.temperature}
    curve = target_cost_curve(target, calls=workload.cost_calls)
    baseline, speculative = [], {g: [] for g in workload.gammas}
    steps, total = 0, workload.repeats * (1 + len(workload.gammas))
    for seed in range(workload.repeats):
        baseline.append(autoregressive_generate(target, prompt, workload.new_tokens, seed=seed, **settings))
        steps += 1
        _progress(steps, total, f"repeat {seed + 1}: baseline", progress)
        for g in workload.gammas:
            speculative[g].append(speculative_generate(target, draft, prompt, workload.new_tokens, g, seed=seed, **settings))
            steps += 1
            _progress(steps, total, f"repeat {seed + 1}: gamma={g}", progress)
    t_step = sum(run.wall for run in baseline) / sum(len(run.tokens) for run in baseline)
    sweep = [_gamma_summary(g, speculative[g], t_step) for g in workload.gammas]
    best = max(sweep, key=lambda s: s["speedup_measured"])
    keys = ("gamma", "alpha", "acceptance_by_position", "c", "t_draft_per_round", "t_verify_per_round",
            "t_overhead_per_round", "wall_per_round", "speculative_tokens_per_s", "speedup_measured",
            "speedup_predicted")
    return {
        "machine": machine_info(),
        **{key: best[key] for key in keys},
        "baseline_tokens_per_s": 1 / t_step,
        "baseline_step_s": t_step,
        "baseline_speedup_by_repeat": [len(run.tokens) / run.wall * t_step for run in baseline],
        "gamma_best_predicted": max(sweep, key=lambda s: s["speedup_predicted"])["gamma"],
        "target_cost_curve": curve,
        "sweep": sweep,
        "workload": asdict(workload),
        "elapsed_s": perf_counter() - started,
    }


def format_report(result: dict) -> str:
    """The human-readable report: machine, cost curve, baseline and one line per γ."""
    m, curve = result["machine"], result["target_cost_curve"]
    lines = [
        f"machine: {m['cpu']} ({m['cores']} cores), Python {m['python']}, numpy {m['numpy']}",
        "target cost per call, ms, by positions scored: "
        + "  ".join(f"{b}:{s * 1e3:.2f}" for b, s in zip(curve["positions"], curve["seconds"])),
        f"baseline: {result['baseline_tokens_per_s']:.0f} tokens/s ({result['baseline_step_s'] * 1e3:.2f} ms/token)",
        "",
        " γ     α     c     v   E[K] meas/iid   draft  verify  overhead  wall (ms/round)   speedup meas  pred  meas/pred",
    ]
    for s in result["sweep"]:
        lines.append(
            f"{s['gamma']:2d}  {s['alpha']:.3f} {s['c']:.3f} {s['verify_ratio']:.2f}  {s['tokens_per_round']:.2f}/"
            f"{s['tokens_per_round_iid']:.2f}     {s['t_draft_per_round'] * 1e3:6.3f} {s['t_verify_per_round'] * 1e3:6.3f}"
            f"  {s['t_overhead_per_round'] * 1e3:6.3f}   {s['wall_per_round'] * 1e3:6.3f}            "
            f"{s['speedup_measured']:.2f}×  {s['speedup_predicted']:.2f}×  {s['speedup_measured'] / s['speedup_predicted']:.3f}")
    lines += ["", f"best measured: γ = {result['gamma']}, {result['speedup_measured']:.2f}× "
              f"({result['speculative_tokens_per_s']:.0f} tokens/s); best predicted: γ = {result['gamma_best_predicted']}",
              f"({result['elapsed_s']:.1f} s)"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specdec_lib.measure", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds), not the full one")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    args = parser.parse_args(argv)
    result = measure(WORKLOADS["quick" if args.quick else "full"], progress=sys.stderr)
    print(json.dumps(result, indent=1, allow_nan=False) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
