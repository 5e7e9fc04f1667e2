"""The tree-decoding loop emits the target's stream under every exact rule, and a lossy or planted one is caught.

Seeded chi-square tests of the first three tokens against the exact stream law of the toy target; each
exact rule must pass at a false-fail rate of 1e-6 and each negative control must fail at the same level."""

from functools import partial

import numpy as np
import pytest

from specdec_lib import target_stream_distribution, toy_model_pair, verify_block, verify_typical
from specdec_lib.adaptive_gamma import HeuristicGamma, TheoryGamma
from specdec_lib.broken_verifiers import _SPECTR_SHORT, _TOP_K_LATE
from specdec_lib.stats import chi_square_pvalue
from specdec_lib.tree_decoding import PathModel, tree_generate
from specdec_lib.trees import tree_shape

EXACT_TARGET, _ = toy_model_pair()
FLOAT_TARGET, FLOAT_DRAFT = toy_model_pair(exact=False)
PROMPT, LENGTH, RUNS = (1,), 3, 3000


def stream_pvalue(**kwargs):
    law = target_stream_distribution(EXACT_TARGET, PROMPT, LENGTH)
    outcomes = sorted(law)
    counts = dict.fromkeys(outcomes, 0)
    target, draft = PathModel(FLOAT_TARGET), PathModel(FLOAT_DRAFT)
    for seed in range(RUNS):
        run = tree_generate(target, draft, PROMPT, LENGTH, seed=seed, **_fresh(kwargs))
        if run.tokens not in counts:
            return 0.0
        counts[run.tokens] += 1
    return chi_square_pvalue([counts[o] for o in outcomes], [float(law[o]) for o in outcomes])


def _fresh(kwargs):
    """A new policy per run (policies learn), everything else as given."""
    out = dict(kwargs)
    if "make_policy" in out:
        out["policy"] = out.pop("make_policy")()
    return out


EXACT = {
    "plain decoding": {"shape": ()},
    "strict chain": {"shape": tree_shape((1, 1))},
    "SpecInfer tree": {"shape": tree_shape((2, 1))},
    "SpecTr tree": {"shape": tree_shape((3, 1)), "rule": "spectr"},
    "top-k tree": {"shape": tree_shape((2, 2)), "rule": "top_k"},
    "block chain": {"shape": tree_shape((1, 1)), "verifier": verify_block},
    "heuristic γ": {"make_policy": partial(HeuristicGamma, start=1)},
    "theory γ": {"make_policy": partial(TheoryGamma, c=0.1, prior=(1, 2))},
}
CAUGHT = {
    "typical acceptance": {"shape": tree_shape((1, 1)), "verifier": verify_typical},
    "top-k renormalised late": {"shape": tree_shape((3,)), "rule": _TOP_K_LATE},
    "SpecTr residual short": {"shape": tree_shape((3, 1)), "rule": _SPECTR_SHORT},
}


@pytest.mark.parametrize("name", EXACT)
def test_exact_rules_emit_the_target_stream_through_the_loop(name):
    assert stream_pvalue(**EXACT[name]) > 1e-6


@pytest.mark.parametrize("name", CAUGHT)
def test_lossy_and_planted_rules_are_caught_through_the_loop(name):
    assert stream_pvalue(**CAUGHT[name]) < 1e-6


def test_rounds_record_rows_and_drafts():
    target, draft = PathModel(FLOAT_TARGET), PathModel(FLOAT_DRAFT)
    run = tree_generate(target, draft, PROMPT, 30, tree_shape((2, 2)), rule="top_k", seed=0)
    assert len(run.tokens) == 30
    assert all(r.rows == 7 and r.drafted == 6 and 1 <= r.emitted <= 3 for r in run.rounds)
    assert run.tokens_per_call == np.mean([r.emitted for r in run.rounds])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({}, "shape, policy"),
        ({"shape": tree_shape((2,)), "policy": HeuristicGamma()}, "shape, policy"),
        ({"shape": [()]}, "shape"),
        ({"shape": tree_shape((2,)), "verifier": verify_block}, "verifier"),
        ({"shape": (), "rule": "nope"}, "rule"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(kwargs, name):
    target, draft = PathModel(FLOAT_TARGET), PathModel(FLOAT_DRAFT)
    with pytest.raises(ValueError, match=f"^{__import__('re').escape(name)}"):
        tree_generate(target, draft, PROMPT, 5, **kwargs)
