"""The chapter's failure modes: every slip is caught by the check the chapter names, and only the slips are."""

from fractions import Fraction as F

import numpy as np
import pytest

from specdec_lib import (
    check_verifier,
    round_distribution,
    toy_model_pair,
    verify,
)
from specdec_lib.broken_samplers import (
    BROKEN_SAMPLERS,
    argmax_rows,
    frequency_penalised,
    padded_model,
    penalised_rows,
    round_law,
    rows_of,
    sample_round,
    stale_penalised_rows,
    stream_distance,
    vocabulary_rows,
    warped_rows,
)
from specdec_lib.stats import emitted_law_pvalues

TARGET, DRAFT = toy_model_pair()
PREFIX, LENGTH, GAMMA = (1,), 4, 2
CHECKER_BLIND = {"residual_on_wrong_support"}  # the toy models never under-propose two tokens at once


def stream_tv(proposal, draft_rows, target_rows, reference):
    return stream_distance(PREFIX, GAMMA, LENGTH, proposal, draft_rows, target_rows, reference)


@pytest.mark.parametrize("name", sorted(set(BROKEN_SAMPLERS) - CHECKER_BLIND))
def test_checker_rejects_every_verifier_slip(name):
    sampler, _ = BROKEN_SAMPLERS[name]
    assert not check_verifier(sampler).passed


def test_negative_control_checker_passes_verify_on_the_same_seed():
    assert check_verifier(verify).passed


def test_residual_on_wrong_support_needs_two_under_proposed_tokens_to_show():
    """Blind spot of the checker's toy models, caught by a chi-square test where two tokens have p > q.

    False-fail rate of the passing half: 1e-6 (its threshold), over the seed.
    """
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])  # p > q for tokens 0 and 1
    sampler, _ = BROKEN_SAMPLERS["residual_on_wrong_support"]
    assert check_verifier(sampler).passed
    rng = np.random.default_rng(0)
    for verifier, expect_pass in ((verify, True), (sampler, False)):
        drafts = rng.choice(4, size=20_000, p=q)
        emitted = [tuple(verifier([int(x)], [p, p], [q], rng).tokens)[:1] for x in drafts]
        (pvalue,) = emitted_law_pvalues(emitted, lambda prefix: p)
        assert (pvalue > 1e-6) == expect_pass, pvalue


@pytest.mark.parametrize("gamma", [0, 1, 2, 3])
def test_honest_rows_give_the_strict_round_exactly(gamma):
    assert round_law((1,), gamma, rows_of(DRAFT), rows_of(DRAFT), rows_of(TARGET)) == round_distribution(
        TARGET, DRAFT, (1,), gamma
    )


def test_argmax_draft_handed_as_q_is_far_from_the_target():
    assert stream_tv(argmax_rows(DRAFT), rows_of(DRAFT), rows_of(TARGET), TARGET) == F(1511, 2400)


def test_draft_sampled_at_another_temperature_than_the_q_handed_over():
    target, draft = toy_model_pair(exact=False)
    assert stream_tv(warped_rows(draft, 0.5), rows_of(draft), rows_of(target), target) > 0.1
    assert stream_tv(rows_of(draft), rows_of(draft), rows_of(target), target) < 1e-12


def test_penalty_on_the_target_only_stays_exact_but_stale_penalty_counts_do_not():
    penalised = lambda prefix: frequency_penalised(TARGET(prefix), prefix)  # noqa: E731
    assert stream_tv(rows_of(DRAFT), rows_of(DRAFT), penalised_rows(TARGET), penalised) == 0
    assert stream_tv(rows_of(DRAFT), rows_of(DRAFT), stale_penalised_rows(TARGET), penalised) > F(1, 10)


def test_penalty_on_the_target_only_costs_acceptance():
    def accepted(draft_rows):
        law = round_law(PREFIX, GAMMA, draft_rows, draft_rows, penalised_rows(TARGET))
        return sum((len(e) - 1) * v for e, v in law.items())

    assert accepted(rows_of(DRAFT)) < accepted(penalised_rows(DRAFT))


def test_padded_target_vocabulary_cut_loses_mass_and_zero_padded_draft_is_exact():
    padded = padded_model(TARGET, 1)
    with pytest.raises(ValueError, match="vocabulary sizes differ"):
        round_distribution(padded, DRAFT, PREFIX, GAMMA)
    assert stream_tv(rows_of(DRAFT), rows_of(DRAFT), vocabulary_rows(padded, 3), padded) > 0
    assert stream_tv(vocabulary_rows(DRAFT, 4), vocabulary_rows(DRAFT, 4), rows_of(padded), padded) == 0


def test_sampled_rounds_follow_round_law_and_not_the_honest_law():
    """Chi-square of the first emitted token; false-fail rate 1e-6 for the passing half, over the seed."""
    target, draft = toy_model_pair(exact=False)
    rng = np.random.default_rng(1)
    rows = argmax_rows(draft), rows_of(draft), rows_of(target)
    first = [sample_round(PREFIX, GAMMA, *rows, rng=rng).tokens[:1] for _ in range(4000)]
    slipped = round_law(PREFIX, GAMMA, *rows, limit=1)
    (fits,) = emitted_law_pvalues(first, lambda prefix: [slipped.get((x,), 0) for x in range(3)])
    (honest,) = emitted_law_pvalues(first, lambda prefix: target(PREFIX))
    assert fits > 1e-6 and honest < 1e-6


def test_round_law_refuses_a_draft_the_verifier_cannot_score():
    with pytest.raises(ValueError, match="^proposal"):
        round_law((), 1, lambda s, a: [F(1), F(0)], lambda s, a: [F(0), F(1)], lambda s, a: [F(1, 2)] * 2)
