"""The lesson's claims about one verification step, at one prefix."""

from fractions import Fraction as F

import numpy as np
import pytest
from conftest import TOY_P, TOY_P_EXACT, TOY_Q, TOY_Q_EXACT
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_lib import (
    acceptance_probabilities,
    acceptance_rate,
    accepted_mass,
    output_distribution,
    residual_distribution,
)


def test_toy_example_exact():
    assert acceptance_rate(TOY_P_EXACT, TOY_Q_EXACT) == F(3, 5)
    assert acceptance_probabilities(TOY_P_EXACT, TOY_Q_EXACT) == [1, 1, F(1, 5)]
    assert residual_distribution(TOY_P_EXACT, TOY_Q_EXACT) == [1, 0, 0]
    assert output_distribution(TOY_P_EXACT, TOY_Q_EXACT) == TOY_P_EXACT
    assert accepted_mass(TOY_P_EXACT, TOY_Q_EXACT) == [F(1, 5), F(3, 10), F(1, 10)]
    assert 1 - acceptance_rate(TOY_P_EXACT, TOY_Q_EXACT) == F(2, 5)  # rejected mass


def test_toy_example_float_types():
    alpha = acceptance_rate(TOY_P, TOY_Q)
    assert type(alpha) is float and alpha == pytest.approx(0.6)
    for result in (
        acceptance_probabilities(TOY_P, TOY_Q),
        residual_distribution(TOY_P, TOY_Q),
        output_distribution(TOY_P, TOY_Q),
    ):
        assert isinstance(result, np.ndarray) and result.dtype == np.float64
    np.testing.assert_allclose(acceptance_probabilities(TOY_P, TOY_Q), [1, 1, 0.2])
    np.testing.assert_allclose(output_distribution(TOY_P, TOY_Q), TOY_P)


def test_unproposable_token_has_undefined_acceptance():
    assert np.isnan(acceptance_probabilities([0.5, 0.5], [1.0, 0.0])[1])
    assert acceptance_probabilities([F(1, 2), F(1, 2)], [1, 0]) == [F(1, 2), None]


def test_identical_distributions_never_reject():
    with pytest.raises(ValueError, match="no rejection can occur"):
        residual_distribution(TOY_P, TOY_P)
    with pytest.raises(ValueError, match="no rejection can occur"):
        residual_distribution(TOY_P_EXACT, TOY_P_EXACT)
    assert acceptance_rate(TOY_P_EXACT, TOY_P_EXACT) == 1
    assert output_distribution(TOY_P_EXACT, TOY_P_EXACT) == TOY_P_EXACT
    np.testing.assert_allclose(output_distribution(TOY_P, TOY_P), TOY_P)


@st.composite
def rational_distribution(draw, size):
    weights = draw(st.lists(st.integers(0, 20), min_size=size, max_size=size).filter(any))
    total = sum(weights)
    return [F(w, total) for w in weights]


@st.composite
def rational_pair(draw):
    size = draw(st.integers(1, 6))
    return draw(rational_distribution(size)), draw(rational_distribution(size))


@settings(max_examples=200, deadline=None)
@given(rational_pair())
def test_one_step_returns_target_exactly(pair):
    p, q = pair
    assert output_distribution(p, q) == p


@settings(max_examples=200, deadline=None)
@given(rational_pair())
def test_acceptance_rate_symmetric_bounded_and_one_iff_equal(pair):
    p, q = pair
    alpha = acceptance_rate(p, q)
    assert alpha == acceptance_rate(q, p)
    assert 0 <= alpha <= 1
    assert (alpha == 1) == (p == q)


@settings(max_examples=200, deadline=None)
@given(rational_pair())
def test_accepted_mass_is_draft_times_acceptance_and_sums_to_alpha(pair):
    p, q = pair
    a = acceptance_probabilities(p, q)
    assert accepted_mass(p, q) == [q_x * a_x if q_x > 0 else 0 for q_x, a_x in zip(q, a)]
    assert sum(accepted_mass(p, q)) == acceptance_rate(p, q)


@settings(max_examples=200, deadline=None)
@given(rational_pair())
def test_residual_is_a_distribution_on_tokens_where_target_exceeds_draft(pair):
    p, q = pair
    if p == q:
        return
    r = residual_distribution(p, q)
    assert sum(r) == 1
    assert all((r_x > 0) == (p_x > q_x) for r_x, p_x, q_x in zip(r, p, q))


def test_mixed_float_and_fraction_inputs_use_float_mode():
    assert type(acceptance_rate(TOY_P_EXACT, TOY_Q)) is float


# --- other exact one-draft rules accept less often (Leviathan et al. 2023, Lemma 3.3) ------------


def test_damped_rule_is_exact_and_accepts_less():
    from specdec_lib import (
        damped_acceptance,
        rule_acceptance_rate,
        rule_output_distribution,
        total_variation_distance,
    )

    alpha = acceptance_rate(TOY_P_EXACT, TOY_Q_EXACT)
    assert alpha == 1 - total_variation_distance(TOY_P_EXACT, TOY_Q_EXACT)
    for damping in (F(0), F(1, 4), F(1, 2), F(9, 10)):
        accept = damped_acceptance(TOY_P_EXACT, TOY_Q_EXACT, damping)
        assert rule_output_distribution(TOY_P_EXACT, TOY_Q_EXACT, accept) == TOY_P_EXACT
        assert rule_acceptance_rate(TOY_Q_EXACT, accept) == damping * alpha < alpha
    strict = damped_acceptance(TOY_P_EXACT, TOY_Q_EXACT, 1)
    assert strict == acceptance_probabilities(TOY_P_EXACT, TOY_Q_EXACT)
    assert rule_acceptance_rate(TOY_Q_EXACT, strict) == alpha


def test_a_rule_that_accepts_more_than_alpha_cannot_be_corrected():
    from specdec_lib import rule_correction

    # accept C a little more often than the strict rule: q(C)·accept(C) > p(C)
    with pytest.raises(ValueError, match="accept: .* exceeds p"):
        rule_correction(TOY_P_EXACT, TOY_Q_EXACT, [1, 1, F(3, 10)])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 9), min_size=2, max_size=6),
    st.lists(st.integers(0, 9), min_size=2, max_size=6),
    st.lists(st.fractions(0, 1), min_size=6, max_size=6),
)
def test_every_exact_rule_accepts_at_most_alpha(p_weights, q_weights, shrink):
    from specdec_lib import rule_acceptance_rate, rule_output_distribution

    n = min(len(p_weights), len(q_weights))
    p_weights, q_weights = p_weights[:n], q_weights[:n]
    if sum(p_weights) == 0 or sum(q_weights) == 0:
        return
    p = [F(w, sum(p_weights)) for w in p_weights]
    q = [F(w, sum(q_weights)) for w in q_weights]
    strict = acceptance_probabilities(p, q)
    accept = [F(0) if a is None else a * s for a, s in zip(strict, shrink)]  # any a' <= min(1, p/q)
    rate = rule_acceptance_rate(q, accept)
    assert rate <= acceptance_rate(p, q)
    if rate < 1:
        assert rule_output_distribution(p, q, accept) == p
