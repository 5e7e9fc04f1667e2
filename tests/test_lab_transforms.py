"""Sampling transforms, greedy verification and the cost of a transform mismatch."""

import numpy as np
import pytest
from conftest import TOY_P, TOY_P_EXACT, TOY_Q, TOY_Q_EXACT

from specdec_lib import (
    acceptance_rate,
    argmax_distribution,
    mismatched_output_distribution,
    output_distribution,
    sampling_transform,
    total_variation_distance,
    verify,
    verify_greedy,
)

P = [0.1, 0.4, 0.2, 0.3]


def test_temperature_one_and_no_truncation_is_the_identity():
    np.testing.assert_allclose(sampling_transform(P), P)


def test_temperature_sharpens_below_one_and_flattens_above():
    cold, hot = sampling_transform(P, temperature=0.5), sampling_transform(P, temperature=2.0)
    assert cold.max() > max(P) > hot.max()
    np.testing.assert_allclose(cold, np.square(P) / np.square(P).sum())
    assert np.argmax(sampling_transform(P, temperature=1e-3)) == 1 == np.argmax(P)


def test_tiny_temperature_does_not_underflow():
    out = sampling_transform([0.5, 0.5 - 1e-9, 1e-9], temperature=1e-4)
    assert np.isfinite(out).all() and out[0] > 0.5


def test_top_k_keeps_the_k_most_probable_and_breaks_ties_by_token_id():
    np.testing.assert_allclose(sampling_transform(P, top_k=2), [0, 4 / 7, 0, 3 / 7])
    np.testing.assert_allclose(sampling_transform([0.25] * 4, top_k=1), [1, 0, 0, 0])
    np.testing.assert_allclose(sampling_transform(P, top_k=10), P)


def test_top_p_keeps_the_smallest_set_reaching_the_mass():
    np.testing.assert_allclose(
        sampling_transform(P, top_p=0.7), [0, 4 / 7, 0, 3 / 7]
    )  # 0.4 + 0.3 reaches 0.7 exactly
    np.testing.assert_allclose(sampling_transform(P, top_p=0.71), [0, 4 / 9, 2 / 9, 3 / 9])
    np.testing.assert_allclose(sampling_transform(P, top_p=1.0), P)
    np.testing.assert_allclose(sampling_transform(P, top_p=0.01), [0, 1, 0, 0])


def test_transforms_apply_in_order_temperature_then_top_k_then_top_p():
    cold = sampling_transform(P, temperature=0.5)  # [1, 16, 4, 9] / 30
    np.testing.assert_allclose(sampling_transform(P, temperature=0.5, top_p=0.8), [0, 16 / 25, 0, 9 / 25])
    top3 = cold * [0, 1, 1, 1] / cold[1:].sum()  # top-k = 3 drops token 0; top-p = 0.9 then keeps all three
    np.testing.assert_allclose(sampling_transform(P, temperature=0.5, top_k=3, top_p=0.9), top3)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(temperature=0), "temperature"),
        (dict(temperature=-1), "temperature"),
        (dict(temperature=float("nan")), "temperature"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=1.5), "top_k"),
        (dict(top_p=0), "top_p"),
        (dict(top_p=1.2), "top_p"),
        (dict(top_p=-0.1), "top_p"),
    ],
)
def test_bad_transform_settings_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        sampling_transform(P, **kwargs)


def test_argmax_distribution_is_one_hot_at_the_first_maximum():
    assert argmax_distribution([0.3, 0.4, 0.3]).tolist() == [0, 1, 0]
    assert argmax_distribution([0.5, 0.5]).tolist() == [1, 0]


def test_greedy_accepts_exactly_the_argmax_and_corrects_to_it():
    p_rows = [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8]]
    q = [0.3, 0.3, 0.4]
    for seed in range(20):
        assert verify_greedy([1, 0], p_rows, [q, q], rng=seed).tokens == (1, 0, 2)
        assert verify_greedy([1, 2], p_rows, [q, q], rng=seed).tokens == (1, 0)
        assert verify_greedy([2, 2], p_rows, [q, q], rng=seed).tokens == (1,)


def test_greedy_with_one_hot_drafts_and_bad_input():
    onehot = [0.0, 1.0, 0.0]
    assert verify_greedy([1], [[0.2, 0.5, 0.3]] * 2, [onehot]).tokens == (1, 1)
    with pytest.raises(ValueError, match="^draft_tokens"):
        verify_greedy([0], [[0.2, 0.5, 0.3]] * 2, [onehot])  # token 0 has draft probability 0


def test_one_hot_draft_is_accepted_with_the_target_probability():
    onehot = [0.0, 1.0, 0.0]
    accepted = np.mean([verify([1], [TOY_P] * 2, [onehot], rng=s).num_accepted for s in range(4000)])
    assert abs(accepted - TOY_P[1]) < 5 * np.sqrt(0.3 * 0.7 / 4000)  # 5 sigma: false-fail rate < 1e-6


def test_mismatch_is_harmless_only_when_the_proposal_is_the_q_verified_against():
    np.testing.assert_allclose(
        mismatched_output_distribution(TOY_P, TOY_Q, TOY_Q), output_distribution(TOY_P, TOY_Q)
    )
    np.testing.assert_allclose(mismatched_output_distribution(TOY_P, TOY_Q, TOY_Q), TOY_P)
    hot = sampling_transform(TOY_Q, temperature=1.5)
    assert total_variation_distance(mismatched_output_distribution(TOY_P, TOY_Q, hot), TOY_P) > 0.01
    with pytest.raises(ValueError, match="^proposal"):
        mismatched_output_distribution(TOY_P, [0.5, 0.5, 0.0], TOY_Q)


def test_total_variation_is_one_minus_alpha():
    assert total_variation_distance(TOY_P_EXACT, TOY_Q_EXACT) == 1 - acceptance_rate(TOY_P_EXACT, TOY_Q_EXACT)
    assert total_variation_distance(TOY_P, TOY_P) == 0.0


def test_greedy_is_verify_against_one_hot_argmax_rows():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p_rows = rng.dirichlet(np.ones(4), size=3)
        q_rows = rng.dirichlet(np.ones(4), size=2)
        drafts = [int(rng.choice(4, p=q)) for q in q_rows]
        onehot_rows = [argmax_distribution(p) for p in p_rows]
        assert verify_greedy(drafts, p_rows, q_rows) == verify(drafts, onehot_rows, q_rows, rng=0)
