"""Is a verifier exact? A structural contract plus chi-square tests of everything it emits.

``check_verifier`` drives a candidate verifier (``verify``'s signature) through rounds
drafted from small prefix-dependent models, checks each round's shape, then tests the
emitted token at every position and the number of tokens per round against their laws
under correct verification.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from . import _validate
from ._types import Model, Prefix, Rule
from .greedy import argmax_distribution
from .sampling import InverseCdf
from .stats import emitted_count_pvalue, emitted_law_pvalues
from .streams import round_distribution
from .toy_models import toy_model_pair

FALSE_FAIL_RATE = 1e-6  # probability that a correct verifier fails, over the choice of seed
SUPPORT_FLOOR = 1e-12  # a float probability this small counts as 0 when checking a rule's support


@dataclass(frozen=True)
class VerifierReport:
    """What ``check_verifier`` found.

    ``passed``: every check passed. ``summary``: one human-readable line; on failure it
    names the first problem. ``problems``: every failed check, one line each.
    ``pvalues``: test name -> p-value. ``threshold``: the per-test p-value threshold.

    >>> from specdec_lib import verify
    >>> report = check_verifier(verify, n_rounds=200)
    >>> str(report) == report.summary, round(report.threshold * 14, 12)
    (True, 1e-06)
    """

    passed: bool
    summary: str
    problems: tuple[str, ...]
    pvalues: dict[str, float]
    threshold: float

    def __str__(self) -> str:
        return self.summary


@dataclass(frozen=True)
class _Scenario:
    name: str
    target: Model  # float rows
    draft: Model
    prefix: Prefix
    gamma: int


def _scenarios() -> tuple[_Scenario, ...]:
    target, draft = toy_model_pair(exact=False)
    return (
        _Scenario("prefix-dependent draft", target, draft, (1,), 3),
        _Scenario("one-hot draft", target, _argmax_model(draft), (1,), 3),
        _Scenario("draft equals target", target, target, (0,), 2),
    )


def _structure_problem(
    out: Any, drafts: list[int], gamma: int, vocab: int, verdict: dict[Prefix, Any] | None = None
) -> tuple[Prefix | None, str | None]:
    """(emitted tokens or None, why the round breaks the contract or None).

    ``verdict``: the rule's exact distribution of emitted tuples given these drafts, when the
    verifier is not strict; the round must then be one the rule can emit.
    """
    try:
        tokens = tuple(out.tokens) if hasattr(out, "tokens") else tuple(out)
    except TypeError:
        return None, f"returned {out!r}, which is neither a VerifiedRound nor a sequence of token ids"
    if not all(isinstance(t, (int, np.integer)) and 0 <= t < vocab for t in tokens):
        return None, f"emitted {tokens}, which are not all token ids in 0..{vocab - 1}"
    tokens = tuple(int(t) for t in tokens)
    k, seen = len(tokens), f"emitted {tokens} for drafts {tuple(drafts)}: "
    if not 1 <= k <= gamma + 1:
        return tokens, seen + f"{k} tokens, but a round emits 1..γ+1 = 1..{gamma + 1}"
    if tokens[:-1] != tuple(drafts[: k - 1]):
        return tokens, seen + "tokens after a correction (only accepted drafts plus one token may be emitted)"
    if verdict is not None:
        if verdict.get(tokens, 0) <= SUPPORT_FLOOR:
            return tokens, seen + "a round the rule's own emitted_distribution gives probability 0"
    elif k <= gamma and tokens[-1] == drafts[k - 1]:
        repeated = "the correction repeats the rejected draft, which a correction from [p − q]+ never does"
        if not hasattr(out, "num_accepted"):
            return (
                tokens,
                seen + f"the last token equals its draft: either {repeated}, or the bonus is missing",
            )
        if out.num_accepted == k:
            return tokens, seen + (
                "no bonus token after all γ drafts were accepted"
                if k == gamma
                else "nothing after the last accepted draft"
            )
        return tokens, seen + repeated
    if hasattr(out, "num_accepted") and (out.num_accepted != k - 1 or bool(out.bonus) != (k == gamma + 1)):
        return tokens, seen + f"but it reports num_accepted={out.num_accepted}, bonus={out.bonus}"
    return tokens, None


def _draft_paths(
    draft: Callable[[Prefix], np.ndarray], prefix: Prefix, gamma: int, n_rounds: int, rng: np.random.Generator
) -> list[list[int]]:
    """Every round's γ drafts at once: position by position, rounds grouped by their drafts so far."""
    paths = np.zeros((n_rounds, gamma), dtype=int)
    for i in range(gamma):
        contexts, group = np.unique(paths[:, :i], axis=0, return_inverse=True)
        rows = np.array([draft(prefix + tuple(context.tolist())) for context in contexts])
        paths[:, i] = InverseCdf(rows).sample(group.ravel(), rng.random(n_rounds))
    return paths.tolist()


def _memoised(model: Model) -> Callable[[Prefix], np.ndarray]:
    """``model`` returning read-only float arrays (shared between rounds), each prefix computed once."""

    @cache
    def rows(prefix: Prefix) -> np.ndarray:
        row = np.array(model(prefix), dtype=float)
        row.flags.writeable = False
        return row

    return rows


def _run(
    verify_fn: Callable[..., Any],
    scenario: _Scenario,
    n_rounds: int,
    rng: np.random.Generator,
    emitted_distribution: Rule | None = None,
) -> tuple[list[Prefix], list[str], str | None]:
    """Draft and verify ``n_rounds`` rounds: (emissions with valid ids, contract violations, crash or None)."""
    target, draft = _memoised(scenario.target), _memoised(scenario.draft)
    prefix, gamma = scenario.prefix, scenario.gamma
    vocab = len(target(prefix))
    emissions: list[Prefix] = []
    violations: list[str] = []
    verdicts: dict[Prefix, dict[Prefix, Any]] = {}
    for drafts in _draft_paths(draft, prefix, gamma, n_rounds, rng):
        p_rows = [target(prefix + tuple(drafts[:i])) for i in range(gamma + 1)]
        q_rows = [draft(prefix + tuple(drafts[:i])) for i in range(gamma)]
        try:
            out = verify_fn(drafts, p_rows, q_rows, rng)
        except Exception as exc:  # a crashing verifier is a finding, not a checker error
            return emissions, violations, f"raised {type(exc).__name__}: {exc}"
        verdict = None
        if emitted_distribution is not None:
            key = tuple(drafts)
            if key not in verdicts:
                verdicts[key] = emitted_distribution(drafts, p_rows, q_rows)
            verdict = verdicts[key]
        tokens, problem = _structure_problem(out, drafts, gamma, vocab, verdict)
        if problem:
            violations.append(problem)
        if tokens is not None:
            emissions.append(tokens)
    return emissions, violations, None


def _check_scenario(
    verify_fn: Callable[..., Any],
    scenario: _Scenario,
    n_rounds: int,
    rng: np.random.Generator,
    greedy: bool,
    threshold: float,
    emitted_distribution: Rule | None,
) -> tuple[list[str], dict[str, float]]:
    """Problems found and p-values computed in one scenario."""
    emissions, violations, crash = _run(verify_fn, scenario, n_rounds, rng, emitted_distribution)
    problems: list[str] = []
    pvalues: dict[str, float] = {}
    if crash:
        problems.append(f"{scenario.name}: {crash}")
    if violations:
        problems.append(
            f"{scenario.name}: structure broken in {len(violations)} of {n_rounds} rounds; "
            f"first: {violations[0]}"
        )
    if not emissions:
        return problems, pvalues
    expected = _argmax_model(scenario.target) if greedy else scenario.target
    law = "the target's argmax" if greedy else "the target"
    for j, pvalue in enumerate(emitted_law_pvalues(emissions, expected, scenario.prefix)):
        pvalues[f"{scenario.name}: position {j}"] = pvalue
        if pvalue < threshold:
            problems.append(
                f"{scenario.name}: position {j}: emitted tokens do not follow {law} "
                f"given the tokens before them (p = {pvalue:.1e})"
            )
    count_law = _count_law(expected, scenario, emitted_distribution)
    pvalue = pvalues[f"{scenario.name}: K"] = emitted_count_pvalue(emissions, count_law)
    if pvalue < threshold:
        mean_k = float(np.mean([len(t) for t in emissions]))
        expected_k = float(np.dot(np.arange(1, len(count_law) + 1), count_law))
        problems.append(
            f"{scenario.name}: K, the number of tokens per round, does not follow its distribution "
            f"(mean {mean_k:.2f}, expected {expected_k:.2f}; p = {pvalue:.1e})"
        )
    return problems, pvalues


def check_verifier(
    verify_fn: Callable[..., Any],
    *,
    seed: int = 0,
    n_rounds: int = 2000,
    greedy: bool = False,
    emitted_distribution: Rule | None = None,
) -> VerifierReport:
    r"""Check that ``verify_fn`` verifies exactly: structure, per-position laws and the K law.

    ``verify_fn(draft_tokens, target_probs, draft_probs, rng)`` has ``verify``'s signature
    and returns a ``VerifiedRound`` or a sequence of token ids. It is run for ``n_rounds``
    rounds in each of three scenarios over the 3-token toy models (``toy_model_pair``):
    a prefix-dependent draft with γ = 3, a one-hot (deterministic) draft with γ = 3, and
    a draft equal to the target with γ = 2 (nothing may ever be rejected).

    Checks: (1) the contract of every round: 1..γ+1 tokens, all but the last equal to
    the drafts, the last one a correction (never the rejected draft itself) or the bonus
    after γ accepted drafts; a raised exception also fails. (2) Chi-square tests
    (``specdec_lib.stats``): for every output position j, token j given the tokens before
    it follows the target :math:`p(\cdot \mid \text{prefix}, x_{<j})`; and K, the number
    of tokens per round, follows its exact law under correct verification
    (``round_distribution``). With ``greedy=True`` the expected law is the target's
    argmax (``verify_greedy``'s contract) instead of the target.

    Another verification rule (block, typical, lenient: ``specdec_lib.variants``) emits K with
    its own law and may end a round on the rejected draft's token. Pass its exact
    ``emitted_distribution(drafts, target_rows, draft_rows)``: K is then tested against the
    law that rule implies (``round_distribution(..., emitted_distribution=...)``), and the
    "correction never repeats the draft" check becomes "every round is one the rule can emit".
    The per-position tests still ask for the target: only an exact rule passes.

    False-fail rate: a correct verifier fails with probability at most 1e-6 (over the
    seed): each of the m chi-square tests must reach p < 1e-6/m to fail (Bonferroni;
    bins expected to hold fewer than 5 rounds are pooled so the chi-square
    approximation holds). Structural checks never fail a correct verifier.

    >>> from specdec_lib import verify
    >>> report = check_verifier(verify, n_rounds=500)
    >>> report.passed
    True
    >>> from specdec_lib.broken_verifiers import BROKEN_VERIFIERS
    >>> keeps_drafts = BROKEN_VERIFIERS["keeps_drafts_after_rejection"][0]
    >>> print(check_verifier(keeps_drafts, n_rounds=500).summary)  # doctest: +ELLIPSIS
    FAIL (prefix-dependent draft): structure broken in ... of 500 rounds; first: ... tokens after a correction ...
    """
    if not callable(verify_fn):
        raise ValueError("verify_fn: expected a callable with verify's signature")
    if emitted_distribution is not None and not callable(emitted_distribution):
        raise ValueError(
            "emitted_distribution: expected a callable (drafts, target_rows, draft_rows) -> dict"
        )
    n_rounds = _validate.count("n_rounds", n_rounds, minimum=1)
    rng = np.random.default_rng(seed)
    scenarios = _scenarios()
    threshold = FALSE_FAIL_RATE / sum(s.gamma + 2 for s in scenarios)  # γ+1 positions and K, per scenario
    problems, pvalues = [], {}
    for scenario in scenarios:
        found, computed = _check_scenario(
            verify_fn, scenario, n_rounds, rng, greedy, threshold, emitted_distribution
        )
        problems += found
        pvalues.update(computed)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        summary = "FAIL (" + problems[0].replace(": ", "): ", 1) + more
    else:
        summary = (
            f"PASS: structure held in {len(scenarios)} scenarios × {n_rounds} rounds; "
            f"{len(pvalues)} chi-square tests, per-test threshold {threshold:.1e}; "
            f"smallest p = {min(pvalues.values()):.2g}"
        )
    return VerifierReport(
        passed=not problems, summary=summary, problems=tuple(problems), pvalues=pvalues, threshold=threshold
    )


def _argmax_model(model: Model) -> Model:
    """The greedy version of a model: the one-hot law at its argmax, at every prefix."""
    return lambda prefix: argmax_distribution(model(prefix))


def _count_law(target: Model, scenario: _Scenario, emitted_distribution: Rule | None = None) -> np.ndarray:
    """[P(K=1), …, P(K=γ+1)] of one correct round in this scenario (under the given rule, if any)."""
    law = np.zeros(scenario.gamma + 1)
    rounds = round_distribution(
        target, scenario.draft, scenario.prefix, scenario.gamma, emitted_distribution=emitted_distribution
    )
    for tokens, prob in rounds.items():
        law[len(tokens) - 1] += prob
    return law
