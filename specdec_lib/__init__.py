"""specdec_lib: the math and tools behind the course on speculative decoding verification.

Modules follow the lesson: ``distributions`` (a, r, α at one prefix), ``verification``
(one round), ``counting`` (K, E[K], rates and the paper's factors).
The verification lab adds ``streams`` (exact stream laws), ``simulate`` (many rounds at
once), ``transforms`` (temperature, top-k, top-p and mismatches), ``greedy``, ``checker``
(is a verifier exact?) and ``broken_verifiers`` (planted bugs), on ``lab_models``.
Measurement: ``models`` (a cost-realistic numpy model pair with caches), ``generate``
(plain and speculative generation with timed rounds) and ``measure`` (the command).
Tools: ``stats`` (chi-square checks), ``plotting``, ``explorers``, ``quiz``, ``notebooks``,
``coursework`` and ``sphinx_site``.
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
    accepted_mass,
    acceptance_rate,
    output_distribution,
    residual_distribution,
)
from .verification import VerifiedRound, sample_token, verify
from .transforms import mismatched_output_distribution, sampling_transform, total_variation_distance
from .greedy import argmax_distribution, verify_greedy
from .simulate import SimulatedRounds, simulate_rounds
from .streams import exact_stream_distribution, round_distribution, target_stream_distribution
from .checker import VerifierReport, check_verifier
from .lab_models import lab_model_pair
from .generate import autoregressive_generate, speculative_generate
from .models import build_model_pair

__all__ = [
    "accepted_mass",
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
    "sampling_transform",
    "mismatched_output_distribution",
    "total_variation_distance",
    "argmax_distribution",
    "verify_greedy",
    "SimulatedRounds",
    "simulate_rounds",
    "exact_stream_distribution",
    "round_distribution",
    "target_stream_distribution",
    "VerifierReport",
    "check_verifier",
    "lab_model_pair",
    "autoregressive_generate",
    "speculative_generate",
    "build_model_pair",
    "VerifiedRound",
]
