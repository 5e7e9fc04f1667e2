"""When acceptance varies, the iid formula Σ αʲ misses E[K] in both directions, and which average of β
is called α decides the direction (exact arithmetic)."""

import re
from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lib import expected_output_count
from specdec_lib.varying_acceptance import (
    alpha_estimates,
    expected_output_count_along_round,
    expected_output_count_between_rounds,
    iid_equivalent_alpha,
    next_position_rate,
    run_probabilities_after_last_token,
    run_probabilities_between_rounds,
)

rates = st.fractions(min_value=0, max_value=1, max_denominator=50)


@given(st.lists(rates, min_size=1, max_size=4), st.integers(0, 6), st.data())
def test_rates_varying_between_rounds_never_give_less_than_the_iid_formula(betas, gamma, data):
    raw = data.draw(st.lists(st.integers(1, 9), min_size=len(betas), max_size=len(betas)))
    weights = [F(w, sum(raw)) for w in raw]
    mean_beta = sum(w * b for w, b in zip(weights, betas))
    assert expected_output_count_between_rounds(betas, weights, gamma) >= expected_output_count(
        mean_beta, gamma
    )


def test_spread_rates_make_the_iid_formula_under_predict_strictly():
    assert expected_output_count_between_rounds([1, F(1, 5)], [F(1, 2), F(1, 2)], 2) == F(53, 25) > F(49, 25)


def test_negative_control_a_single_rate_is_the_iid_formula():
    assert expected_output_count_between_rounds([F(3, 5)], [1], 5) == expected_output_count(F(3, 5), 5)


@given(st.lists(rates, min_size=1, max_size=6))
def test_rates_falling_along_the_round_give_at_most_the_iid_formula_of_the_first(rates_):
    falling = sorted(rates_, reverse=True)
    assert expected_output_count_along_round(falling) <= expected_output_count(falling[0], len(falling))


def test_next_position_rate_averages_the_rates_after_each_accepted_token():
    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    after_p = [[F(1, 10), F(1, 10), F(4, 5)], [F(4, 5), F(1, 10), F(1, 10)], [F(1, 3)] * 3]
    after_q = [[F(4, 5), F(1, 10), F(1, 10)], [F(1, 10), F(1, 10), F(4, 5)], [F(1, 3)] * 3]
    # accepted token A, B, C with weights 1/3, 1/2, 1/6 and next rates 3/10, 3/10, 1
    assert next_position_rate(p, q, after_p, after_q) == F(5, 12)
    assert (
        expected_output_count_along_round([F(3, 5), F(5, 12)])
        == F(37, 20)
        < expected_output_count(F(3, 5), 2)
    )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: expected_output_count_between_rounds([F(1, 2)], [F(1, 2), F(1, 2)], 2), "betas, weights"),
        (lambda: expected_output_count_between_rounds([F(3, 2)], [1], 2), "betas[0]"),
        (lambda: expected_output_count_between_rounds([F(1, 2)], [F(1, 2)], 2), "weights"),
        (lambda: expected_output_count_along_round([F(1, 2), -1]), "rates[1]"),
        (lambda: next_position_rate([1, 0], [0, 1], [[1, 0]] * 2, [[1, 0]] * 2), "p, q"),
        (lambda: next_position_rate([1, 0], [1, 0], [[1, 0]], [[1, 0]]), "next_p, next_q"),
        (lambda: run_probabilities_between_rounds([1], [1], -1), "gamma"),
        (lambda: alpha_estimates([1, F(1, 2)]), "run"),
        (lambda: alpha_estimates([1, F(1, 2), F(3, 2)]), "run[2]"),
        (lambda: alpha_estimates([F(1, 2), F(1, 2), F(1, 2)]), "run"),
        (lambda: alpha_estimates([1, F(1, 2), 0]).iid_prediction("median"), "estimator"),
        (lambda: iid_equivalent_alpha(4, 2), "expected_K"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match="^" + re.escape(name)):
        call()


# --- which average of β is α: the four estimators on the chapter's two examples -----------------
TOY_P, TOY_Q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
AFTER_P = [[F(1, 10), F(1, 10), F(4, 5)], [F(4, 5), F(1, 10), F(1, 10)], [F(1, 3)] * 3]
AFTER_Q = [[F(4, 5), F(1, 10), F(1, 10)], [F(1, 10), F(1, 10), F(4, 5)], [F(1, 3)] * 3]
between_run = run_probabilities_between_rounds([1, F(1, 5)], [F(1, 2), F(1, 2)], 2)
along_run = run_probabilities_after_last_token(TOY_P, TOY_Q, AFTER_P, AFTER_Q, 2)


def test_run_probabilities_of_the_two_examples():
    assert between_run == [1, F(3, 5), F(13, 25), F(63, 125)]
    assert along_run == [1, F(3, 5), F(1, 4), F(2, 15)]


@pytest.mark.parametrize(
    "run, expected",
    [
        # round start, per checked proposal, per text position, accepted ÷ drafted, exact E[K]
        (between_run, (F(3, 5), F(7, 10), F(203, 265), F(14, 25), F(53, 25))),
        (along_run, (F(3, 5), F(17, 32), F(59, 111), F(17, 40), F(37, 20))),
    ],
    ids=["between rounds", "along the round"],
)
def test_each_estimator_of_alpha_on_both_examples(run, expected):
    e = alpha_estimates(run)
    assert (
        e.round_start,
        e.per_check,
        e.per_position,
        e.accepted_per_drafted,
        e.expected_output_count,
    ) == expected


def test_the_iid_formula_misses_in_the_direction_its_estimator_sets():
    between, along = alpha_estimates(between_run), alpha_estimates(along_run)
    predictions = {name: between.iid_prediction(name) for name in between.ESTIMATORS}
    assert predictions == {
        "round_start": F(49, 25),
        "per_check": F(219, 100),
        "per_position": F(165229, 70225),
        "accepted_per_drafted": F(1171, 625),
    }
    # between rounds: round start under-predicts 53/25, per check over-predicts
    assert predictions["round_start"] < between.expected_output_count < predictions["per_check"]
    # along the round: the same two estimators swap sides of 37/20
    assert along.iid_prediction("per_check") == F(1857, 1024) < along.expected_output_count < F(49, 25)
    assert along.iid_prediction("round_start") == F(49, 25)


def test_none_of_the_estimators_is_the_alpha_that_matches_E_K():
    for run in (between_run, along_run):
        e = alpha_estimates(run)
        fitted = iid_equivalent_alpha(float(e.expected_output_count), e.gamma)
        assert abs(expected_output_count(fitted, e.gamma) - float(e.expected_output_count)) < 1e-9
        assert all(abs(fitted - float(getattr(e, name))) > 0.01 for name in e.ESTIMATORS)


def test_accepted_per_drafted_gives_E_K_linearly_not_through_the_iid_sum():
    for run in (between_run, along_run):
        e = alpha_estimates(run)
        assert 1 + e.gamma * e.accepted_per_drafted == e.expected_output_count


@given(rates, st.integers(1, 6))
def test_under_iid_acceptance_the_three_averages_of_beta_agree(alpha, gamma):
    e = alpha_estimates([alpha**j for j in range(gamma + 2)])
    if alpha > 0:
        assert e.round_start == e.per_check == e.per_position == alpha
        assert e.iid_prediction("per_check") == e.expected_output_count


def test_negative_control_a_run_that_rises_is_rejected():
    with pytest.raises(ValueError, match="^run: must start at 1 and never increase"):
        alpha_estimates([1, F(1, 2), F(3, 4)])


def test_next_position_rate_is_the_second_ratio_of_the_run():
    assert next_position_rate(TOY_P, TOY_Q, AFTER_P, AFTER_Q) == along_run[2] / along_run[1]
