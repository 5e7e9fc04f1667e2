r"""Timing verification rules side by side on one model pair, through one decoding loop.

Every rule runs through ``tree_decoding.tree_generate`` on the same prompts; plain decoding is the
empty tree through the same loop, so loop overhead is priced alike. For each prompt (one per
seed) the baseline and every rule run back to back, so a slow spell on a shared machine touches
all of them. The speed-up of a rule is the pooled ratio of tokens per CPU second,

.. math:: S = \frac{\sum_r n_r / \sum_r t_r}{\sum_r n^{\text{plain}}_r / \sum_r t^{\text{plain}}_r},

with the percentile bootstrap interval over prompts of ``measure.speedup_interval`` (each prompt
keeps its rule and baseline runs together). Intervals that do not overlap rank two rules
(``ranking``); overlapping ones do not.

The runs use the course's timing convention (:mod:`specdec_lib.timing`): this process's CPU time
with one BLAS thread, since numpy's OpenBLAS otherwise splits products above a size threshold
over both cores and the CPU clock then bills a 9-row target call at ten times a 5-row one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _validate
from .measure import speedup_interval
from .timing import CPU_CLOCK, one_blas_thread
from .tree_decoding import PathModel, TreeRun, tree_generate


@dataclass(frozen=True)
class RuleTiming:
    """One rule on the pair: counts per target call (tokens with a standard error over rounds), and the
    speed-up over plain decoding with its 95 % interval."""

    name: str
    tokens_per_call: float
    tokens_per_call_se: float
    rows_per_call: float
    drafts_per_call: float
    speedup: float
    low: float
    high: float
    rounds: int


def time_rules(
    target: PathModel,
    draft: PathModel,
    rules: dict[str, dict[str, Any]],
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    *,
    clock: Callable[[], float] = CPU_CLOCK,
    progress: Callable[[str], None] | None = None,
) -> dict[str, RuleTiming]:
    """Run plain decoding and every rule on every prompt; return ``{name: RuleTiming}`` in ``rules``' order.

    ``rules``: ``{name: keyword arguments of tree_generate}`` (``shape`` with ``rule`` or
    ``verifier``, or ``policy``: a zero-argument factory of a fresh adaptive-γ policy, since
    policies learn). ``prompts``: one token sequence per seed (at least two).
    ``progress``: called with a short label after each run.

    >>> from specdec_lib.toy_models import toy_model_pair
    >>> from specdec_lib.tree_decoding import PathModel
    >>> from specdec_lib.trees import tree_shape
    >>> target, draft = (PathModel(m) for m in toy_model_pair(exact=False))
    >>> timings = time_rules(target, draft, {"chain": {"shape": tree_shape((1, 1))}}, [(0,), (1,)], 20)
    >>> timings["chain"].rows_per_call
    3.0
    """
    prompts = [tuple(p) for p in prompts]
    if len(prompts) < 2:
        raise ValueError("prompts: need at least two (one per seed) for an interval")
    max_new_tokens = _validate.count("max_new_tokens", max_new_tokens, minimum=1)
    base: list[TreeRun] = []
    runs: dict[str, list[TreeRun]] = {name: [] for name in rules}
    with one_blas_thread():
        _run_all(target, draft, rules, prompts, max_new_tokens, clock, progress, base, runs)
    return {name: _summary(name, group, base) for name, group in runs.items()}


def _run_all(
    target: PathModel,
    draft: PathModel,
    rules: dict[str, dict[str, Any]],
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    clock: Callable[[], float],
    progress: Callable[[str], None] | None,
    base: list[TreeRun],
    runs: dict[str, list[TreeRun]],
) -> None:
    for seed, prompt in enumerate(prompts):
        base.append(tree_generate(target, draft, prompt, max_new_tokens, (), seed=seed, clock=clock))
        for name, kwargs in rules.items():
            kwargs = dict(kwargs)
            if "policy" in kwargs:
                kwargs["policy"] = kwargs["policy"]()
            runs[name].append(
                tree_generate(target, draft, prompt, max_new_tokens, seed=seed, clock=clock, **kwargs)
            )
            if progress is not None:
                progress(f"seed {seed}: {name}")


def ranking(timings: dict[str, RuleTiming], names: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """Pairs (faster, slower) whose 95 % intervals do not overlap; only these may be ranked in prose.

    >>> a = RuleTiming("a", 2.0, 0.1, 3.0, 2.0, 1.5, 1.4, 1.6, 10)
    >>> b = RuleTiming("b", 1.5, 0.1, 3.0, 2.0, 1.2, 1.1, 1.3, 10)
    >>> c = RuleTiming("c", 1.5, 0.1, 3.0, 2.0, 1.25, 1.15, 1.45, 10)
    >>> ranking({"a": a, "b": b, "c": c})
    [('a', 'b')]
    """
    names = list(timings) if names is None else list(names)
    return [(x, y) for x in names for y in names if timings[x].low > timings[y].high]


def _summary(name: str, runs: list[TreeRun], base: list[TreeRun]) -> RuleTiming:
    rounds = [r for run in runs for r in run.rounds]
    emitted = [r.emitted for r in rounds]
    tokens = [sum(r.emitted for r in run.rounds) for run in runs]  # the time covers every round whole
    seconds = [run.seconds for run in runs]
    base_tokens, base_seconds = [len(run.rounds) for run in base], [run.seconds for run in base]
    low, high = speedup_interval(tokens, seconds, base_tokens, base_seconds)
    return RuleTiming(
        name,
        tokens_per_call=float(np.mean(emitted)),
        tokens_per_call_se=float(np.std(emitted, ddof=1) / np.sqrt(len(emitted)))
        if len(emitted) > 1
        else 0.0,
        rows_per_call=sum(r.rows for r in rounds) / len(rounds),
        drafts_per_call=sum(r.drafted for r in rounds) / len(rounds),
        speedup=(sum(tokens) / sum(seconds)) / (sum(base_tokens) / sum(base_seconds)),
        low=low,
        high=high,
        rounds=len(rounds),
    )
