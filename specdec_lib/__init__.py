"""specdec_lib: the math and tools behind the course on speculative decoding verification.

Modules follow the lesson: ``distributions`` (a, r, α at one prefix), ``verification``
(one round), ``counting`` (K, E[K], rates and the paper's factors).
"""

from .counting import (
    break_even_verify_time,
    expected_output_count,
    expected_wasted_proposals,
    improvement_factor,
    operations_factor,
    optimal_gamma,
    output_count_pmf,
    scenario_rate,
)
from .distributions import (
    acceptance_probabilities,
    acceptance_rate,
    output_distribution,
    residual_distribution,
)
from .verification import VerifiedRound, sample_token, verify

__all__ = [
    "acceptance_probabilities",
    "acceptance_rate",
    "break_even_verify_time",
    "expected_output_count",
    "expected_wasted_proposals",
    "improvement_factor",
    "operations_factor",
    "optimal_gamma",
    "output_count_pmf",
    "output_distribution",
    "residual_distribution",
    "sample_token",
    "scenario_rate",
    "verify",
    "VerifiedRound",
]
