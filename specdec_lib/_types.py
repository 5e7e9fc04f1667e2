"""Type aliases of the public signatures: one name per kind of argument the lesson passes around.

Exact mode runs through the whole library: where every input is a ``Fraction`` (or an int), the
result is exact too, so numbers and probability vectors are typed as "float or Fraction".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

#: A Fraction when every input was exact, a float otherwise (an int is both).
Number = float | Fraction
#: A float64 numpy array.
FloatArray = npt.NDArray[np.float64]
#: P, q or r over the tokens.
Probabilities = Sequence[float] | Sequence[Fraction] | npt.NDArray[Any]
#: A returned probability vector: floats, or exact Fractions.
Distribution = FloatArray | list[Fraction]
#: One probability vector per position, p_0 … p_γ.
Rows = Sequence[Probabilities] | npt.NDArray[Any]
#: A Generator, an int seed, or None for fresh entropy.
Seed = np.random.Generator | int | None
#: The token ids before the next position.
Prefix = tuple[int, ...]
#: A language model: prefix -> next-token probabilities.
Model = Callable[[Prefix], Probabilities]
#: Emitted tokens -> probability: a round's or a stream's law (Fractions when exact).
Law = dict[Prefix, Any]
#: Prefix -> the law of what one round emits from it.
RoundLaw = Callable[[Prefix], Law]
#: (drafts, target rows, draft rows) -> emitted law.
Rule = Callable[[list[int], list[Any], list[Any]], Law]


class ScoringModel(Protocol):
    """A model the generators call: a fresh state, then next-token rows for tokens appended to it.

    The state (a ``KVCache``, an ``NGramState``) has a ``length`` and a ``rollback(length)``.
    """

    def new_state(self, batch: int = 1, capacity: int = ...) -> Any: ...

    def score(self, state: Any, tokens: npt.ArrayLike) -> FloatArray: ...

    def score_batch(self, state: Any, tokens: npt.ArrayLike) -> FloatArray: ...
