"""The measured workload: models and caches, both generators, and the measurement report.

The statistical test uses a fixed seed; a correct generator fails it with probability at most
FALSE_FAIL_RATE over the choice of seed. Its negative control (verifying against another
temperature) must fail. Timings are checked only for structure and bookkeeping (parts add up
to the wall time); speed itself belongs to ``benchmarks/bench_measure.py``.
"""

import json
import math
from functools import lru_cache

import numpy as np
import pytest

from specdec_lib import measure, sampling_transform
from specdec_lib.generate import autoregressive_generate, speculative_generate
from specdec_lib.text_models import ALPHABET, VOCAB_SIZE, build_model_pair, decode, encode
from specdec_lib.stats import emitted_law_pvalues

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
    assert target.score(target.new_state(), PROMPT).shape[1] == draft.score(draft.new_state(), PROMPT).shape[1] == VOCAB_SIZE


def test_next_token_law_depends_on_the_prefix(pair):
    target, _ = pair
    after_tar, after_dra = (target.score(target.new_state(), encode(text))[-1] for text in ("the tar", "the dra"))
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
    fresh = target.score(target.new_state(), np.r_[PROMPT, encode("model")])[len(PROMPT):]
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

    @lru_cache(maxsize=None)
    def law(prefix):
        return sampling_transform(target.score(target.new_state(), prefix)[-1], **settings)

    return emitted_law_pvalues(emissions, law, prefix=tuple(PROMPT.tolist()))


def _speculative(pair, n, **settings):
    target, draft = pair
    return _first_tokens(lambda seed, **s: speculative_generate(target, draft, PROMPT, 3, 2, seed=seed, **s).tokens,
                         n, **settings)


def test_speculative_output_follows_the_baselines_law(pair):
    """First three tokens of 1500 speculative runs against the exact law the baseline samples from."""
    target, _ = pair
    emissions = _speculative(pair, 1500, **LAW_SETTINGS)
    assert min(_law_pvalues(pair, emissions, **LAW_SETTINGS)) > FALSE_FAIL_RATE / 3
    baseline = _first_tokens(lambda seed, **s: autoregressive_generate(target, PROMPT, 3, seed=seed, **s).tokens,
                             1500, **LAW_SETTINGS)
    assert min(_law_pvalues(pair, baseline, **LAW_SETTINGS)) > FALSE_FAIL_RATE / 3


def test_negative_control_verifying_at_another_temperature_fails(pair):
    emissions = _speculative(pair, 1500, **{**LAW_SETTINGS, "temperature": 0.7})
    assert min(_law_pvalues(pair, emissions, **LAW_SETTINGS)) < FALSE_FAIL_RATE / 3


TINY = measure.Workload(new_tokens=12, repeats=2, gammas=(1, 2), cost_calls=2)
REQUIRED = {"machine": dict, "gamma": int, "alpha": float, "acceptance_by_position": list, "c": float,
            "t_draft_per_round": float, "t_verify_per_round": float, "t_overhead_per_round": float,
            "wall_per_round": float, "baseline_tokens_per_s": float, "speculative_tokens_per_s": float,
            "speedup_measured": float, "speedup_predicted": float, "sweep": list}


def _check_report(report, gammas):
    for key, kind in REQUIRED.items():
        assert isinstance(report[key], kind), key
    assert [s["gamma"] for s in report["sweep"]] == list(gammas)
    for s in report["sweep"]:
        assert 0 <= s["alpha"] <= 1 and len(s["acceptance_by_position"]) == s["gamma"]
        assert all(math.isfinite(s[k]) and s[k] > 0 for k in ("c", "speedup_measured", "speedup_predicted", "wall_per_round"))
        assert s["parts_over_wall"] == pytest.approx(1, abs=0.05)
        assert sum(s["emitted_counts"]) > 0
    assert report["gamma"] in gammas and len(report["target_cost_curve"]["seconds"]) == 9


def test_measure_reports_every_key_with_its_type(pair):
    report = measure.measure(TINY, models=pair)
    _check_report(report, TINY.gammas)
    best = max(report["sweep"], key=lambda s: s["speedup_measured"])
    assert report["speedup_measured"] == best["speedup_measured"]
    assert "best measured" in measure.format_report(report)


def test_command_line_prints_one_json_object(monkeypatch, capsys, pair):
    monkeypatch.setitem(measure.WORKLOADS, "quick", TINY)
    monkeypatch.setattr(measure, "build_model_pair", lambda: pair)
    assert measure.main(["--quick", "--json"]) == 0
    _check_report(json.loads(capsys.readouterr().out), TINY.gammas)


def test_decode_inverts_encode_on_clean_text():
    assert decode(encode("The target verifies (gamma + 1) positions: 0.6, then 0.3.")) == \
        "the target verifies (gamma 1) positions: 0.6, then 0.3."
