"""The measured workload: models and caches, both generators, the measurement report, the fixed corpus.

The statistical test uses a fixed seed; a correct generator fails it with probability at most
FALSE_FAIL_RATE over the choice of seed. Its negative control (verifying against another
temperature) must fail. Timings are checked only for structure and bookkeeping (parts add up,
predictions follow from the independent inputs); speed itself belongs to
``benchmarks/bench_measure.py``.
"""

import dataclasses
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_lib import improvement_factor, measure, sampling_transform, text_models, verify_greedy
from specdec_lib.generate import autoregressive_generate, decoding_distribution, speculative_generate
from specdec_lib.stats import emitted_law_pvalues
from specdec_lib.text_models import ALPHABET, VOCAB_SIZE, build_model_pair, corpus_text, decode, encode

ROOT = Path(__file__).resolve().parent.parent

FALSE_FAIL_RATE = 1e-3  # per test, Bonferroni over the output positions it checks
PROMPT = encode("the draft and the ")
LAW_SETTINGS = {"temperature": 1.2, "top_p": 0.95}


@pytest.fixture(scope="module")
def pair():
    """The course's pair with a 2-layer target: same knowledge and code, cheap enough for tests."""
    return build_model_pair(target_layers=2)


def test_vocabulary_is_shared_and_large_enough(pair):
    target, draft = pair
    assert VOCAB_SIZE == len(ALPHABET) >= 32
    assert (
        target.score(target.new_state(), PROMPT).shape[1]
        == draft.score(draft.new_state(), PROMPT).shape[1]
        == VOCAB_SIZE
    )


def test_next_token_law_depends_on_the_prefix(pair):
    target, _ = pair
    after_tar, after_dra = (
        target.score(target.new_state(), encode(text))[-1] for text in ("the tar", "the dra")
    )
    assert ALPHABET[after_tar.argmax()] == "g" and ALPHABET[after_dra.argmax()] == "f"


def test_one_call_on_many_positions_equals_one_call_per_position(pair):
    target, _ = pair
    tokens = encode("verification keeps the target's law exactly, at every position of the text")
    batched = target.score(target.new_state(), tokens)
    state = target.new_state()
    stepwise = np.array([target.score(state, [t])[0] for t in tokens])
    np.testing.assert_allclose(batched, stepwise, atol=1e-6)


def test_rollback_forgets_rejected_tokens(pair):
    target, _ = pair
    state = target.new_state()
    target.score(state, PROMPT)
    target.score(state, encode("zzqx"))  # a rejected branch, written into the cache
    state.rollback(len(PROMPT))
    assert state.tokens == PROMPT.tolist()
    after = target.score(state, encode("model"))
    fresh = target.score(target.new_state(), np.r_[PROMPT, encode("model")])[len(PROMPT) :]
    np.testing.assert_allclose(after, fresh, atol=1e-6)
    with pytest.raises(ValueError, match="length"):
        state.rollback(state.length + 1)


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
    assert len(out.tokens) == 60 and set(out.text) <= set(ALPHABET)
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
    resamples=50,
)
TOP_LEVEL = {
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
}


@pytest.fixture(scope="module")
def report(pair):
    return measure.measure(TINY, models=pair)


def _regimes(report):
    return (report, report.greedy)


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
    assert report.c_single_call == report.cost_curve.draft_s / report.cost_curve.target_s[0]


def test_prediction_does_not_move_when_the_speculative_runs_do(monkeypatch, pair):
    """Book every speculative round at 1 ms, then at 3 ms: measured speedups change threefold, predictions not at all."""
    fixed = measure.cost_curve(*pair, max_positions=3, calls=2)
    monkeypatch.setattr(measure, "cost_curve", lambda *args, **kwargs: fixed)

    def clocked(generate, seconds_per_round):
        def run(*args, **kwargs):
            out = generate(*args, **kwargs)
            return dataclasses.replace(out, wall=seconds_per_round * len(out.rounds))

        return run

    monkeypatch.setattr(measure, "autoregressive_generate", clocked(autoregressive_generate, 1e-3))
    reports = []
    for seconds in (1e-3, 3e-3):
        monkeypatch.setattr(measure, "speculative_generate", clocked(speculative_generate, seconds))
        reports.append(measure.measure(TINY, models=pair))
    for a, b in zip(_regimes(reports[0]), _regimes(reports[1])):
        assert a.alpha_per_prefix == b.alpha_per_prefix and a.verify_ratio_curve == b.verify_ratio_curve
        assert [r.speedup_theorem38 for r in a.rows] == [r.speedup_theorem38 for r in b.rows]
        assert [r.speedup_predicted_with_v for r in a.rows] == [r.speedup_predicted_with_v for r in b.rows]
        for fast, slow in zip(a.rows, b.rows):  # control: the runs did reach the measured numbers
            assert slow.speedup_measured == pytest.approx(fast.speedup_measured / 3, rel=1e-12)


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
            assert g.round_model_share / g.baseline_model_share == pytest.approx(g.overhead, rel=1e-12)


@given(
    alpha=st.floats(0.01, 0.99),
    gamma=st.integers(1, 12),
    c=st.floats(0, 1),
    v=st.floats(0.5, 10),
    k=st.floats(1, 13),
    round_ms=st.floats(0.1, 100),
    base_ms=st.floats(0.1, 100),
    call_ms=st.floats(0.1, 100),
)
def test_gap_factors_add_up_for_any_inputs(alpha, gamma, c, v, k, round_ms, base_ms, call_ms):
    g = measure.gap_factors(alpha, gamma, c, v, k, round_ms, base_ms, call_ms)
    assert math.log(g.verify_cost) + math.log(g.acceptance) + math.log(g.overhead) == pytest.approx(
        math.log(g.total), abs=1e-9
    )
    assert g.total == pytest.approx(k * base_ms / round_ms / improvement_factor(alpha, gamma, c), rel=1e-12)


def test_gamma_is_chosen_on_one_seed_set_and_reported_on_another(report):
    for regime in _regimes(report):
        assert not set(regime.gamma_selected_on_seeds) & set(regime.reported_on_seeds)
        assert regime.gamma == max(regime.rows, key=lambda r: r.speedup_selection).gamma
        chosen = regime.row(regime.gamma)
        assert regime.speedup_measured == chosen.speedup_measured
        low, high = regime.speedup_measured_ci
        assert low <= high and len(chosen.speedup_by_repeat) == len(regime.reported_on_seeds)
    assert set(TINY.alpha_seeds).isdisjoint(TINY.selection_seeds + TINY.held_out_seeds)


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


def test_command_line_prints_one_json_object_with_the_listed_keys(monkeypatch, capsys, pair):
    monkeypatch.setitem(measure.WORKLOADS, "quick", TINY)
    monkeypatch.setattr(measure, "build_model_pair", lambda: pair)
    assert measure.main(["--quick", "--json"]) == 0
    captured = capsys.readouterr()
    assert (
        "] " in captured.err and "#" in captured.err
    )  # the progress bar goes to stderr, JSON alone to stdout
    out = json.loads(captured.out)
    for regime in (out, out["greedy"]):
        for key, kind in TOP_LEVEL.items():
            assert isinstance(regime[key], kind), key
        assert sorted(regime["verify_ratio_curve"]) == [str(g) for g in TINY.gammas]
        assert len(regime["speedup_measured_ci"]) == 2 and regime["gamma"] in TINY.gammas
    assert out["batch_curve"]["points"][0]["batch"] == 1
    assert set(out) - set(out["greedy"]) == {
        "greedy",
        "batch_curve",
        "cost_curve",
        "machine",
        "workload",
        "elapsed_s",
    }


def test_report_formats_both_regimes_and_the_batch_curve(report):
    text = measure.format_report(report)
    assert "temperature 1" in text and "greedy" in text and "batch curve" in text
    assert all(f"{r.speedup_measured:.2f}×" in text for r in report.rows)


def test_score_batch_equals_scoring_each_sequence_alone(pair):
    target, _ = pair
    texts = [encode("the draft proposes"), encode("the target decides")]
    together = target.score_batch(target.new_state(batch=2), texts)
    for text, rows in zip(texts, together):
        np.testing.assert_allclose(rows, target.score(target.new_state(), text), atol=1e-6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: measure.gap_factors(0.8, 4, 0.05, 1.2, 3.2, -1.0, 1e-3, 1e-3), "round_s"),
        (lambda: measure.gap_factors(0.8, 4, 0.05, 0.0, 3.2, 1e-3, 1e-3, 1e-3), "verify_ratio"),
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


def test_bad_model_inputs_name_themselves(pair):
    target, _ = pair
    with pytest.raises(ValueError, match="tokens"):
        target.score_batch(target.new_state(batch=2), [encode("ab")])
    with pytest.raises(ValueError, match="tokens"):
        _ = target.new_state(batch=2).tokens
    with pytest.raises(ValueError, match="temperature"):
        decoding_distribution(np.array([0.5, 0.5]), temperature=-1)


# --- the corpus: fixed, shipped, and independent of the book ---------------------------------------

FINGERPRINT = """
import hashlib, sys
import numpy as np
from specdec_lib.text_models import build_model_pair, encode
target, draft = build_model_pair(target_layers=2)
text = encode("verification keeps the target's law. the draft proposes and the target decides")
rows = [m.score(m.new_state(), text) for m in (target, draft)]
print(hashlib.sha256(b"".join(np.round(r, 10).tobytes() for r in rows)).hexdigest())
"""


def _fingerprint(cwd, pythonpath):
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    result = subprocess.run(
        [sys.executable, "-c", FINGERPRINT], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_editing_a_book_file_leaves_the_models_unchanged(tmp_path):
    """A copy of the package next to a book whose chapters say something else builds the same models."""
    shutil.copytree(
        ROOT / "specdec_lib", tmp_path / "specdec_lib", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("_static", "_build"))
    for chapter in (tmp_path / "book").glob("*.ipynb"):
        chapter.write_text(chapter.read_text(encoding="utf-8").replace("the", "zzq"), encoding="utf-8")
    (tmp_path / "README.md").write_text("qqq " * 1000, encoding="utf-8")
    assert _fingerprint(tmp_path, tmp_path) == _fingerprint(ROOT, ROOT)
    (tmp_path / "specdec_lib" / "data" / "corpus.txt").write_text("another text " * 200, encoding="utf-8")
    broken = subprocess.run(
        [sys.executable, "-c", FINGERPRINT],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert broken.returncode != 0 and "corpus" in broken.stderr  # control: the corpus itself is pinned


def test_models_depend_on_the_text_they_are_fitted_to():
    """Negative control for the fingerprint: another text gives other next-token laws."""
    text = encode("the draft and the target")
    shipped, other = (
        build_model_pair(target_layers=2),
        build_model_pair("another text entirely. " * 50, target_layers=2),
    )
    assert not np.allclose(
        shipped[0].score(shipped[0].new_state(), text), other[0].score(other[0].new_state(), text)
    )


def test_corpus_is_the_frozen_snapshot(monkeypatch):
    assert hashlib.sha256(corpus_text().encode()).hexdigest() == text_models.CORPUS_SHA256
    monkeypatch.setattr(text_models, "CORPUS_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="corpus"):
        corpus_text()


def test_decode_inverts_encode_on_clean_text():
    assert (
        decode(encode("The target verifies (gamma + 1) positions: 0.6, then 0.3."))
        == "the target verifies (gamma 1) positions: 0.6, then 0.3."
    )
