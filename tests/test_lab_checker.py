"""The verifier checker: it passes the correct verifier and rejects every planted bug with a reason.

``check_verifier`` states its false-fail rate (1e-6 for a correct verifier, over the seed);
each planted bug is a negative control that must fail with the default seed and settings.
"""

import pytest

from specdec_lib import VerifierReport, check_verifier, verify, verify_greedy
from specdec_lib.broken_verifiers import BROKEN_VERIFIERS

pytestmark = pytest.mark.slow  # every test runs check_verifier: thousands of rounds each


def test_checker_passes_the_correct_verifier():
    report = check_verifier(verify)
    assert isinstance(report, VerifierReport)
    assert report.passed, report.summary
    assert report.summary.startswith("PASS") and not report.problems
    assert len(report.pvalues) == 14 and report.threshold == pytest.approx(1e-6 / 14)  # every position and K


EXPECTED_REASON = {
    "correction_from_target": "repeats the rejected draft",
    "residual_reversed": "repeats the rejected draft",
    "always_accept": "position 0: emitted tokens do not follow the target",
    "ratio_inverted": "repeats the rejected draft",
    "no_bonus": "no bonus token",
    "bonus_from_wrong_row": "position 3: emitted tokens do not follow the target",
    "temperature_mismatch": "do not follow the target",
    "keeps_drafts_after_rejection": "tokens after a correction",
}


def test_every_planted_bug_has_an_expected_reason():
    assert set(EXPECTED_REASON) == set(BROKEN_VERIFIERS)


@pytest.fixture(scope="module")
def bug_reports():
    return {name: check_verifier(verifier) for name, (verifier, _) in BROKEN_VERIFIERS.items()}


@pytest.mark.parametrize("name", sorted(BROKEN_VERIFIERS))
def test_checker_rejects_planted_bug(name, bug_reports):
    report = bug_reports[name]
    assert not report.passed
    assert report.summary.startswith("FAIL") and EXPECTED_REASON[name] in report.summary, report.summary
    assert len(BROKEN_VERIFIERS[name][1]) > 40  # a description of the real-world mistake


@pytest.mark.parametrize(
    "name", ["correction_from_target", "residual_reversed", "ratio_inverted", "no_bonus"]
)
def test_structural_bugs_also_fail_the_chi_square_tests(name, bug_reports):
    assert min(bug_reports[name].pvalues.values()) < bug_reports[name].threshold


def test_greedy_checker_passes_greedy_verification_and_rejects_sampling():
    assert check_verifier(verify_greedy, greedy=True, n_rounds=500).passed
    assert not check_verifier(verify, greedy=True, n_rounds=500).passed
    wrong = check_verifier(verify_greedy, n_rounds=500)
    assert not wrong.passed and "do not follow the target" in wrong.summary


def test_verifier_returning_plain_token_ids_is_accepted():
    assert check_verifier(lambda d, p, q, rng: list(verify(d, p, q, rng).tokens), n_rounds=500).passed


def test_crashing_verifier_fails_with_the_exception():
    def crashes(draft_tokens, target_probs, draft_probs, rng=None):
        raise ZeroDivisionError("p == q")

    report = check_verifier(crashes, n_rounds=10)
    assert not report.passed and "raised ZeroDivisionError: p == q" in report.summary


def test_verifier_returning_nothing_fails_with_a_reason():
    report = check_verifier(lambda draft_tokens, target_probs, draft_probs, rng=None: None, n_rounds=10)
    assert not report.passed
    assert "neither a VerifiedRound nor a sequence of token ids" in report.summary


def test_same_seed_same_report():
    assert check_verifier(verify, n_rounds=300, seed=3) == check_verifier(verify, n_rounds=300, seed=3)


@pytest.mark.parametrize(
    "kwargs, name", [(dict(verify_fn=None), "verify_fn"), (dict(verify_fn=verify, n_rounds=0), "n_rounds")]
)
def test_bad_inputs_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        check_verifier(**kwargs)


def test_verifier_that_writes_into_its_inputs_fails():
    def normalises_in_place(draft_tokens, target_probs, draft_probs, rng=None):
        target_probs[0] /= target_probs[0].sum()
        return verify(draft_tokens, target_probs, draft_probs, rng)

    report = check_verifier(normalises_in_place, n_rounds=10)
    assert not report.passed and "read-only" in report.summary
