"""What one measurement runs: seeds, lengths, the γ sweep, the clocks, the regimes, and the prompts."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validate
from ..corpus import corpus_split
from ..greedy import verify_greedy_unchecked
from ..timing import CLOCKS
from ..verification import verify_unchecked

PROMPT_CHARS = 24  # characters of held-out corpus text each seed's prompt starts from
CONFIDENCE = 0.95
REGIMES = {"temperature_1": (1.0, verify_unchecked), "greedy": (0.0, verify_greedy_unchecked)}
TEMPERATURES = (0.0, 0.7, 1.0)  # α against temperature, for every draft
#: The target (a ``Transformer``) or a draft (a ``Transformer`` or an n-gram model): ``new_state``,
#: ``score`` and ``score_batch`` are all the measurement calls.
LanguageModel = Any


@dataclass(frozen=True)
class Workload:
    """What one measurement runs.

    ``repeats`` seeds in each of two disjoint sets (γ is chosen on the first, reported on the
    second), ``new_tokens`` per decoding run, the γ sweep; α on ``alpha_sequences`` target texts of
    ``alpha_tokens`` tokens per temperature; ``cost_calls`` timed calls per point of the cost curve;
    the batch curve doubles the batch up to ``max_batch``, ``batch_calls`` calls per point; the
    roofline times ``roofline_repeats`` calls per n, n = 1, 2, 4, … ``roofline_max_positions``. ``clock`` names the timer in :data:`CLOCKS`:
    ``"cpu"`` (this process's CPU time, so other programs on a shared machine do not count) or
    ``"wall"``.
    """

    new_tokens: int
    repeats: int
    gammas: tuple[int, ...] = tuple(range(1, 9))
    alpha_sequences: int = 8
    alpha_tokens: int = 200
    cost_calls: int = 30
    max_batch: int = 1024
    batch_calls: int = 5
    roofline_repeats: int = 3
    roofline_max_positions: int = 1024
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
        new_tokens=60,
        repeats=3,
        gammas=(1, 2, 4),
        alpha_sequences=3,
        alpha_tokens=80,
        cost_calls=15,
        max_batch=64,
        batch_calls=3,
        roofline_repeats=1,
        roofline_max_positions=256,
        resamples=1000,
    ),
    "quick": Workload(
        new_tokens=40,
        repeats=2,
        gammas=(1, 3),
        alpha_sequences=2,
        alpha_tokens=40,
        cost_calls=10,
        max_batch=16,
        batch_calls=3,
        roofline_repeats=1,
        roofline_max_positions=64,
        resamples=500,
    ),
    "full": Workload(
        new_tokens=400,
        repeats=12,
        gammas=(1, 2, 3, 4, 6, 8),
        alpha_sequences=12,
        alpha_tokens=300,
        cost_calls=100,
        max_batch=1024,
        batch_calls=5,
        roofline_repeats=5,
    ),
}


def validate(workload: Workload) -> Workload:
    """The workload, or a ``ValueError`` naming what cannot be run."""
    if workload.repeats < 2:
        raise ValueError("repeats: need at least two seeds per set for an interval")
    if workload.alpha_sequences < 2:
        raise ValueError("alpha_sequences: need at least two texts for a standard error")
    if workload.clock not in CLOCKS:
        raise ValueError(f"clock: must be one of {sorted(CLOCKS)}, got {workload.clock!r}")
    for gamma in workload.gammas:
        _validate.count("gammas", gamma, minimum=1)
    return workload


def prompt_for_seed(seed: int) -> np.ndarray:
    """The prompt of run ``seed``: :data:`PROMPT_CHARS` held-out characters from a word start the seed picks.

    Prompts come from the held-out split, so the models continue text none of them trained on.

    >>> from specdec_lib.corpus import decode
    >>> decode(prompt_for_seed(0)) == decode(prompt_for_seed(0)) != decode(prompt_for_seed(1))
    True
    """
    tokens = corpus_split()[1]
    starts = np.flatnonzero(tokens[:-PROMPT_CHARS] == 1) + 1  # after a space (id 1)
    start = starts[np.random.default_rng([_validate.count("seed", seed), 1]).integers(len(starts))]
    return tokens[start : start + PROMPT_CHARS]


def machine_info() -> dict[str, Any]:
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
