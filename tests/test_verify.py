"""One verification round: its contract, its determinism, and the law of what it emits.

Statistical tests use fixed seeds, so each run is repeatable. Their threshold is the
false-fail rate: a correct verifier fails one with probability at most FALSE_FAIL_RATE
over the choice of seed. Each has a negative control that must fail.
"""

import numpy as np
import pytest

from specdec_lib import VerifiedRound, lab_model_pair, output_count_pmf, residual_distribution, sample_token, verify
from specdec_lib.stats import chi_square_pvalue, emitted_law_pvalues

from conftest import TOY_P, TOY_Q

FALSE_FAIL_RATE = 1e-6
GAMMA = 3
TARGET, DRAFT = lab_model_pair(exact=False)  # prefix-dependent: every position sees another row


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


def test_every_position_follows_the_target():
    ok, pvalues = _passes(*_speculative_rounds(verify, 20_000, seed=1))
    assert ok, pvalues


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


def test_K_follows_truncated_geometric():
    pmf = output_count_pmf(0.6, GAMMA)
    assert chi_square_pvalue(_iid_K_counts(verify, 20_000, seed=2), pmf) >= FALSE_FAIL_RATE


def test_negative_control_K_law_of_always_accepting_first_draft_fails():
    pmf = output_count_pmf(0.6, GAMMA)
    assert chi_square_pvalue(_iid_K_counts(_always_accept_first, 20_000, seed=2), pmf) < FALSE_FAIL_RATE


def test_residual_used_for_correction_is_the_lesson_residual():
    np.testing.assert_allclose(residual_distribution(TOY_P, TOY_Q), [1, 0, 0])
