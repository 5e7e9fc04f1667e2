"""Greedy speculative output can part from plain greedy output in float32: sums in another order flip near-ties."""

import numpy as np

from specdec_lib.float_order import find_order_flip, logits_both_ways


def _weights_and_states(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((256, 500), dtype=np.float32) / 16, rng.standard_normal(
        (2, 256), dtype=np.float32
    )


def test_blocked_and_one_row_scoring_differ_in_the_last_bits_only():
    weights, _ = _weights_and_states(0)
    hidden = np.random.default_rng(1).standard_normal((64, 256), dtype=np.float32)
    blocked, alone = logits_both_ways(hidden, weights)
    assert (blocked != alone).mean() > 0.1  # most logits differ in their last bits ...
    assert np.abs(blocked - alone).max() < 1e-4  # ... by round-off only


def test_a_near_tie_on_the_way_between_two_states_flips_the_greedy_token():
    weights, (a, b) = _weights_and_states(2)
    flip = find_order_flip(weights, a, b)
    assert flip is not None and flip.blocked_token != flip.alone_token
    assert (
        abs(flip.gap) <= 2 * flip.max_difference < 1e-4
    )  # a tie at float32 resolution, not a real preference


def test_negative_control_blocks_of_one_row_never_flip():
    weights, (a, b) = _weights_and_states(2)
    assert find_order_flip(weights, a, b, rows=1) is None


def test_trained_target_scored_in_blocks_and_alone_differs_by_round_off_only():
    from specdec_lib import build_model_pair
    from specdec_lib.float_order import scored_both_ways
    from specdec_lib.measure import prompt_for_seed

    target, _ = build_model_pair()
    blocked, alone = scored_both_ways(target, prompt_for_seed(0), rows=4)
    assert (blocked != alone).any()  # another summation order: other last bits ...
    assert np.abs(blocked - alone).max() < 1e-4  # ... and nothing more
