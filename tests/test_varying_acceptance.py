"""When acceptance varies, the iid formula Σ αʲ misses E[K] in both directions (exact arithmetic)."""

import re
from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lib import expected_output_count
from specdec_lib.varying_acceptance import (
    expected_output_count_along_round,
    expected_output_count_between_rounds,
    next_position_rate,
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
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match="^" + re.escape(name)):
        call()
