"""Token trees under three node rules: SpecInfer's, SpecTr's k-sequential and exact top-k. Each is exact by
enumeration and each planted off-by-one fails the same check; the best tree of a node budget is optimal by
brute force; the adaptive-γ policies follow their rules."""

import random
from fractions import Fraction as F

import numpy as np
import pytest

from specdec_lib import target_stream_distribution, toy_model_pair
from specdec_lib.adaptive_gamma import HeuristicGamma, TheoryGamma, adaptive_stream_distribution
from specdec_lib.broken_verifiers import BROKEN_VARIANTS
from specdec_lib.spectr import spectr_acceptance, spectr_output_distribution, spectr_rho, spectr_steps
from specdec_lib.speedup import optimal_gamma
from specdec_lib.stats import chi_square_pvalue
from specdec_lib.streams import expected_accepted, stream_distribution
from specdec_lib.top_k import top_k_candidates, top_k_output_distribution, top_k_steps, verify_top_k
from specdec_lib.tree_search import best_tree, expected_tree_tokens
from specdec_lib.trees import (
    draft_tree,
    multi_draft_steps,
    tree_round_distribution,
    tree_shape,
    tree_size,
    verify_tree,
)

TARGET, DRAFT = toy_model_pair()
PREFIX, LENGTH = (1,), 4


def stream_matches_target(round_law):
    return stream_distribution(round_law, PREFIX, LENGTH) == target_stream_distribution(
        TARGET, PREFIX, LENGTH
    )


def random_rows(rng, vocab):
    weights = [rng.choice([0, 1, 2, 3, 5]) for _ in range(vocab)]
    weights[rng.randrange(vocab)] += 1
    return [F(w, sum(weights)) for w in weights]


def output(steps):
    accepted, correction = steps
    return [sum(column) + c for column, c in zip(zip(*accepted), correction)]


# --- exact by enumeration, on several tree shapes; the planted off-by-ones fail the same check -------


@pytest.mark.parametrize("branching", [(1,), (2,), (3,), (2, 1), (1, 2), (3, 1), (2, 2), (1, 2, 1)])
def test_top_k_tree_emits_the_target_stream(branching):
    shape = tree_shape(branching)
    assert stream_matches_target(lambda at: tree_round_distribution(TARGET, DRAFT, at, shape, rule="top_k"))


@pytest.mark.parametrize("branching", [(2,), (3,), (2, 1), (2, 2)])
def test_top_k_renormalised_one_rejection_late_is_caught(branching):
    broken, shape = BROKEN_VARIANTS["top_k_renormalised_late"].exact, tree_shape(branching)
    assert not stream_matches_target(lambda at: broken(TARGET, DRAFT, at, shape))


@pytest.mark.parametrize("branching", [(1,), (2,), (3,), (2, 1), (2, 2), (1, 2, 1)])
def test_spectr_tree_emits_the_target_stream(branching):
    shape = tree_shape(branching)
    assert stream_matches_target(lambda at: tree_round_distribution(TARGET, DRAFT, at, shape, rule="spectr"))


@pytest.mark.parametrize("branching", [(2,), (3,), (2, 1)])
def test_spectr_residual_one_term_short_is_caught(branching):
    broken, shape = BROKEN_VARIANTS["spectr_residual_one_term_short"].exact, tree_shape(branching)
    assert not stream_matches_target(lambda at: broken(TARGET, DRAFT, at, shape))


def test_both_rules_return_p_on_random_rational_cases_and_their_planted_bugs_do_not():
    rng, caught = random.Random(23), {"top_k": 0, "spectr": 0}
    for _ in range(150):
        vocab = rng.randint(2, 5)
        k = rng.randint(1, vocab)
        p, q = random_rows(rng, vocab), random_rows(rng, vocab)
        assert top_k_output_distribution(p, q, k) == p
        assert spectr_output_distribution(p, q, k) == p
        caught["top_k"] += output(top_k_steps(p, q, k, _lag=1)) != p
        caught["spectr"] += output(spectr_steps(p, q, k, _short=1)) != p
    assert min(caught.values()) > 30, f"planted bugs changed the output too rarely: {caught}"


def test_one_candidate_is_strict_verification_under_every_rule():
    p, q = [F(1, 2), F(1, 3), F(1, 6)], [F(1, 6), F(1, 6), F(2, 3)]
    assert spectr_rho(p, q, 1) == 1
    assert spectr_steps(p, q, 1) == multi_draft_steps(p, q, 1)
    assert sum(sum(row) for row in top_k_steps(p, q, 1)[0]) == p[top_k_candidates(q, 1)[0]]


def test_spectr_divisor_is_the_smallest_valid_one():
    """ρ passes 1 − (1 − β)^k ≤ ρβ, and a slightly smaller ρ does not (p ≠ q, k ≥ 2)."""
    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    for k in (2, 3, 4):
        rho = spectr_rho(p, q, k)

        def slack(r, k=k):
            beta = sum(min(b, a / r) for a, b in zip(p, q))
            return r * beta - (1 - (1 - beta) ** k)

        assert 1 < rho <= k and slack(rho) >= 0 > slack(rho - F(1, 10**6))


def test_top_k_node_keeps_the_targets_mass_on_the_drafts_top_k():
    rng = random.Random(5)
    for _ in range(50):
        vocab = rng.randint(2, 5)
        k = rng.randint(1, vocab)
        p, q = random_rows(rng, vocab), random_rows(rng, vocab)
        accepted, _ = top_k_steps(p, q, k)
        assert sum(sum(row) for row in accepted) == sum(p[x] for x in top_k_candidates(q, k))


def test_spectr_accepts_more_than_one_draft_and_its_acceptance_is_one_minus_miss_to_the_k():
    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]
    single = spectr_acceptance(p, q, 1)
    assert single == sum(min(a, b) for a, b in zip(p, q))
    assert spectr_acceptance(p, q, 3) > single


# --- samplers follow their exact laws (chi-square, false-fail rate 1e-6 each); planted ones do not -------


@pytest.mark.parametrize(
    "rule, planted", [("top_k", "top_k_renormalised_late"), ("spectr", "spectr_residual_one_term_short")]
)
def test_tree_sampler_follows_its_exact_round_distribution(rule, planted):
    shape, (float_target, float_draft) = tree_shape((3, 1)), toy_model_pair(exact=False)
    exact = tree_round_distribution(TARGET, DRAFT, PREFIX, shape, rule=rule)
    outcomes = sorted(exact)

    def pvalue(node_verify):
        rng = np.random.default_rng(7)
        counts = dict.fromkeys(outcomes, 0)
        for _ in range(4000):
            tree = draft_tree(float_draft, PREFIX, shape, rng, rule=rule)
            verdict = verify_tree(tree, float_target, float_draft, PREFIX, rng, rule=node_verify)
            if verdict.tokens not in counts:
                return 0.0
            counts[verdict.tokens] += 1
        return chi_square_pvalue([counts[o] for o in outcomes], [float(exact[o]) for o in outcomes])

    from specdec_lib.broken_verifiers import _SPECTR_SHORT, _TOP_K_LATE

    assert pvalue(rule) > 1e-6
    assert pvalue(_TOP_K_LATE if rule == "top_k" else _SPECTR_SHORT) < 1e-6


def test_top_k_sampler_rejects_repeated_candidates():
    with pytest.raises(ValueError, match="^candidates: must be distinct"):
        verify_top_k([1, 1], [0.5, 0.5])


# --- the best tree of a budget: Sequoia's dynamic programming against brute force ---------------------


def ordered_trees(n):
    """Every tree shape with exactly n draft nodes, children in rank order (Catalan(n) of them)."""
    if n == 0:
        return [()]
    shapes = []
    for first in range(n):  # nodes in the first child's subtree, beyond the child itself
        for sub in ordered_trees(first):
            for rest in ordered_trees(n - 1 - first):
                shapes.append((sub,) + rest)
    return shapes


@pytest.mark.parametrize("seed", range(4))
def test_best_tree_beats_every_tree_of_its_budget(seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(3):  # a chance per rank at each of three depths, falling with rank
        weights = sorted((rng.randint(1, 9) for _ in range(3)), reverse=True)
        total = sum(weights) + rng.randint(0, 6)
        rows.append([F(w, total) for w in weights])
    for budget in range(1, 7):
        shape, value = best_tree(rows, budget)
        brute = max(expected_tree_tokens(s, rows) for n in range(budget + 1) for s in ordered_trees(n))
        assert value == brute == expected_tree_tokens(shape, rows) and tree_size(shape) <= budget


def test_tree_value_is_the_exact_tokens_per_call_when_acceptance_ignores_the_prefix():
    """With models that ignore the prefix, the rank chances are p(c_k) at every node: the formula is exact."""
    p, q = [F(1, 2), F(1, 3), F(1, 6)], [F(1, 6), F(1, 2), F(1, 3)]
    target, draft = (lambda prefix: p), (lambda prefix: q)
    rows = [[p[x] for x in top_k_candidates(q, 3)]]
    for branching in [(1, 1), (2, 1), (3,), (2, 2), (1, 3)]:
        shape = tree_shape(branching)
        law = tree_round_distribution(target, draft, (), shape, rule="top_k")
        assert 1 + expected_accepted(law) == expected_tree_tokens(shape, rows)


def test_best_tree_is_a_chain_for_a_sure_draft_and_wide_for_a_flat_one():
    assert best_tree([[0.95, 0.02]], 4)[0] == tree_shape((1, 1, 1, 1))
    assert best_tree([[0.3, 0.3, 0.3]], 3)[0] == tree_shape((3,))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: best_tree([[0.5, 0.7]], 2), "acceptance[0]"),
        (lambda: best_tree([[1.5]], 2), "acceptance[0][0]"),
        (lambda: best_tree([], 2), "acceptance"),
        (lambda: best_tree([[0.5]], -1), "budget"),
        (lambda: top_k_candidates([0.5, 0.5], 3), "k"),
        (lambda: spectr_rho([0.5, 0.5], [1.0], 2), "p, q"),
        (lambda: tree_round_distribution(TARGET, DRAFT, (), ((),), rule="nope"), "rule"),
        (lambda: HeuristicGamma(start=0), "start"),
        (lambda: TheoryGamma(c=0.1, prior=(5, 5)), "prior"),
        (lambda: HeuristicGamma().update(drafted=2, accepted=3), "accepted"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{__import__('re').escape(name)}"):
        call()


# --- adaptive γ ---------------------------------------------------------------------------------------


def test_heuristic_gamma_follows_hugging_faces_rule():
    policy, seen = HeuristicGamma(start=3), []
    for accepted_all in [True, True, False, False, False, False, False, True]:
        policy.update(drafted=policy.gamma, accepted=policy.gamma if accepted_all else 0)
        seen.append(policy.gamma)
    assert seen == [5, 7, 6, 5, 4, 3, 2, 4]
    for _ in range(5):
        policy.update(drafted=policy.gamma, accepted=0)
    assert policy.gamma == 1


def test_theory_gamma_is_thm_3_8s_optimum_at_the_running_estimate():
    policy = TheoryGamma(c=0.2, prior=(1, 2), decay=1.0, max_gamma=20)
    for accepted in [3, 3, 1, 3]:
        policy.update(drafted=3, accepted=accepted)
    # accepted 1 + 10, checked 2 + 3 + 3 + 2 + 3 (the round with a rejection checked 2)
    assert policy.alpha == pytest.approx(11 / 13)
    assert policy.gamma == optimal_gamma(11 / 13, 0.2, 20)
    low = TheoryGamma(c=0.2, prior=(1, 10))
    assert low.gamma == 1, "negative control: at α ≈ 0.1 one draft is best"


@pytest.mark.parametrize(
    "make_policy",
    [lambda: HeuristicGamma(start=1), lambda: TheoryGamma(c=0.1, prior=(1, 2))],
    ids=["heuristic", "theory"],
)
def test_adaptive_gamma_emits_the_target_stream_exactly(make_policy):
    """Every history enumerated: each round is strict with the γ the policy holds after the rounds before it."""
    law = adaptive_stream_distribution(TARGET, DRAFT, PREFIX, LENGTH, make_policy())
    assert law == target_stream_distribution(TARGET, PREFIX, LENGTH)


def test_adaptive_gamma_enumeration_catches_a_policy_that_peeks_at_the_round():
    """Negative control: choosing γ after seeing the round (keep only rounds that accepted everything) is biased."""
    from collections import defaultdict

    from specdec_lib import round_distribution

    done, pending = defaultdict(int), [((), F(1))]
    while pending:
        stream, mass = pending.pop()
        if len(stream) >= LENGTH:
            done[stream[:LENGTH]] += mass
            continue
        law = round_distribution(TARGET, DRAFT, PREFIX + stream, 2)
        full = {e: v for e, v in law.items() if len(e) == 3}
        kept = full if full and sum(full.values()) > F(1, 2) else law  # peeks: drop the rejections
        total = sum(kept.values())
        pending += [(stream + e, mass * v / total) for e, v in kept.items()]
    assert dict(done) != target_stream_distribution(TARGET, PREFIX, LENGTH)
