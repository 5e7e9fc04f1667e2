"""The measured workload: both generators on the shipped pair, the measurement report, its JSON keys.

The statistical test uses a fixed seed; a correct generator fails it with probability at most
FALSE_FAIL_RATE over the choice of seed. Its negative control (verifying against another
temperature) must fail. Timings are checked only for structure and bookkeeping (parts add up,
predictions follow from the independent inputs); speed itself belongs to
``benchmarks/bench_measure.py``.
"""

import dataclasses
import json
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lib import improvement_factor, measure, sampling_transform, verify_greedy
from specdec_lib.corpus import ALPHABET, VOCAB_SIZE, encode
from specdec_lib.generate import autoregressive_generate, speculative_generate
from specdec_lib.measure import __main__ as command
from specdec_lib.measure import run
from specdec_lib.pair import DRAFTS, build_model_pair, load_model
from specdec_lib.stats import emitted_law_pvalues
from specdec_lib.transforms import decoding_distribution

FALSE_FAIL_RATE = 1e-3  # per test, Bonferroni over the output positions it checks
PROMPT = encode("The value of the ")
LAW_SETTINGS = {"temperature": 1.2, "top_p": 0.95}


@pytest.fixture(scope="module")
def pair():
    """The shipped target and its small transformer draft."""
    return build_model_pair()


def test_same_seed_same_text_and_rounds(pair):
    target, draft = pair
    runs = [speculative_generate(target, draft, PROMPT, 40, gamma=3, seed=s) for s in (5, 5, 6)]
    assert runs[0].tokens == runs[1].tokens != runs[2].tokens
    assert [r.accepted for r in runs[0].rounds] == [r.accepted for r in runs[1].rounds]
    plain = [autoregressive_generate(target, PROMPT, 40, seed=s).tokens for s in (5, 5)]
    assert plain[0] == plain[1]


def test_rounds_account_for_every_token_and_every_second(pair):
    target, draft = pair
    out = speculative_generate(target, draft, PROMPT, 60, gamma=4, seed=1)
    assert len(out.tokens) == 60 and set(out.text) <= set(ALPHABET) | {"\N{REPLACEMENT CHARACTER}"}
    assert sum(r.emitted for r in out.rounds) >= 60
    for r in out.rounds:
        assert r.gamma == 4 and r.emitted == r.num_accepted + 1 and len(r.accepted) <= 4
        assert all(r.accepted[:-1]) and (r.num_accepted == 4 or not r.accepted[-1])
        assert min(r.t_draft, r.t_verify, r.t_overhead) >= 0
    assert sum(r.wall for r in out.rounds) == pytest.approx(out.wall, rel=0.05)


def test_a_draft_identical_to_the_target_is_always_accepted(pair):
    target, _ = pair
    out = speculative_generate(target, target, PROMPT, 30, gamma=3, seed=0)
    assert all(r.emitted == 4 for r in out.rounds)


def test_bad_arguments_name_themselves(pair):
    target, draft = pair
    with pytest.raises(ValueError, match="gamma"):
        speculative_generate(target, draft, PROMPT, 5, gamma=0)
    with pytest.raises(ValueError, match="prompt"):
        autoregressive_generate(target, [], 5)
    with pytest.raises(ValueError, match="max_new_tokens"):
        autoregressive_generate(target, PROMPT, 0)


def _first_tokens(generate, n, **settings):
    return [generate(seed, **settings)[:3] for seed in range(n)]


def _law_pvalues(pair, emissions, **settings):
    target, _ = pair

    @cache
    def law(prefix):
        return sampling_transform(target.score(target.new_state(), prefix)[-1], **settings)

    return emitted_law_pvalues(emissions, law, prefix=tuple(PROMPT.tolist()))


def _speculative(pair, n, **settings):
    target, draft = pair
    return _first_tokens(
        lambda seed, **s: speculative_generate(target, draft, PROMPT, 3, 2, seed=seed, **s).tokens,
        n,
        **settings,
    )


def test_speculative_output_follows_the_baselines_law(pair):
    """First three tokens of 1500 speculative runs against the exact law the baseline samples from."""
    target, _ = pair
    emissions = _speculative(pair, 1500, **LAW_SETTINGS)
    assert min(_law_pvalues(pair, emissions, **LAW_SETTINGS)) > FALSE_FAIL_RATE / 3
    baseline = _first_tokens(
        lambda seed, **s: autoregressive_generate(target, PROMPT, 3, seed=seed, **s).tokens,
        1500,
        **LAW_SETTINGS,
    )
    assert min(_law_pvalues(pair, baseline, **LAW_SETTINGS)) > FALSE_FAIL_RATE / 3


def test_negative_control_verifying_at_another_temperature_fails(pair):
    emissions = _speculative(pair, 1500, **{**LAW_SETTINGS, "temperature": 0.7})
    assert min(_law_pvalues(pair, emissions, **LAW_SETTINGS)) < FALSE_FAIL_RATE / 3


TINY = measure.Workload(
    new_tokens=12,
    repeats=2,
    gammas=(1, 2),
    alpha_sequences=2,
    alpha_tokens=10,
    cost_calls=2,
    max_batch=4,
    batch_calls=1,
    roofline_repeats=1,
    roofline_max_positions=4,
    resamples=50,
)
PER_REGIME = {
    "alpha_per_prefix": float,
    "alpha_per_prefix_se": float,
    "c_single_call": float,
    "verify_ratio_curve": dict,
    "gamma": int,
    "speedup_measured": float,
    "speedup_measured_ci": list,
    "speedup_theorem38": float,
    "speedup_predicted_with_v": float,
    "gamma_selected_on_seeds": list,
    "reported_on_seeds": list,
    "verdict": dict,
    "rows": list,
}
TOP_LEVEL = {
    "models",
    "drafts",
    "regimes",
    "roofline",
    "alpha_by_temperature",
    "by_draft",
    "cost_curve",
    "batch_curve",
    "machine",
    "workload",
    "elapsed_s",
}
ROOFLINE = {"bandwidth_gb_s", "peak_gflop_s", "llc_bytes", "crossover_predicted", "crossover_measured"}


@pytest.fixture(scope="module")
def report():
    return measure.measure(TINY)


def _regimes(report):
    return [regime for regimes in report.by_draft.values() for regime in regimes.values()]


@pytest.mark.slow
def test_prediction_is_computed_from_the_independent_inputs_alone(report):
    """Thm 3.8 and its v_γ version follow from α (Cor 3.6), c (Def 3.7) and v_γ as reported, nothing else."""
    for regime in _regimes(report):
        alpha, c = regime.alpha_per_prefix, regime.c_single_call
        for row in regime.rows:
            v = regime.verify_ratio_curve[str(row.gamma)]
            assert row.speedup_theorem38 == improvement_factor(alpha, row.gamma, c)
            assert row.speedup_predicted_with_v == measure.predicted_speedup(alpha, row.gamma, c, v)
        chosen = regime.row(regime.gamma)
        assert regime.speedup_theorem38 == chosen.speedup_theorem38
        assert regime.speedup_predicted_with_v == chosen.speedup_predicted_with_v
        assert regime.c_single_call == report.cost_curve.draft_s[regime.draft] / report.cost_curve.target_s[0]


@pytest.mark.slow
def test_prediction_does_not_move_when_the_speculative_runs_do(monkeypatch, pair):
    """Book every speculative round at 1 ms, then at 3 ms: measured speedups change threefold, predictions not at all."""
    target, draft = pair
    fixed = measure.cost_curve(target, {"small": draft}, context=30, max_positions=3, calls=2)
    monkeypatch.setattr(run, "cost_curve", lambda *args, **kwargs: fixed)

    def clocked(generate, seconds_per_round):
        def run(*args, **kwargs):
            out = generate(*args, **kwargs)
            return dataclasses.replace(out, wall=seconds_per_round * len(out.rounds))

        return run

    monkeypatch.setattr(run, "autoregressive_generate", clocked(autoregressive_generate, 1e-3))
    reports = []
    for seconds in (1e-3, 3e-3):
        monkeypatch.setattr(run, "speculative_generate", clocked(speculative_generate, seconds))
        reports.append(measure.measure(TINY, target=target, drafts={"small": draft}, primary="small"))
    for a, b in zip(_regimes(reports[0]), _regimes(reports[1])):
        assert a.alpha_per_prefix == b.alpha_per_prefix and a.verify_ratio_curve == b.verify_ratio_curve
        assert [r.speedup_theorem38 for r in a.rows] == [r.speedup_theorem38 for r in b.rows]
        assert [r.speedup_predicted_with_v for r in a.rows] == [r.speedup_predicted_with_v for r in b.rows]
        for fast, slow in zip(a.rows, b.rows):  # control: the runs did reach the measured numbers
            assert slow.speedup_measured == pytest.approx(fast.speedup_measured / 3, rel=1e-12)


@pytest.mark.slow
def test_gap_factors_multiply_to_measured_over_theorem(report):
    for regime in _regimes(report):
        for row in regime.rows:
            g = row.gap
            assert g.total == pytest.approx(row.speedup_measured / row.speedup_theorem38, rel=1e-12)
            assert g.verify_cost * g.acceptance * g.overhead == pytest.approx(g.total, rel=1e-12)
            assert g.verify_cost == pytest.approx(
                row.speedup_predicted_with_v / row.speedup_theorem38, rel=1e-12
            )
            assert g.acceptance == pytest.approx(row.tokens_per_round / row.tokens_per_round_iid, rel=1e-12)
            parts = (g.round_model_share / g.round_pricing) / (g.baseline_model_share / g.baseline_pricing)
            assert parts == pytest.approx(g.overhead, rel=1e-12)
            assert (
                0 < g.round_model_share <= 1 and 0 < g.baseline_model_share <= 1
            )  # shares, never above 100 %


@given(
    alpha=st.floats(0.01, 0.99),
    gamma=st.integers(1, 12),
    c=st.floats(0, 1),
    v=st.floats(0.5, 10),
    k=st.floats(1, 13),
    round_ms=st.floats(0.1, 100),
    base_ms=st.floats(0.1, 100),
    call_ms=st.floats(0.1, 100),
    share=st.floats(0.01, 1),
)
def test_gap_factors_add_up_for_any_inputs(alpha, gamma, c, v, k, round_ms, base_ms, call_ms, share):
    g = measure.gap_factors(
        alpha, gamma, c, v, k, round_ms, base_ms, call_ms, share * round_ms, share * base_ms
    )
    assert math.log(g.verify_cost) + math.log(g.acceptance) + math.log(g.overhead) == pytest.approx(
        math.log(g.total), abs=1e-9
    )
    assert g.total == pytest.approx(k * base_ms / round_ms / improvement_factor(alpha, gamma, c), rel=1e-12)


@pytest.mark.slow
def test_gamma_is_chosen_on_one_seed_set_and_reported_on_another(report):
    for regime in _regimes(report):
        assert not set(regime.gamma_selected_on_seeds) & set(regime.reported_on_seeds)
        assert regime.gamma == max(regime.rows, key=lambda r: r.speedup_selection).gamma
        chosen = regime.row(regime.gamma)
        assert regime.speedup_measured == chosen.speedup_measured
        low, high = regime.speedup_measured_ci
        assert low <= high and len(chosen.speedup_by_repeat) == len(regime.reported_on_seeds)
    assert set(TINY.alpha_seeds).isdisjoint(TINY.selection_seeds + TINY.held_out_seeds)


@pytest.mark.slow
def test_every_prediction_gets_the_verdict_its_interval_gives(report):
    for regime in _regimes(report):
        low, high = regime.speedup_measured_ci
        for prediction, said, by in (
            (regime.speedup_theorem38, regime.verdict.theorem38, regime.verdict.theorem38_by),
            (regime.speedup_predicted_with_v, regime.verdict.with_v, regime.verdict.with_v_by),
        ):
            expected = "above" if prediction > high else "below" if prediction < low else "inside"
            assert said == expected and (by == 0) == (expected == "inside")


def test_verdict_says_which_side_and_how_far():
    assert measure.verdict(2.0, (1.0, 1.6)) == ("above", 0.25)
    assert measure.verdict(0.8, (1.0, 1.6)) == ("below", -0.2)
    assert measure.verdict(1.3, (1.0, 1.6)) == ("inside", 0.0)


def test_bootstrap_interval_brackets_the_pooled_ratio_and_collapses_without_spread():
    spec, base = [120, 100, 140, 90], [50, 50, 50, 50]
    walls = [1.0, 1.2, 0.9, 1.1]
    low, high = measure.speedup_interval(spec, walls, base, walls)
    pooled = (sum(spec) / sum(walls)) / (sum(base) / sum(walls))
    assert low < pooled < high
    assert measure.speedup_interval([100] * 4, [1.0] * 4, [50] * 4, [1.0] * 4) == pytest.approx((2.0, 2.0))


def test_alpha_per_prefix_is_one_for_a_draft_identical_to_the_target(pair):
    target, draft = pair
    texts = [np.r_[PROMPT, autoregressive_generate(target, PROMPT, 15, seed=s).tokens] for s in (0, 1, 2)]
    alpha, se, n = measure.alpha_per_prefix(target, target, texts, [len(PROMPT)] * 3)
    assert (alpha, n) == (1.0, 45) and se == pytest.approx(0, abs=1e-12)
    alpha, se, n = measure.alpha_per_prefix(target, draft, texts, [len(PROMPT)] * 3)
    assert 0 < alpha < 1 and se > 0 and n == 45  # control: a different draft is not always accepted


def test_greedy_speculative_decoding_writes_exactly_the_greedy_text(pair):
    target, draft = pair
    for seed, gamma in ((0, 2), (3, 5)):
        prompt = measure.prompt_for_seed(seed)
        plain = autoregressive_generate(target, prompt, 40, temperature=0).tokens
        assert (
            speculative_generate(
                target, draft, prompt, 40, gamma, temperature=0, verifier=verify_greedy
            ).tokens
            == plain
        )
        sampled = speculative_generate(target, draft, prompt, 40, gamma, seed=seed, temperature=1.0).tokens
        assert sampled != plain  # negative control: sampling at temperature 1 writes another text


@pytest.mark.slow
def test_command_line_prints_one_json_object_with_the_listed_keys(monkeypatch, capsys):
    monkeypatch.setitem(measure.WORKLOADS, "quick", TINY)
    assert command.main(["--quick", "--json"]) == 0
    captured = capsys.readouterr()
    assert (
        "] " in captured.err and "#" in captured.err
    )  # the progress bar goes to stderr, JSON alone to stdout
    out = json.loads(captured.out)
    assert set(out) == TOP_LEVEL and set(out["regimes"]) == {"temperature_1", "greedy"}
    assert set(out["models"]) == {"target", *DRAFTS, "unigram"} and set(out["drafts"]) == set(DRAFTS)
    assert all(set(row) == {"params", "heldout_bits_per_char"} for row in out["models"].values())
    assert all(set(row) == {"alpha", "alpha_se", "c"} for row in out["drafts"].values())
    assert set(out["roofline"]) >= ROOFLINE
    for regime in out["regimes"].values():
        for key, kind in PER_REGIME.items():
            assert isinstance(regime[key], kind), key
        assert set(regime["verdict"]) >= {"theorem38", "with_v"}
        assert {regime["verdict"]["theorem38"], regime["verdict"]["with_v"]} <= {"inside", "above", "below"}
        assert sorted(regime["verify_ratio_curve"]) == [str(g) for g in TINY.gammas]
        assert len(regime["speedup_measured_ci"]) == 2 and regime["gamma"] in TINY.gammas
    assert out["batch_curve"]["points"][0]["batch"] == 1


@pytest.mark.slow
def test_report_formats_every_draft_both_regimes_and_the_batch_curve(report):
    text = measure.format_report(report)
    assert "temperature_1" in text and "greedy" in text and "batch curve" in text and "roofline" in text
    assert all(f"{r.speedup_measured:.2f}×" in text for regime in _regimes(report) for r in regime.rows)


def test_score_batch_equals_scoring_each_sequence_alone(pair):
    target, _ = pair
    texts = [encode("the draft proposes"), encode("the target decides")]
    together = target.score_batch(target.new_state(batch=2), texts)
    for text, rows in zip(texts, together):
        np.testing.assert_allclose(rows, target.score(target.new_state(), text), atol=1e-6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: measure.gap_factors(0.8, 4, 0.05, 1.2, 3.2, -1.0, 1e-3, 1e-3, 1e-3, 1e-3), "round_s"),
        (lambda: measure.gap_factors(0.8, 4, 0.05, 0.0, 3.2, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3), "verify_ratio"),
        (lambda: measure.predicted_speedup(1.5, 4, 0.05, 1.2), "alpha"),
        (lambda: measure.speedup_interval([1, 2], [1, 1], [1], [1]), "spec_tokens"),
        (lambda: measure.alpha_per_prefix(None, None, [PROMPT], [3]), "texts"),
        (lambda: measure.prompt_for_seed(-1), "seed"),
        (lambda: measure.measure(dataclasses.replace(TINY, repeats=1)), "repeats"),
        (lambda: measure.measure(dataclasses.replace(TINY, clock="sundial")), "clock"),
    ],
)
def test_bad_measurement_inputs_name_themselves(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_model_inputs_name_themselves():
    with pytest.raises(ValueError, match="temperature"):
        decoding_distribution(np.array([0.5, 0.5]), temperature=-1)
    with pytest.raises(ValueError, match="draft"):
        build_model_pair("oracle")
    with pytest.raises(ValueError, match="primary"):
        measure.measure(TINY, drafts={"small": load_model("small")}, primary="n-gram")


def test_every_draft_speaks_the_targets_vocabulary(pair):
    target, _ = pair
    rows = [load_model(name).score(load_model(name).new_state(), PROMPT) for name in DRAFTS]
    assert all(r.shape == (len(PROMPT), VOCAB_SIZE) for r in rows)
    assert target.score(target.new_state(), PROMPT).shape == (len(PROMPT), VOCAB_SIZE)
