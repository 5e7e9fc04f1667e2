"""The vectorised simulator: its output contract and, statistically, the law of ``verify``.

Statistical tests use fixed seeds; a correct simulator fails one with probability at most
FALSE_FAIL_RATE over the seed (Bonferroni over positions). Each has a negative control:
drafts drawn from another law than the q the verifier divides by must fail.
"""

import numpy as np
import pytest
from conftest import TOY_P, TOY_Q

from specdec_lib import output_count_pmf, sampling_transform, simulate_rounds
from specdec_lib.stats import chi_square_pvalue, emitted_law_pvalues

FALSE_FAIL_RATE = 1e-6
GAMMA = 3
P_ROWS = [
    [0.6, 0.3, 0.1],
    [0.1, 0.5, 0.4],
    [0.3, 0.3, 0.4],
    [0.05, 0.15, 0.8],
]  # a different law per position
Q_ROWS = [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.7, 0.2, 0.1]]


def _emissions(out):
    return [tuple(t for t in row if t >= 0) for row in out.tokens.tolist()]


def test_tokens_are_left_aligned_and_padded_with_minus_one():
    out = simulate_rounds(P_ROWS, Q_ROWS, 5_000, rng=0)
    assert out.tokens.shape == (5_000, GAMMA + 1) and out.num_accepted.shape == (5_000,)
    emitted = out.tokens >= 0
    assert (emitted.sum(axis=1) == out.num_accepted + 1).all()
    assert (np.argmin(np.hstack([emitted, np.zeros((5_000, 1), bool)]), axis=1) == out.num_accepted + 1).all()
    assert out.tokens.max() < 3


def test_same_seed_same_rounds():
    a, b = simulate_rounds(P_ROWS, Q_ROWS, 1_000, rng=7), simulate_rounds(P_ROWS, Q_ROWS, 1_000, rng=7)
    assert (a.tokens == b.tokens).all() and (a.num_accepted == b.num_accepted).all()


def test_gamma_zero_is_plain_sampling():
    out = simulate_rounds([[0.0, 1.0]], [], 100, rng=0)
    assert (out.tokens[:, 0] == 1).all() and (out.num_accepted == 0).all()


def test_zero_probability_tokens_are_never_emitted():
    out = simulate_rounds([[0.5, 0.0, 0.5]] * 3, [[0.0, 0.5, 0.5]] * 2, 20_000, rng=1)
    assert not (out.tokens == 1).any()


def test_K_follows_truncated_geometric():
    out = simulate_rounds([TOY_P] * (GAMMA + 1), [TOY_Q] * GAMMA, 100_000, rng=2)
    counts = np.bincount(out.num_accepted, minlength=GAMMA + 1)
    assert chi_square_pvalue(counts, output_count_pmf(0.6, GAMMA)) >= FALSE_FAIL_RATE


def test_negative_control_K_law_fails_when_drafts_come_from_another_law():
    hotter = [sampling_transform(TOY_Q, temperature=2.0)] * GAMMA
    out = simulate_rounds([TOY_P] * (GAMMA + 1), [TOY_Q] * GAMMA, 100_000, rng=2, proposal_probs=hotter)
    counts = np.bincount(out.num_accepted, minlength=GAMMA + 1)
    assert chi_square_pvalue(counts, output_count_pmf(0.6, GAMMA)) < FALSE_FAIL_RATE


def _position_pvalues(**kwargs):
    out = simulate_rounds(P_ROWS, Q_ROWS, 50_000, rng=3, **kwargs)
    return emitted_law_pvalues(_emissions(out), lambda prefix: P_ROWS[len(prefix)])


def test_every_position_follows_its_target_row():
    pvalues = _position_pvalues()
    assert len(pvalues) == GAMMA + 1
    assert min(pvalues) >= FALSE_FAIL_RATE / len(pvalues), pvalues


def test_negative_control_positions_fail_when_drafts_come_from_another_law():
    colder = [sampling_transform(q, temperature=0.5) for q in Q_ROWS]
    assert min(_position_pvalues(proposal_probs=colder)) < FALSE_FAIL_RATE / (GAMMA + 1)


def test_one_hot_drafts_are_accepted_with_the_target_probability_of_the_draft():
    onehot = [0.0, 1.0, 0.0]
    out = simulate_rounds([TOY_P] * (GAMMA + 1), [onehot] * GAMMA, 50_000, rng=4)
    counts = np.bincount(out.num_accepted, minlength=GAMMA + 1)
    assert chi_square_pvalue(counts, output_count_pmf(TOY_P[1], GAMMA)) >= FALSE_FAIL_RATE
    corrections = out.tokens[np.arange(50_000), out.num_accepted][out.num_accepted < GAMMA]
    assert not (corrections == 1).any()  # the residual of a one-hot draft excludes the draft token


def test_large_vocabulary_rows_work():
    rng = np.random.default_rng(5)
    p, q = rng.random((5, 1000)), rng.random((4, 1000))
    out = simulate_rounds(p / p.sum(1, keepdims=True), q / q.sum(1, keepdims=True), 10_000, rng=6)
    assert out.tokens.max() < 1000 and out.tokens.min() >= -1


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(target_probs=[TOY_P] * 3, draft_probs=[TOY_Q], n_rounds=10), "draft_probs"),
        (dict(target_probs=[TOY_P] * 2, draft_probs=[[0.5, 0.5]], n_rounds=10), "draft_probs[0]"),
        (dict(target_probs=[TOY_P] * 2, draft_probs=[TOY_Q], n_rounds=0), "n_rounds"),
        (dict(target_probs=[[0.5, 0.6, -0.1]] * 2, draft_probs=[TOY_Q], n_rounds=1), "target_probs[0]"),
        (
            dict(target_probs=[TOY_P] * 2, draft_probs=[[0.5, 0.5, 0.0]], n_rounds=1, proposal_probs=[TOY_Q]),
            "proposal_probs",
        ),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match="^" + name.replace("[", r"\[").replace("]", r"\]")):
        simulate_rounds(**kwargs)


def test_gamma_zero_refuses_draft_rows():
    with pytest.raises(ValueError, match="^draft_probs: expected 0 rows"):
        simulate_rounds([TOY_P], [TOY_Q], 10)
