"""specdec_lib: the lesson's code, which the chapters and students import (numpy and scipy only).

Modules follow the lesson: ``distributions`` (a, r, α at one prefix), ``verification`` (one
round: ``verify`` = input checks + ``verify_unchecked``), ``counting`` (K, E[K], rates and the
paper's factors), ``sampling`` (drawing tokens). The verification lab adds ``streams`` (exact
stream distributions), ``simulate`` (many rounds at once), ``transforms`` (temperature, top-k,
top-p and mismatches), ``greedy``, ``checker`` (is a verifier exact?) and ``broken_verifiers``
(planted bugs), on the 3-token ``toy_models``; ``variants`` (block, typical and lenient
verification) and ``trees`` (several drafts per position, token trees) are judged by the same
tools. Measurement: ``text_models`` (a cost-realistic character model pair with caches),
``generate`` (plain and speculative generation with timed rounds) and ``measure`` (the command).
Display: ``display`` (numbers as text), ``plotting`` (needs matplotlib) and ``explorers`` (needs
ipywidgets when live). Input checks live in ``_validate``. Build and grading tools are in the sibling
package ``specdec_course``.
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
    correction_distribution,
    lenient_acceptance_rate,
    lenient_output_distribution,
    residual_distribution,
)
from .sampling import sample_token
from .verification import VerifiedRound, verify, verify_unchecked
from .transforms import mismatched_output_distribution, sampling_transform, total_variation_distance
from .greedy import argmax_distribution, verify_greedy
from .simulate import SimulatedRounds, simulate_rounds
from .streams import exact_stream_distribution, round_distribution, target_stream_distribution
from .checker import VerifierReport, check_verifier
from .toy_models import toy_model_pair
from .generate import autoregressive_generate, speculative_generate
from .text_models import build_model_pair
from .streams import expected_accepted, stream_distribution, stream_total_variation
from .variants import (
    block_emitted_distribution,
    lenient_emitted_distribution,
    typical_emitted_distribution,
    verify_block,
    verify_lenient,
    verify_typical,
)
from .trees import (
    MultiDraftVerdict,
    draft_tree,
    multi_draft_output_distribution,
    multi_draft_steps,
    residual_sequence,
    tree_round_distribution,
    tree_shape,
    tree_size,
    verify_multi_draft,
    verify_tree,
)
from .varying_acceptance import (
    expected_output_count_along_round,
    expected_output_count_between_rounds,
    next_position_rate,
)

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
    "verify_unchecked",
    "correction_distribution",
    "lenient_acceptance_rate",
    "lenient_output_distribution",
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
    "toy_model_pair",
    "autoregressive_generate",
    "speculative_generate",
    "build_model_pair",
    "VerifiedRound",
    "expected_accepted",
    "stream_distribution",
    "stream_total_variation",
    "verify_block",
    "block_emitted_distribution",
    "verify_typical",
    "typical_emitted_distribution",
    "verify_lenient",
    "lenient_emitted_distribution",
    "verify_multi_draft",
    "MultiDraftVerdict",
    "residual_sequence",
    "multi_draft_steps",
    "multi_draft_output_distribution",
    "tree_shape",
    "tree_size",
    "draft_tree",
    "verify_tree",
    "tree_round_distribution",
]

from .distributions import damped_acceptance, rule_acceptance_rate, rule_correction, rule_output_distribution
from .counting import forward_pass_time

__all__ += [
    "damped_acceptance",
    "rule_acceptance_rate",
    "rule_correction",
    "rule_output_distribution",
    "forward_pass_time",
    "expected_output_count_along_round",
    "expected_output_count_between_rounds",
    "next_position_rate",
]
