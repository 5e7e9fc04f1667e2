"""Exact stream laws: repeated speculative rounds emit the target's stream, checked in Fractions."""

import re
from fractions import Fraction as F

import pytest
from conftest import TOY_P_EXACT, TOY_Q_EXACT
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_lib import (
    exact_stream_distribution,
    output_count_pmf,
    round_distribution,
    target_stream_distribution,
    toy_model_pair,
)

TARGET, DRAFT = toy_model_pair()


@pytest.mark.parametrize("gamma", [0, 1, 2, 3])
@pytest.mark.parametrize("length", [1, 2, 4])
def test_speculative_stream_law_is_the_target_stream_law(gamma, length):
    for prefix in [(), (1,), (2, 0)]:
        speculative = exact_stream_distribution(TARGET, DRAFT, prefix, gamma, length)
        assert speculative == target_stream_distribution(TARGET, prefix, length)


def test_draft_equal_to_target_gives_the_target_stream():
    assert exact_stream_distribution(TARGET, TARGET, (0,), 2, 4) == target_stream_distribution(
        TARGET, (0,), 4
    )


def test_negative_control_stream_law_differs_from_the_drafts():
    assert exact_stream_distribution(TARGET, DRAFT, (1,), 2, 3) != target_stream_distribution(DRAFT, (1,), 3)


def test_stream_laws_sum_to_one_and_omit_impossible_streams():
    law = target_stream_distribution(TARGET, (1,), 3)
    assert sum(law.values()) == 1
    assert all(v > 0 for v in law.values())
    assert (2, 0, 0) not in law  # the target never emits 0 right after 2 at an even length
    assert target_stream_distribution(TARGET, (1,), 0) == {(): 1}


def test_round_K_law_is_truncated_geometric_when_rows_do_not_depend_on_the_prefix():
    law = round_distribution(lambda prefix: TOY_P_EXACT, lambda prefix: TOY_Q_EXACT, (), 3)
    k_law = [sum(v for tokens, v in law.items() if len(tokens) == k) for k in range(1, 5)]
    assert k_law == output_count_pmf(F(3, 5), 3)


def test_one_hot_draft_correction_is_the_target_without_the_draft_token():
    p = TOY_P_EXACT
    law = round_distribution(lambda prefix: p, lambda prefix: [F(0), F(1), F(0)], (), 1)
    assert {t: v for t, v in law.items() if len(t) == 1} == {(0,): p[0], (2,): p[2]}
    assert sum(v for t, v in law.items() if len(t) == 2) == p[1]  # accepted with probability p(1)


def test_float_models_agree_with_exact_models():
    ft, fd = toy_model_pair(exact=False)
    exact = target_stream_distribution(TARGET, (1,), 3)
    floats = exact_stream_distribution(ft, fd, (1,), 2, 3)
    assert set(floats) == set(exact)
    assert max(abs(floats[k] - float(v)) for k, v in exact.items()) < 1e-12


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: target_stream_distribution("not a model", (), 2), "target"),
        (lambda: target_stream_distribution(TARGET, (), -1), "length"),
        (lambda: target_stream_distribution(TARGET, (0, -1), 1), "prefix[1]"),
        (lambda: target_stream_distribution(TARGET, 5, 1), "prefix"),
        (lambda: exact_stream_distribution(TARGET, DRAFT, (), -1, 2), "gamma"),
        (lambda: exact_stream_distribution(TARGET, lambda prefix: [F(1, 2)] * 2, (), 1, 2), "target, draft"),
        (lambda: exact_stream_distribution(TARGET, lambda prefix: [F(1, 2)] * 3, (), 1, 2), "draft(())"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match="^" + re.escape(name)):
        call()


def _model(table):
    """A prefix-dependent rational model: the row is picked by the last token and the length's parity."""
    laws = [[F(w, sum(r)) for w in r] for r in table]
    return lambda prefix: laws[((prefix[-1] if prefix else 0) + len(prefix)) % len(laws)]


@settings(max_examples=25, deadline=None)
@given(vocab=st.integers(2, 3), data=st.data(), gamma=st.integers(1, 2), length=st.integers(1, 3))
def test_theorem_holds_for_random_rational_models(vocab, data, gamma, length):
    weights = st.lists(st.integers(0, 4), min_size=vocab, max_size=vocab).filter(any)
    target = _model(data.draw(st.lists(weights, min_size=1, max_size=3)))
    draft = _model(data.draw(st.lists(weights, min_size=1, max_size=3)))
    assert exact_stream_distribution(target, draft, (0,), gamma, length) == target_stream_distribution(
        target, (0,), length
    )
