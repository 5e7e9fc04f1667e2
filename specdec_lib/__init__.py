"""specdec_lib: the lesson's code, which the chapters and students import (numpy and scipy only).

Modules follow the lesson: ``distributions`` (a, r, α at one prefix), ``verification`` (one
round: ``verify`` = input checks + ``verify_unchecked``), ``counting`` (K, E[K] and rates),
``speedup`` (the paper's speed-up and operations factors, the best γ, the roofline of a target
call), ``varying_acceptance`` (E[K] when acceptance varies between rounds or along one, and the
averages of β a log can call α), ``sampling`` (drawing tokens). The verification lab adds ``streams`` (exact stream
distributions), ``simulate`` (many rounds at once), ``transforms`` (temperature, top-k, top-p and
mismatches), ``greedy``, ``exactness_check`` (is a verifier exact?) and ``broken_verifiers`` (planted
bugs), on the 3-token ``toy_models``; ``variants`` (block, typical and lenient verification) and
``trees`` (several drafts per position, token trees; node rules from ``top_k`` and ``spectr``)
are judged by the same tools; ``tree_search`` (the best tree of a node budget) and
``adaptive_gamma`` (γ chosen round by round) shape them, ``tree_attention`` scores a tree in one
transformer call, ``tree_decoding`` runs every rule through one loop and ``rule_timing`` times
them side by side. Measurement:
``corpus`` (Python's reference topics as characters), ``transformer`` (numpy inference with a
key/value cache), ``ngram``, ``pair`` (the shipped target and its three drafts), ``generate``
(plain and speculative generation with timed rounds) and the ``measure`` package (the command);
``specdec_course.train_models`` retrains the shipped weights. Display: ``display`` (numbers as text), ``plotting`` (needs
matplotlib) and ``explorer_states`` (what each explorer shows, computed). Input checks live in
``_validate``. The explorers' controls and widgets, the site and grading tools are in the sibling
package ``specdec_course``.
"""

from .adaptive_gamma import HeuristicGamma, TheoryGamma
from .counting import (
    break_even_verify_time,
    expected_output_count,
    expected_wasted_proposals,
    output_count_pmf,
    scenario_rate,
)
from .distributions import (
    acceptance_probabilities,
    acceptance_rate,
    accepted_mass,
    correction_distribution,
    damped_acceptance,
    lenient_acceptance_rate,
    lenient_output_distribution,
    output_distribution,
    residual_distribution,
    rule_acceptance_rate,
    rule_correction,
    rule_output_distribution,
)
from .exactness_check import VerifierReport, check_verifier
from .generate import autoregressive_generate, speculative_generate
from .greedy import argmax_distribution, verify_greedy, verify_greedy_unchecked
from .pair import build_model_pair
from .sampling import sample_token
from .simulate import SimulatedRounds, simulate_rounds
from .spectr import spectr_acceptance, spectr_output_distribution, spectr_rho, verify_spectr
from .speedup import forward_pass_time, improvement_factor, operations_factor, optimal_gamma
from .streams import (
    exact_stream_distribution,
    expected_accepted,
    round_distribution,
    stream_distribution,
    stream_total_variation,
    target_stream_distribution,
)
from .top_k import top_k_candidates, top_k_output_distribution, verify_top_k
from .toy_models import toy_model_pair
from .transforms import mismatched_output_distribution, sampling_transform, total_variation_distance
from .tree_search import best_tree, expected_tree_tokens
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
from .variants import (
    block_emitted_distribution,
    lenient_emitted_distribution,
    typical_emitted_distribution,
    verify_block,
    verify_lenient,
    verify_typical,
)
from .varying_acceptance import (
    AlphaEstimates,
    alpha_estimates,
    expected_output_count_along_round,
    expected_output_count_between_rounds,
    iid_equivalent_alpha,
    next_position_rate,
    run_probabilities_after_last_token,
    run_probabilities_between_rounds,
)
from .verification import VerifiedRound, verify, verify_unchecked

__all__ = [
    "acceptance_probabilities",
    "acceptance_rate",
    "accepted_mass",
    "alpha_estimates",
    "AlphaEstimates",
    "argmax_distribution",
    "autoregressive_generate",
    "block_emitted_distribution",
    "break_even_verify_time",
    "build_model_pair",
    "check_verifier",
    "correction_distribution",
    "damped_acceptance",
    "draft_tree",
    "exact_stream_distribution",
    "expected_accepted",
    "expected_output_count",
    "expected_output_count_along_round",
    "expected_output_count_between_rounds",
    "expected_wasted_proposals",
    "forward_pass_time",
    "iid_equivalent_alpha",
    "improvement_factor",
    "lenient_acceptance_rate",
    "lenient_emitted_distribution",
    "lenient_output_distribution",
    "mismatched_output_distribution",
    "multi_draft_output_distribution",
    "multi_draft_steps",
    "MultiDraftVerdict",
    "next_position_rate",
    "operations_factor",
    "optimal_gamma",
    "output_count_pmf",
    "output_distribution",
    "residual_distribution",
    "residual_sequence",
    "round_distribution",
    "run_probabilities_after_last_token",
    "run_probabilities_between_rounds",
    "rule_acceptance_rate",
    "rule_correction",
    "rule_output_distribution",
    "sample_token",
    "sampling_transform",
    "scenario_rate",
    "simulate_rounds",
    "SimulatedRounds",
    "speculative_generate",
    "stream_distribution",
    "stream_total_variation",
    "target_stream_distribution",
    "total_variation_distance",
    "toy_model_pair",
    "tree_round_distribution",
    "tree_shape",
    "tree_size",
    "typical_emitted_distribution",
    "VerifiedRound",
    "VerifierReport",
    "verify",
    "verify_block",
    "verify_greedy",
    "verify_greedy_unchecked",
    "verify_lenient",
    "verify_multi_draft",
    "verify_tree",
    "verify_typical",
    "verify_unchecked",
    "HeuristicGamma",
    "TheoryGamma",
    "best_tree",
    "expected_tree_tokens",
    "spectr_acceptance",
    "spectr_output_distribution",
    "spectr_rho",
    "top_k_candidates",
    "top_k_output_distribution",
    "verify_spectr",
    "verify_top_k",
]
