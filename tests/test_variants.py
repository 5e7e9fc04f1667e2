"""Verification variants: the exact ones are exact by enumeration, the lossy ones are measurably not."""

import random
from fractions import Fraction as F
from functools import partial

import numpy as np
import pytest

from specdec_lib import check_verifier, round_distribution, target_stream_distribution, toy_model_pair
from specdec_lib.broken_verifiers import BROKEN_VARIANTS
from specdec_lib.streams import (
    exact_stream_distribution,
    expected_accepted,
    stream_distribution,
    stream_total_variation,
)
from specdec_lib.trees import (
    draft_tree,
    multi_draft_output_distribution,
    tree_round_distribution,
    tree_shape,
    tree_size,
    verify_multi_draft,
    verify_tree,
)
from specdec_lib.variants import (
    block_emitted_distribution,
    lenient_emitted_distribution,
    typical_emitted_distribution,
    verify_block,
    verify_lenient,
    verify_typical,
)

TARGET, DRAFT = toy_model_pair()
PREFIX, LENGTH = (1,), 4
EXACT_TYPICAL = {"epsilon": 1, "delta": 3}  # threshold >= 1 on 3 tokens: nothing accepted


def stream_matches_target(round_law):
    """The claim under test: repeated rounds emit the target's stream distribution, in Fractions."""
    return stream_distribution(round_law, PREFIX, LENGTH) == target_stream_distribution(
        TARGET, PREFIX, LENGTH
    )


def chain_law(emitted_distribution, gamma, target=TARGET):
    return lambda prefix: round_distribution(
        target, DRAFT, prefix, gamma, emitted_distribution=emitted_distribution
    )


def random_rows(rng, vocab):
    """A random rational distribution with a zero now and then."""
    weights = [rng.choice([0, 1, 2, 3, 5]) for _ in range(vocab)]
    weights[rng.randrange(vocab)] += 1
    return [F(w, sum(weights)) for w in weights]


# --- exact variants, by enumeration, each with its planted off-by-one --------------------------------


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_block_verification_emits_the_target_stream(gamma):
    assert stream_matches_target(chain_law(block_emitted_distribution, gamma))


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_block_with_rows_read_late_is_caught(gamma):
    assert not stream_matches_target(chain_law(BROKEN_VARIANTS["block_rows_read_late"].exact, gamma))


@pytest.mark.parametrize("branching", [(2,), (2, 1), (3, 1), (2, 2), (1, 2, 1)])
def test_token_tree_emits_the_target_stream(branching):
    shape = tree_shape(branching)
    assert stream_matches_target(lambda prefix: tree_round_distribution(TARGET, DRAFT, prefix, shape))


@pytest.mark.parametrize("branching", [(2,), (2, 1), (2, 2)])
def test_token_tree_scoring_parent_rows_is_caught(branching):
    broken, shape = BROKEN_VARIANTS["tree_parent_row"].exact, tree_shape(branching)
    assert not stream_matches_target(lambda prefix: broken(TARGET, DRAFT, prefix, shape))


def test_a_chain_tree_is_strict_verification():
    for gamma in range(1, 4):
        assert tree_round_distribution(TARGET, DRAFT, PREFIX, tree_shape((1,) * gamma)) == round_distribution(
            TARGET, DRAFT, PREFIX, gamma
        )


def test_multi_draft_returns_p_on_random_rational_cases_and_the_stale_residual_does_not():
    rng, broken, caught = random.Random(14), BROKEN_VARIANTS["multi_draft_stale_residual"].exact, 0
    for _ in range(200):
        vocab, k = rng.randint(2, 5), rng.randint(1, 4)
        p, q = random_rows(rng, vocab), random_rows(rng, vocab)
        assert multi_draft_output_distribution(p, q, k) == p
        caught += broken(p, q, k) != p
    assert caught > 50, f"the planted bug changed the output in only {caught} of 200 cases"


# --- the paper's example and block >= token-wise ------------------------------------------------------


def test_binary_example_block_keeps_11_9_and_tokenwise_10_9():
    target, draft = (lambda prefix: [F(1, 3), F(2, 3)]), (lambda prefix: [F(2, 3), F(1, 3)])
    block = round_distribution(target, draft, (), 2, emitted_distribution=block_emitted_distribution)
    assert expected_accepted(block) == F(11, 9)
    assert expected_accepted(round_distribution(target, draft, (), 2)) == F(10, 9)


def test_block_keeps_at_least_as_many_drafts_as_tokenwise_on_random_models():
    rng, strictly_more = random.Random(2024), 0
    for _ in range(40):
        vocab, gamma = rng.randint(2, 3), rng.randint(1, 3)
        p_table = {last: random_rows(rng, vocab) for last in range(vocab)}
        q_table = {last: [v if v else F(0) for v in random_rows(rng, vocab)] for last in range(vocab)}

        def target(prefix, t=p_table):
            return t[prefix[-1] if prefix else 0]

        def draft(prefix, t=q_table):
            return t[prefix[-1] if prefix else 0]

        block = expected_accepted(
            round_distribution(target, draft, (), gamma, emitted_distribution=block_emitted_distribution)
        )
        tokenwise = expected_accepted(round_distribution(target, draft, (), gamma))
        assert block >= tokenwise
        strictly_more += block > tokenwise
    assert strictly_more > 0, (
        "negative control: block never beat token-wise, so the comparison tested nothing"
    )


# --- lossy variants: TV > 0 at defaults, 0 where they reduce to exact sampling ------------------------

LOSSY = {
    "typical (Medusa defaults)": typical_emitted_distribution,
    "lenient l = 1/2": partial(lenient_emitted_distribution, lenience=F(1, 2)),
}
REDUCED = {
    "typical, threshold >= 1": partial(typical_emitted_distribution, **EXACT_TYPICAL),
    "lenient l = 1": partial(lenient_emitted_distribution, lenience=1),
}


@pytest.mark.parametrize("name", LOSSY)
@pytest.mark.parametrize("gamma", [1, 2])
def test_lossy_variants_move_the_stream_away_from_the_target(name, gamma):
    law = exact_stream_distribution(TARGET, DRAFT, PREFIX, gamma, LENGTH, emitted_distribution=LOSSY[name])
    assert stream_total_variation(law, target_stream_distribution(TARGET, PREFIX, LENGTH)) > F(1, 100)


@pytest.mark.parametrize("name", REDUCED)
@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_lossy_variants_are_exact_where_they_reduce_to_exact_sampling(name, gamma):
    law = exact_stream_distribution(TARGET, DRAFT, PREFIX, gamma, LENGTH, emitted_distribution=REDUCED[name])
    assert stream_total_variation(law, target_stream_distribution(TARGET, PREFIX, LENGTH)) == 0


def test_lenient_at_one_is_strict_round_for_round():
    law = round_distribution(TARGET, DRAFT, PREFIX, 3, emitted_distribution=REDUCED["lenient l = 1"])
    assert law == round_distribution(TARGET, DRAFT, PREFIX, 3)


def test_lenient_first_token_follows_the_one_step_lenient_distribution():
    from specdec_lib import lenient_output_distribution

    law = round_distribution(TARGET, DRAFT, PREFIX, 1, emitted_distribution=LOSSY["lenient l = 1/2"])
    first = [sum(v for e, v in law.items() if e[0] == y) for y in range(3)]
    assert first == lenient_output_distribution(TARGET(PREFIX), DRAFT(PREFIX), F(1, 2))


# --- the samplers: the checker passes exact ones, fails lossy and planted ones ------------------------


@pytest.mark.parametrize(
    "name, verifier, exact",
    [
        ("block", verify_block, block_emitted_distribution),
        ("lenient l = 1", partial(verify_lenient, lenience=1), REDUCED["lenient l = 1"]),
        (
            "typical, threshold >= 1",
            partial(verify_typical, **EXACT_TYPICAL),
            REDUCED["typical, threshold >= 1"],
        ),
    ],
)
def test_checker_passes_the_exact_samplers(name, verifier, exact):
    report = check_verifier(verifier, emitted_distribution=exact)
    assert report.passed, report.summary


@pytest.mark.parametrize(
    "name, verifier, exact",
    [
        ("typical defaults", verify_typical, typical_emitted_distribution),
        ("lenient default", verify_lenient, lenient_emitted_distribution),
        (
            "block rows read late",
            BROKEN_VARIANTS["block_rows_read_late"].verifier,
            BROKEN_VARIANTS["block_rows_read_late"].exact,
        ),
        ("block judged by the strict K law", verify_block, None),
    ],
)
def test_checker_fails_lossy_and_planted_samplers(name, verifier, exact):
    assert not check_verifier(verifier, emitted_distribution=exact).passed


def test_tree_sampler_follows_its_exact_round_distribution():
    """Seeded: 4,000 rounds of draft_tree + verify_tree against tree_round_distribution (chi-square,
    false-fail rate 1e-6); the planted parent-row bug, run the same way, must fail."""
    from specdec_lib.stats import chi_square_pvalue

    shape, float_target, float_draft = tree_shape((2, 1)), *toy_model_pair(exact=False)
    exact = tree_round_distribution(TARGET, DRAFT, PREFIX, shape)
    outcomes = sorted(exact)

    def pvalue(verify_fn):
        rng = np.random.default_rng(5)
        counts = dict.fromkeys(outcomes, 0)
        for _ in range(4000):
            tokens = verify_fn(
                draft_tree(float_draft, PREFIX, shape, rng), float_target, float_draft, PREFIX, rng
            ).tokens
            if tokens not in counts:
                return 0.0
            counts[tokens] += 1
        return chi_square_pvalue([counts[o] for o in outcomes], [float(exact[o]) for o in outcomes])

    assert pvalue(verify_tree) > 1e-6
    assert pvalue(BROKEN_VARIANTS["tree_parent_row"].verifier) < 1e-6


def test_multi_draft_sampler_follows_p_and_the_stale_one_does_not():
    from specdec_lib.stats import chi_square_pvalue

    p, q, k = np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.2, 0.7]), 2

    def pvalue(verify_fn):
        rng = np.random.default_rng(9)
        tokens = [verify_fn(rng.choice(3, size=k, p=q).tolist(), p, q, rng).token for _ in range(6000)]
        return chi_square_pvalue(np.bincount(tokens, minlength=3), p)

    assert pvalue(verify_multi_draft) > 1e-6
    assert pvalue(BROKEN_VARIANTS["multi_draft_stale_residual"].verifier) < 1e-6


# --- bad inputs ---------------------------------------------------------------------------------------

P, Q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: verify_block([1, 2], [P, P], [Q, Q]), "target_probs"),
        (lambda: verify_typical([1], [P, P], [Q], epsilon=-1), "epsilon"),
        (lambda: verify_typical([1], [P, P], [Q], delta=float("nan")), "delta"),
        (lambda: verify_lenient([1], [P, P], [Q], lenience=2), "lenience"),
        (lambda: block_emitted_distribution([5], [[F(1, 2)] * 2] * 2, [[F(1, 2)] * 2]), "draft_tokens[0]"),
        (
            lambda: lenient_emitted_distribution([0], [[F(1, 2)] * 2], [[F(1, 2)] * 2]),
            "target_probs, draft_probs",
        ),
        (lambda: verify_multi_draft([], P, Q), "candidates"),
        (lambda: verify_multi_draft([3], P, Q), "candidates[0]"),
        (lambda: verify_multi_draft([0], P, [0.5, 0.5]), "target_probs, draft_probs"),
        (lambda: multi_draft_output_distribution(P, Q, 0), "k"),
        (lambda: tree_shape((2, 0)), "branching[1]"),
        (lambda: tree_round_distribution(TARGET, DRAFT, (), [()]), "shape"),
        (lambda: verify_tree(((1, ()), 2), TARGET, DRAFT), "tree"),
        (lambda: stream_distribution("not callable", (), 2), "round_law"),
        (lambda: round_distribution(TARGET, DRAFT, (), 1, emitted_distribution=3), "emitted_distribution"),
        (lambda: check_verifier(verify_block, emitted_distribution=3), "emitted_distribution"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{__import__('re').escape(name)}"):
        call()


def test_tree_size_counts_draft_nodes():
    assert [tree_size(tree_shape(b)) for b in [(1, 1, 1), (2, 1), (2, 2)]] == [3, 4, 6]


def test_checker_flags_rounds_outside_the_rules_support():
    """Strict verification (lenience 1) judged as typical acceptance emits rounds typical acceptance never emits
    (a rejection where every draft passes the threshold): a structural failure, not a statistical one."""
    report = check_verifier(
        partial(verify_lenient, lenience=1), emitted_distribution=typical_emitted_distribution, n_rounds=300
    )
    assert not report.passed
    assert any("probability 0" in problem for problem in report.problems), report.summary


def test_stream_distribution_refuses_an_empty_round():
    with pytest.raises(ValueError, match="^round_law: a round must emit at least one token"):
        stream_distribution(lambda prefix: {(): F(1)}, (), 2)
