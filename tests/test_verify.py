"""One verification round: its contract, its determinism, and the law of what it emits.

Statistical tests use fixed seeds, so each run is repeatable. Their threshold is the
false-fail rate: a correct verifier fails one with probability at most FALSE_FAIL_RATE
over the choice of seed. Each has a negative control that must fail.
"""

import numpy as np
import pytest
from conftest import TOY_P, TOY_Q

from specdec_lib import (
    VerifiedRound,
    correction_distribution,
    output_count_pmf,
    output_distribution,
    residual_distribution,
    sample_token,
    simulate_rounds,
    toy_model_pair,
    verify,
    verify_unchecked,
)
from specdec_lib.stats import chi_square_pvalue, emitted_law_pvalues

FALSE_FAIL_RATE = 1e-6
GAMMA = 3
TARGET, DRAFT = toy_model_pair(exact=False)  # prefix-dependent: every position sees another row


def test_accepts_prefix_then_one_correction_or_bonus():
    p, q = TOY_P, TOY_Q
    for seed in range(200):
        out = verify([1, 2], [p, p, p], [q, q], rng=seed)
        assert isinstance(out, VerifiedRound)
        assert 1 <= len(out.tokens) <= 3
        assert out.tokens[: out.num_accepted] == (1, 2)[: out.num_accepted]
        assert out.bonus == (out.num_accepted == 2)
        if not out.bonus:
            assert out.tokens[-1] == 0  # the residual is [1, 0, 0]: every correction is A


def test_same_seed_same_round():
    args = ([2, 2, 2], [TOY_P] * 4, [TOY_Q] * 3)
    assert verify(*args, rng=7) == verify(*args, rng=7)
    assert verify(*args, rng=np.random.default_rng(7)) == verify(*args, rng=7)


def test_token_with_zero_target_probability_is_never_accepted():
    p, q = [1.0, 0.0], [0.5, 0.5]
    assert all(verify([1], [p, p], [q], rng=s).num_accepted == 0 for s in range(100))


def test_gamma_zero_is_plain_sampling():
    out = verify([], [[0.0, 1.0]], [], rng=0)
    assert out == VerifiedRound(tokens=(1,), num_accepted=0, bonus=True)


def _speculative_rounds(verifier, n, seed, prefix=(2,)):
    """n independent rounds from ``prefix``: drafts sampled from the draft model, then verified."""
    rng = np.random.default_rng(seed)
    emissions = []
    for _ in range(n):
        drafts, q_rows = [], []
        for _ in range(GAMMA):
            q = DRAFT(prefix + tuple(drafts))
            q_rows.append(q)
            drafts.append(sample_token(q, rng))
        p_rows = [TARGET(prefix + tuple(drafts[:i])) for i in range(GAMMA + 1)]
        emissions.append(tuple(verifier(drafts, p_rows, q_rows, rng).tokens))
    return emissions, prefix


def _correction_from_target(drafts, p_rows, q_rows, rng):
    """A broken verifier: after a rejection it samples from p instead of the residual."""
    out = []
    for x, p, q in zip(drafts, p_rows, q_rows):
        if rng.random() < p[x] / q[x]:
            out.append(x)
            continue
        out.append(sample_token(p, rng))
        return VerifiedRound(tuple(out), len(out) - 1, False)
    out.append(sample_token(p_rows[-1], rng))
    return VerifiedRound(tuple(out), len(out) - 1, True)


def _passes(emissions, prefix):
    pvalues = emitted_law_pvalues(emissions, TARGET, prefix)
    assert len(pvalues) == GAMMA + 1
    return all(pv >= FALSE_FAIL_RATE / len(pvalues) for pv in pvalues), pvalues  # Bonferroni


@pytest.mark.slow
def test_every_position_follows_the_target():
    ok, pvalues = _passes(*_speculative_rounds(verify, 20_000, seed=1))
    assert ok, pvalues


@pytest.mark.slow
def test_negative_control_correction_from_target_fails():
    ok, pvalues = _passes(*_speculative_rounds(_correction_from_target, 20_000, seed=1))
    assert not ok, pvalues


def _iid_K_counts(verifier, n, seed):
    """K over n rounds whose rows do not depend on the prefix, so acceptance is iid."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(GAMMA + 1)
    for _ in range(n):
        drafts = [sample_token(TOY_Q, rng) for _ in range(GAMMA)]
        counts[len(verifier(drafts, [TOY_P] * (GAMMA + 1), [TOY_Q] * GAMMA, rng).tokens) - 1] += 1
    return counts


def _always_accept_first(drafts, p_rows, q_rows, rng):
    """A broken verifier that keeps the first draft unconditionally."""
    rest = verify(drafts[1:], p_rows[1:], q_rows[1:], rng)
    return VerifiedRound((drafts[0],) + rest.tokens, rest.num_accepted + 1, rest.bonus)


@pytest.mark.slow
def test_K_follows_truncated_geometric():
    pmf = output_count_pmf(0.6, GAMMA)
    assert chi_square_pvalue(_iid_K_counts(verify, 20_000, seed=2), pmf) >= FALSE_FAIL_RATE


@pytest.mark.slow
def test_negative_control_K_law_of_always_accepting_first_draft_fails():
    pmf = output_count_pmf(0.6, GAMMA)
    assert chi_square_pvalue(_iid_K_counts(_always_accept_first, 20_000, seed=2), pmf) < FALSE_FAIL_RATE


def test_residual_used_for_correction_is_the_lesson_residual():
    np.testing.assert_allclose(residual_distribution(TOY_P, TOY_Q), [1, 0, 0])


class _Uniforms:
    """A stand-in for a Generator's ``random()`` that returns chosen uniforms, to force a rare branch."""

    def __init__(self, *values):
        self.values = iter(values)

    def random(self):
        return next(self.values)


@pytest.mark.parametrize(
    "p, q",
    [
        ([0.5, 0.5], [0.5 + 1e-14, 0.5 - 1e-14]),  # p ≈ q: [p − q]+ holds 1e-14, below the float floor
        ([0.5 - 1e-10, 0.5], [0.5, 0.5]),  # p sums to 1 − 1e-10: [p − q]+ is exactly 0
    ],
)
def test_rejection_with_no_residual_mass_still_emits_a_valid_correction(p, q):
    rejected = verify_unchecked([0], [p, p], [q], _Uniforms(1 - 1e-16, 0.3))
    assert rejected.num_accepted == 0 and rejected.tokens[0] in (0, 1)
    np.testing.assert_allclose(correction_distribution(p, q), p)
    np.testing.assert_allclose(output_distribution(p, q), p, atol=1e-9)
    assert set(np.unique(simulate_rounds([p, p], [q], 1000, rng=0).tokens)) <= {-1, 0, 1}


def test_verify_is_its_checks_plus_the_unchecked_core():
    p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    for seed in range(50):
        assert verify([2, 1], [p] * 3, [q] * 2, rng=seed) == verify_unchecked(
            [2, 1], [np.array(p)] * 3, [np.array(q)] * 2, np.random.default_rng(seed)
        )
