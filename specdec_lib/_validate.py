"""Input checks shared by every public function: one place, one style of error.

Probability vectors and rows, a verification round's inputs, prefixes, models and proposal laws
are checked here and nowhere else. Every check raises ``ValueError`` whose message starts with
the argument's name, so a reader of a traceback knows which input was wrong and why.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from ._types import Prefix

FLOAT_TOLERANCE = 1e-9  # how far a float vector's sum may stray from 1


def is_exact(value: Any) -> bool:
    """True for a ``Fraction`` or a plain integer (bools excluded)."""
    return isinstance(value, (Fraction, int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_exact_vector(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype == object and all(is_exact(v) for v in values.ravel())
    try:
        return len(values) > 0 and all(is_exact(v) for v in values)
    except TypeError:
        return False


def distribution(name: str, values: Any, *, exact: bool | None = None) -> Any:
    """Check a 1-D probability vector; return it as float64 array or list of Fractions (typed Any: by mode).

    ``exact=None`` picks exact mode when every entry is a Fraction or int.
    """
    if exact is None:
        exact = _is_exact_vector(values)
    if exact:
        entries = list(values)
        if not entries:
            raise ValueError(f"{name}: empty probability vector; need at least one token")
        if any(isinstance(e, (list, tuple, np.ndarray)) for e in entries):
            raise ValueError(f"{name}: expected a 1-D vector, got nested sequences")
        vec = [Fraction(e) for e in entries]
        if any(v < 0 for v in vec):
            raise ValueError(f"{name}: negative probability {min(vec)}")
        total = sum(vec)
        if total != 1:
            raise ValueError(f"{name}: probabilities sum to {total}, not exactly 1")
        return vec
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: not a vector of numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D vector, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty probability vector; need at least one token")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinite entries")
    if np.any(arr < 0):
        raise ValueError(f"{name}: negative probability {arr.min()}")
    mass = float(arr.sum())
    if abs(mass - 1.0) > FLOAT_TOLERANCE:
        raise ValueError(f"{name}: probabilities sum to {mass!r}, not 1 (tolerance {FLOAT_TOLERANCE})")
    return arr


def distribution_pair(p: Any, q: Any, names: tuple[str, str] = ("p", "q")) -> tuple[Any, Any, bool]:
    """Check p and q together: same length, same mode (exact only if both are exact)."""
    exact = _is_exact_vector(p) and _is_exact_vector(q)
    p = distribution(names[0], p, exact=exact)
    q = distribution(names[1], q, exact=exact)
    if len(p) != len(q):
        raise ValueError(f"{names[0]}, {names[1]}: length mismatch ({len(p)} vs {len(q)} tokens)")
    return p, q, exact


def probability(name: str, value: Any) -> Any:
    """A number in [0, 1]; returned as Fraction when exact, else float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number in [0, 1], got {value!r}")
    if is_exact(value):
        value = Fraction(value)  # type: ignore[call-overload]  # an exact Real: int, numpy integer or Fraction
    else:
        value = float(value)
        if math.isnan(value):
            raise ValueError(f"{name}: is NaN")
    if not 0 <= value <= 1:
        raise ValueError(f"{name}: must lie in [0, 1], got {value}")
    return value


def count(name: str, value: Any, minimum: int = 0) -> int:
    """An integer >= minimum (numpy integers accepted, floats and bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    return int(value)


def nonnegative(name: str, value: Any) -> float:
    """A finite real number >= 0 (times, cost ratios, token counts)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: must be finite, got {value}")
    if value < 0:
        raise ValueError(f"{name}: must be >= 0, got {value}")
    return value


def quantity(name: str, value: Any) -> Any:
    """A number >= 0 as ``nonnegative`` checks it, kept exact (``Fraction``) when it is a Fraction or int."""
    checked = nonnegative(name, value)
    return Fraction(value) if is_exact(value) else checked


def positive(name: str, value: Any) -> float:
    """A finite real number > 0 (temperatures, scales)."""
    value = nonnegative(name, value)
    if value == 0:
        raise ValueError(f"{name}: must be > 0, got {value}")
    return value


def rows(name: str, values: Any, expected: int | None = None, vocab: int | None = None) -> list[np.ndarray]:
    """A sequence of float probability rows: ``expected`` of them (None: at least one), all of one length."""
    if isinstance(values, np.ndarray) and values.ndim != 2 and not (values.ndim == 1 and values.size == 0):
        wanted = f"{expected} rows" if expected is not None else "probability rows"
        raise ValueError(f"{name}: expected {wanted} (a 2-D array), got shape {values.shape}")
    try:
        values = list(values)
    except TypeError:
        raise ValueError(f"{name}: expected a sequence of probability rows") from None
    if (expected is None and not values) or (expected is not None and len(values) != expected):
        raise ValueError(
            f"{name}: expected {expected if expected is not None else 'at least 1'} rows, got {len(values)}"
        )
    checked = [distribution(f"{name}[{i}]", row, exact=False) for i, row in enumerate(values)]
    vocab = len(checked[0]) if vocab is None and checked else vocab
    for i, row in enumerate(checked):
        if len(row) != vocab:
            raise ValueError(f"{name}[{i}]: has {len(row)} tokens, expected vocabulary size {vocab}")
    return checked


def proposable(name: str, proposal: np.ndarray, q: np.ndarray) -> None:
    """Refuse a proposal law that puts mass where the verifier's q is 0 (p/q would be undefined there)."""
    if np.any((np.asarray(proposal) > 0) & (np.asarray(q) == 0)):
        raise ValueError(
            f"{name}: proposes a token whose draft probability q is 0 (the ratio p/q is undefined)"
        )


def verification_round(
    draft_tokens: Any, target_probs: Any, draft_probs: Any
) -> tuple[list[int], list[np.ndarray], list[np.ndarray]]:
    """Check one round's inputs: γ token ids, γ+1 target rows, γ draft rows, every draft proposable.

    Returns (drafts as a list of ints, target rows, draft rows), rows as float64 arrays.
    """
    drafts = np.asarray(draft_tokens)
    if drafts.ndim != 1:
        raise ValueError(f"draft_tokens: expected a 1-D sequence of token ids, got shape {drafts.shape}")
    if drafts.size and not np.issubdtype(drafts.dtype, np.integer):
        raise ValueError(f"draft_tokens: token ids must be integers, got dtype {drafts.dtype}")
    gamma = drafts.size
    p_rows = rows("target_probs", target_probs, gamma + 1)
    q_rows = rows("draft_probs", draft_probs, gamma, vocab=len(p_rows[0]))
    vocab = len(p_rows[0])
    for i, x in enumerate(drafts.tolist()):
        if not 0 <= x < vocab:
            raise ValueError(f"draft_tokens[{i}]: token id {x} outside the vocabulary 0..{vocab - 1}")
        if q_rows[i][x] == 0:
            raise ValueError(
                f"draft_tokens[{i}]: token {x} has draft probability 0, so it could not have been proposed"
            )
    return drafts.tolist(), p_rows, q_rows


def prefix(value: Any) -> Prefix:
    """A prefix: a sequence of token ids (integers >= 0), returned as a tuple."""
    try:
        value = tuple(value)
    except TypeError:
        raise ValueError(f"prefix: expected a sequence of token ids, got {value!r}") from None
    for i, token in enumerate(value):
        count(f"prefix[{i}]", token)
    return value


def model(name: str, fn: Any) -> Any:
    """A model ``fn(prefix) -> probability vector``, memoised, with every row it returns checked."""
    if not callable(fn):
        raise ValueError(f"{name}: expected a callable model(prefix) -> probability vector")

    @cache
    def row(at: Prefix) -> Any:
        return distribution(f"{name}({at})", fn(at))

    return row
