"""The acceptance numbers serving systems report are one process seen several ways (exact arithmetic)."""

import re
from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lib import expected_output_count
from specdec_lib.metrics import REPORTED, acceptance_metrics, from_reported, run_probabilities

rates = st.fractions(min_value=0, max_value=1, max_denominator=30)


@given(rates, st.integers(1, 6))
def test_iid_rates_give_alpha_per_proposal_and_the_truncated_geometric_mean(alpha, gamma):
    m = acceptance_metrics(rates=[alpha] * gamma)
    expected_k = expected_output_count(alpha, gamma)
    assert m.mean_emitted == expected_k == 1 + m.mean_accepted
    assert m.accepted_per_drafted == (expected_k - 1) / gamma
    assert m.system_efficiency == expected_k / (gamma + 1)
    assert m.by_position == tuple(alpha**j for j in range(1, gamma + 1))
    if alpha > 0:
        assert m.per_proposal == alpha
        assert m.conditional == (alpha,) * gamma


def test_worked_example_alpha_four_fifths_gamma_four():
    m = acceptance_metrics(rates=[F(4, 5)] * 4)
    assert (m.per_proposal, m.accepted_per_drafted, m.mean_accepted, m.mean_emitted, m.system_efficiency) == (
        F(4, 5),
        F(1476, 2500),
        F(1476, 625),
        F(2101, 625),
        F(2101, 3125),
    )


def test_logged_rounds_give_exact_shares():
    m = acceptance_metrics(outcomes=[0, 3, 1, 3, 2, 0], gamma=3)
    assert run_probabilities(outcomes=[0, 3, 1, 3, 2, 0], gamma=3) == [1, F(4, 6), F(3, 6), F(2, 6)]
    assert m.mean_accepted == F(9, 6) and m.mean_emitted == F(15, 6)
    assert m.accepted_per_drafted == F(9, 18)
    assert m.per_proposal == F(9, 6) / (1 + F(4, 6) + F(3, 6))  # accepted ÷ drafts checked (14 of 18)
    assert m.conditional == (F(4, 6), F(3, 4), F(2, 3))


def test_rounds_in_exact_proportion_match_the_rates_they_come_from():
    # rates 1/2, 1/2: P(0 accepted) = 1/2, P(1) = 1/4, P(2) = 1/4
    assert acceptance_metrics(outcomes=[0, 0, 1, 2], gamma=2) == acceptance_metrics(rates=[F(1, 2)] * 2)


def test_negative_control_falling_rates_are_not_iid_per_proposal_differs_from_the_first_rate():
    m = acceptance_metrics(rates=[F(9, 10), F(1, 2), F(1, 10)])
    assert m.per_proposal != F(9, 10) and m.conditional == (F(9, 10), F(1, 2), F(1, 10))


def test_float_rates_give_floats_and_unreached_positions_none():
    m = acceptance_metrics(rates=[0.5, 0.0, 0.5])
    assert isinstance(m.mean_emitted, float) and m.conditional[2] is None


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({}, "rates, outcomes"),
        ({"rates": [F(1, 2)], "outcomes": [0]}, "rates, outcomes"),
        ({"outcomes": [0, 1]}, "gamma"),
        ({"outcomes": [0, 3], "gamma": 2}, "outcomes"),
        ({"outcomes": [], "gamma": 2}, "outcomes"),
        ({"rates": [F(3, 2)]}, "rates[0]"),
        ({"rates": [F(1, 2)], "gamma": 2}, "gamma"),
        ({"rates": []}, "rates"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match="^" + re.escape(name)):
        acceptance_metrics(**kwargs)


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_every_reported_form_converts_back_to_the_alpha_it_came_from(name):
    original = acceptance_metrics(rates=[0.7] * 4)
    back = from_reported(name, getattr(original, name), 4)
    assert back.per_proposal == pytest.approx(0.7, abs=1e-9)
    assert back.mean_emitted == pytest.approx(original.mean_emitted, abs=1e-9)


def test_from_reported_refuses_a_value_no_round_can_give():
    with pytest.raises(ValueError, match="^value"):
        from_reported("mean_emitted", 6, 4)  # at most γ + 1 = 5 tokens per round
    with pytest.raises(ValueError, match="^name"):
        from_reported("acceptance", 0.5, 4)
