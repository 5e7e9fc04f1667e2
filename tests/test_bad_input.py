"""Bad input gets a ValueError that names the argument and the problem."""

from fractions import Fraction as F

import numpy as np
import pytest

from specdec_lib import (
    acceptance_probabilities,
    acceptance_rate,
    break_even_verify_time,
    expected_output_count,
    improvement_factor,
    operations_factor,
    optimal_gamma,
    output_count_pmf,
    output_distribution,
    residual_distribution,
    scenario_rate,
    verify,
)

P, Q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
ONE_STEP = [acceptance_rate, acceptance_probabilities, residual_distribution, output_distribution]


@pytest.mark.parametrize("fn", ONE_STEP)
@pytest.mark.parametrize(
    "p, message",
    [
        ([0.7, 0.4, -0.1], "p: negative probability"),
        ([0.6, float("nan"), 0.1], "p: contains NaN or infinite"),
        ([0.6, float("inf"), 0.1], "p: contains NaN or infinite"),
        ([0.6, 0.3, 0.2], "p: probabilities sum to"),
        ([], "p: empty probability vector"),
        ([[0.6, 0.3, 0.1]], "p: expected a 1-D vector"),
        ([0.5, 0.5], r"p, q: length mismatch \(2 vs 3"),
        (["a", "b", "c"], "p: not a vector of numbers"),
    ],
)
def test_bad_distribution(fn, p, message):
    with pytest.raises(ValueError, match=message):
        fn(p, Q)


@pytest.mark.parametrize("fn", ONE_STEP)
def test_bad_draft_distribution_is_named_q(fn):
    with pytest.raises(ValueError, match="^q: probabilities sum to"):
        fn(P, [0.2, 0.3, 0.4])


def test_exact_vectors_must_sum_to_exactly_one():
    with pytest.raises(ValueError, match="p: probabilities sum to 41/42, not exactly 1"):
        acceptance_rate([F(1, 2), F(1, 3), F(1, 7)], [F(1, 5), F(3, 10), F(1, 2)])


def test_sum_tolerance_is_1e_9():
    acceptance_rate([0.6 + 5e-10, 0.3, 0.1], Q)
    with pytest.raises(ValueError, match="sum to"):
        acceptance_rate([0.6 + 5e-9, 0.3, 0.1], Q)


@pytest.mark.parametrize("fn", [expected_output_count, output_count_pmf])
@pytest.mark.parametrize(
    "alpha, gamma, message",
    [
        (-0.1, 2, r"alpha: must lie in \[0, 1\]"),
        (1.5, 2, r"alpha: must lie in \[0, 1\]"),
        (float("nan"), 2, "alpha: is NaN"),
        ("0.5", 2, "alpha: expected a number"),
        (0.5, -1, "gamma: must be >= 0"),
        (0.5, 2.5, "gamma: expected an integer"),
        (0.5, True, "gamma: expected an integer"),
    ],
)
def test_bad_alpha_or_gamma(fn, alpha, gamma, message):
    with pytest.raises(ValueError, match=message):
        fn(alpha, gamma)


@pytest.mark.parametrize(
    "args, message",
    [
        ((1.96, -0.001, 0.006, 0.001), "t_draft: must be >= 0"),
        ((1.96, 0.002, float("nan"), 0.001), "t_verify: must be finite"),
        ((1.96, 0.002, 0.006, float("inf")), "t_overhead: must be finite"),
        ((1.96, 0, 0, 0), "total round time is 0"),
        ((-1, 0.002, 0.006), "expected_tokens: must be >= 0"),
    ],
)
def test_bad_times(args, message):
    with pytest.raises(ValueError, match=message):
        scenario_rate(*args)


def test_bad_break_even_inputs():
    with pytest.raises(ValueError, match="t_baseline: must be > 0"):
        break_even_verify_time(1.96, 0.002, 0.001, 0)


@pytest.mark.parametrize("fn", [improvement_factor, operations_factor])
def test_negative_cost_ratio(fn):
    with pytest.raises(ValueError, match="must be >= 0"):
        fn(0.6, 2, -0.1)


def test_bad_optimal_gamma_inputs():
    with pytest.raises(ValueError, match="c: must be >= 0"):
        optimal_gamma(0.6, -1)
    with pytest.raises(ValueError, match="max_gamma: must be >= 1"):
        optimal_gamma(0.6, 0.1, max_gamma=0)


@pytest.mark.parametrize(
    "drafts, p_rows, q_rows, message",
    [
        ([3], [P, P], [Q], r"draft_tokens\[0\]: token id 3 outside the vocabulary 0..2"),
        ([-1], [P, P], [Q], r"draft_tokens\[0\]: token id -1 outside"),
        ([2], [P, P], [[0.5, 0.5, 0.0]], r"draft_tokens\[0\]: token 2 has draft probability 0"),
        ([1, 2], [P, P], [Q, Q], r"target_probs: expected 3 rows, got 2"),
        ([1, 2], [P, P, P], [Q], r"draft_probs: expected 2 rows, got 1"),
        ([1], [P, [0.6, 0.3, 0.3]], [Q], r"target_probs\[1\]: probabilities sum to"),
        ([1], [P, P], [[0.2, 0.3, 0.4]], r"draft_probs\[0\]: probabilities sum to"),
        ([1], [P, [0.5, 0.5]], [Q], r"target_probs\[1\]: has 2 tokens, expected vocabulary size 3"),
        ([0.5], [P, P], [Q], "draft_tokens: token ids must be integers"),
        ([[1]], [P, P], [Q], "draft_tokens: expected a 1-D sequence"),
        ([1], np.array(P), [Q], r"target_probs: expected 2 rows \(a 2-D array\)"),
    ],
)
def test_bad_verify_inputs(drafts, p_rows, q_rows, message):
    with pytest.raises(ValueError, match=message):
        verify(drafts, p_rows, q_rows, rng=0)
