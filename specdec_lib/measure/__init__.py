r"""Measure speculative decoding on this machine with the course's trained models, and test the paper's prediction against it.

``python -m specdec_lib.measure [--quick] [--json]`` loads the shipped target and its three drafts
(:mod:`specdec_lib.pair`) and runs an experiment whose prediction can fail. First, separately
from any speculative run, it measures the inputs of Leviathan et al.'s Thm 3.8 (:mod:`.estimators`):

- α (Cor 3.6) per draft, the mean over prefixes of β = Σ_x min(p(x), q(x)) on text the target
  wrote, with its standard error, at temperatures 0, 0.7 and 1;
- c (Def 3.7) per draft: one draft call over one target call, each timed alone;
- v_γ = T_target(γ+1) / T_target(1): the target's cost curve.

From these alone it predicts (a) Thm 3.8 as stated (verification costs one target step) and
(b) the same bound with the measured v_γ:

.. math::

    S_{3.8}(\gamma) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + 1)}, \qquad
    S_{v}(\gamma) = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v_\gamma)}.

Then it decodes (:mod:`.run`), plainly and speculatively with every draft and γ, on two disjoint
sets of seeds (each seed picks a held-out prompt and the sampler's random numbers): γ is chosen
on the first set and every speed-up is reported on the second, with a 95 % bootstrap interval,
and each prediction gets a verdict: inside the interval, above or below it (:mod:`.report`).
Both regimes run: temperature 1 (strict verification) and greedy (``verify_greedy``). Last, the
batch curve and the machine's roofline (:mod:`.roofline`). Rates count every token a round
emitted, including those past the requested length (valid samples; the steady rate the theorem
describes). Times are this process's CPU time (``Workload.clock``) with numpy's BLAS on one thread
(:mod:`specdec_lib.timing`), so spinning BLAS threads are not billed as work. Progress goes to stderr.
"""

from .estimators import (
    acceptance_by_position,
    alpha_per_prefix,
    batch_curve,
    cost_curve,
    gap_factors,
    predicted_speedup,
    speedup_interval,
)
from .report import Report, format_report, to_json_dict, verdict
from .run import measure
from .workload import WORKLOADS, Workload, prompt_for_seed

__all__ = [
    "WORKLOADS",
    "Report",
    "Workload",
    "acceptance_by_position",
    "alpha_per_prefix",
    "batch_curve",
    "cost_curve",
    "format_report",
    "gap_factors",
    "measure",
    "predicted_speedup",
    "prompt_for_seed",
    "speedup_interval",
    "to_json_dict",
    "verdict",
]
