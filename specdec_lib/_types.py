"""Type aliases of the public signatures: one name per kind of argument the lesson passes around.

Exact mode runs through the whole library: where every input is a ``Fraction`` (or an int), the
result is exact too, so numbers and probability vectors are typed as "float or Fraction".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

Number = float | Fraction  # a Fraction when every input was exact, a float otherwise (an int is both)
FloatArray = npt.NDArray[np.float64]
Probabilities = Sequence[float] | Sequence[Fraction] | npt.NDArray[Any]  # p, q or r over the tokens
Distribution = FloatArray | list[Fraction]  # a returned probability vector: floats, or exact Fractions
Rows = Sequence[Probabilities] | npt.NDArray[Any]  # one probability vector per position, p_0 … p_γ
Seed = np.random.Generator | int | None  # a Generator, an int seed, or None for fresh entropy
Prefix = tuple[int, ...]  # the token ids before the next position
Model = Callable[[Prefix], Probabilities]  # a language model: prefix -> next-token probabilities
Law = dict[Prefix, Any]  # emitted tokens -> probability: a round's or a stream's law (Fractions when exact)
RoundLaw = Callable[[Prefix], Law]  # prefix -> the law of what one round emits from it
Rule = Callable[[list[int], list[Any], list[Any]], Law]  # (drafts, target rows, draft rows) -> emitted law
