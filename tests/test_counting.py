"""Output count per round, scenario rates, and the paper's factors."""

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_lib import (
    break_even_verify_time,
    expected_output_count,
    expected_wasted_proposals,
    improvement_factor,
    operations_factor,
    optimal_gamma,
    output_count_pmf,
    scenario_rate,
)

MS = 1e-3


def test_lesson_output_count_exact():
    assert output_count_pmf(F(3, 5), 2) == [F(2, 5), F(6, 25), F(9, 25)]
    assert expected_output_count(F(3, 5), 2) == F(49, 25)


def test_lesson_scenario_rates():
    ek = expected_output_count(0.6, 2)
    assert round(scenario_rate(ek, 2 * MS, 6 * MS, 1 * MS), 1) == 217.8
    assert round(scenario_rate(1, 0, 6 * MS), 1) == 166.7
    assert round(scenario_rate(ek, 2 * MS, 12 * MS, 1 * MS), 1) == 130.7
    assert type(scenario_rate(ek, 2 * MS, 6 * MS)) is float


def test_break_even_verify_time_ties_the_baseline():
    ek = expected_output_count(0.6, 2)
    t_verify = break_even_verify_time(ek, 2 * MS, 1 * MS, 6 * MS)
    assert scenario_rate(ek, 2 * MS, t_verify, 1 * MS) == pytest.approx(scenario_rate(1, 0, 6 * MS))


def test_wasted_proposals():
    assert expected_wasted_proposals(F(3, 5), 2) == 2 - F(3, 5) - F(9, 25)
    assert expected_wasted_proposals(1, 5) == 0
    assert expected_wasted_proposals(0, 5) == 5


# Leviathan et al. (2023), Table 1: c = ĉ = 0.
TABLE_1 = [  # alpha, gamma, speed, operations
    (0.6, 2, 1.96, 1.53),
    (0.7, 3, 2.53, 1.58),
    (0.8, 2, 2.44, 1.23),
    (0.8, 5, 3.69, 1.63),
    (0.9, 2, 2.71, 1.11),
    (0.9, 10, 6.86, 1.60),
]


@pytest.mark.parametrize("alpha, gamma, speed, operations", TABLE_1)
def test_paper_table_1(alpha, gamma, speed, operations):
    assert round(improvement_factor(alpha, gamma, 0), 2) == speed
    assert round(operations_factor(alpha, gamma, 0), 2) == operations


def test_factor_limits_at_alpha_one():
    assert improvement_factor(1.0, 4, 0.1) == pytest.approx(5 / 1.4)
    assert improvement_factor(1 - 1e-12, 4, 0.1) == pytest.approx(5 / 1.4, rel=1e-6)
    assert operations_factor(1.0, 4, 0.1) == pytest.approx(5.4 / 5)


def test_optimal_gamma_maximises_improvement():
    for alpha, c in [(0.6, 0.05), (0.8, 0.05), (0.9, 0.01), (0.5, 0.5)]:
        best = optimal_gamma(alpha, c)
        assert all(
            improvement_factor(alpha, best, c) >= improvement_factor(alpha, g, c) for g in range(1, 65)
        )
    assert optimal_gamma(1.0, 0.0, max_gamma=10) == 10
    assert optimal_gamma(0.0, 0.0) == 0  # every factor ties at 1 with plain decoding: don't speculate


@pytest.mark.parametrize("alpha, c", [(0.5, 0.5), (0.5, 0.6), (0.3, 0.9), (0.0, 0.1)])
def test_optimal_gamma_is_zero_when_no_gamma_pays(alpha, c):
    assert max(improvement_factor(alpha, g, c) for g in range(1, 65)) <= 1
    assert optimal_gamma(alpha, c) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.fractions(min_value=0, max_value=1, max_denominator=50),
    st.fractions(min_value=0, max_value=2, max_denominator=50),
)
def test_optimal_gamma_speculates_exactly_when_the_draft_costs_less_than_alpha(alpha, c):
    """Cor 3.9 and its converse, in exact arithmetic: some γ ≥ 1 pays if and only if c < α."""
    assert (optimal_gamma(alpha, c, max_gamma=16) >= 1) == (c < alpha)


@settings(max_examples=200, deadline=None)
@given(st.fractions(0, 1), st.integers(0, 12))
def test_pmf_is_a_distribution_with_mean_EK(alpha, gamma):
    pmf = output_count_pmf(alpha, gamma)
    assert len(pmf) == gamma + 1
    assert sum(pmf) == 1
    assert sum(k * pk for k, pk in enumerate(pmf, start=1)) == expected_output_count(alpha, gamma)


@settings(max_examples=200, deadline=None)
@given(st.fractions(0, 1).filter(lambda a: a < 1), st.integers(0, 12))
def test_EK_closed_form(alpha, gamma):
    assert expected_output_count(alpha, gamma) == (1 - alpha ** (gamma + 1)) / (1 - alpha)


def test_every_counting_function_is_exact_for_rational_inputs():
    from specdec_lib.speedup import forward_pass_time

    alpha = F(3, 5)
    results = {
        "expected_output_count": expected_output_count(alpha, 2),
        "expected_wasted_proposals": expected_wasted_proposals(alpha, 2),
        "scenario_rate": scenario_rate(F(49, 25), F(2, 1000), F(6, 1000), F(1, 1000)),
        "break_even_verify_time": break_even_verify_time(F(49, 25), 2, 1, 6),
        "improvement_factor": improvement_factor(alpha, 2, 0),
        "operations_factor": operations_factor(alpha, 2, 0),
        "forward_pass_time": forward_pass_time(5, 14, 3, 1, 1),
    }
    assert all(type(v) is F for v in results.values()), {k: type(v) for k, v in results.items()}
    assert all(type(v) is F for v in output_count_pmf(alpha, 2))
    assert results["improvement_factor"] == F(49, 25) == results["expected_output_count"]
    assert results["scenario_rate"] == F(1960, 9)
    assert results["break_even_verify_time"] == F(219, 25)
    assert improvement_factor(1, 3, F(1, 10)) == F(40, 13)  # the α = 1 limit, exact: 4 / 1.3
    # any float input gives a float, as before
    assert type(improvement_factor(0.6, 2, 0)) is float
    assert type(scenario_rate(F(49, 25), 0.002, F(6, 1000))) is float


@settings(max_examples=100, deadline=None)
@given(st.fractions(0, 1), st.integers(1, 8), st.fractions(0, 2))
def test_exact_improvement_factor_is_the_closed_form(alpha, gamma, c):
    expected = (
        (gamma + 1) / (gamma * c + 1)
        if alpha == 1
        else (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))
    )
    assert improvement_factor(alpha, gamma, c) == expected
    assert type(improvement_factor(alpha, gamma, c)) is F


def test_forward_pass_costs_one_step_while_memory_bound():
    from specdec_lib.speedup import forward_pass_time

    one = forward_pass_time(1, 14e9, 3e12, 14e9, 1e15)
    assert forward_pass_time(5, 14e9, 3e12, 14e9, 1e15) == one  # γ + 1 = 5 positions: same cost
    assert forward_pass_time(4096, 14e9, 3e12, 14e9, 1e15) > 10 * one  # compute-bound far out
    with pytest.raises(ValueError, match="bandwidth"):
        forward_pass_time(1, 14e9, 0, 14e9, 1e15)
