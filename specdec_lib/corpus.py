"""The text the course's models learn from: Python's own reference documentation, read where it is installed.

Every Python ships ``pydoc_data.topics`` (the text ``help("if")`` prints), so the corpus needs no
download and the repository copies none of it. :func:`corpus_text` joins its topics in sorted
order; :func:`corpus_sha256` fingerprints that text, and every model card records it (another
Python version ships other documentation, and the recorded losses hold for this text only).

Tokens are characters: the 95 printable ASCII characters and the newline, plus one id for
everything else (about one character in a thousand: curly quotes, dashes). The split is by
blocks: of every :data:`SPLIT_EVERY` consecutive blocks of :data:`BLOCK` characters, the last is
held out, so both parts sample every topic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import numpy.typing as npt

ALPHABET = "\n" + "".join(chr(code) for code in range(32, 127))  # token id = index in this string
OTHER = len(ALPHABET)  # the id of every character outside ALPHABET
VOCAB_SIZE = len(ALPHABET) + 1
OTHER_CHAR = "\N{REPLACEMENT CHARACTER}"  # how decode shows OTHER
BLOCK = 2048
SPLIT_EVERY = 10

_TOKEN_OF = np.full(128, OTHER, dtype=np.int64)
_TOKEN_OF[[ord(ch) for ch in ALPHABET]] = np.arange(len(ALPHABET))


def encode(text: str) -> np.ndarray:
    """Character ids: index in :data:`ALPHABET`, or :data:`OTHER` for any other character.

    >>> encode("if x:\\n").tolist()
    [74, 71, 1, 89, 27, 0]
    >>> int(encode("\N{EM DASH}")[0]) == OTHER
    True
    """
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return np.where(codes < 128, _TOKEN_OF[np.minimum(codes, 127)], OTHER)


def decode(tokens: Iterable[int]) -> str:
    """The text of character ids (:data:`OTHER` shows as U+FFFD).

    >>> decode(encode("while True:"))
    'while True:'
    """
    return "".join(ALPHABET[t] if t < OTHER else OTHER_CHAR for t in (int(t) for t in tokens))


@lru_cache(maxsize=1)
def corpus_text() -> str:
    """Python's reference topics (``pydoc_data.topics``), joined by blank lines in sorted key order.

    >>> len(corpus_text()) > 100_000
    True
    """
    from pydoc_data.topics import topics

    return "\n\n".join(topics[key] for key in sorted(topics))


def corpus_sha256(text: str | None = None) -> str:
    """The SHA-256 of the corpus's UTF-8 bytes (default: :func:`corpus_text`), as the model cards record it.

    >>> len(corpus_sha256("x"))
    64
    """
    return hashlib.sha256((corpus_text() if text is None else text).encode("utf-8")).hexdigest()


def split(tokens: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out): block i of :data:`BLOCK` tokens is held out when i % SPLIT_EVERY is SPLIT_EVERY − 1.

    >>> train, held_out = split(np.arange(10 * BLOCK))
    >>> len(train) // BLOCK, len(held_out) // BLOCK, int(held_out[0]) == 9 * BLOCK
    (9, 1, True)
    """
    tokens = np.asarray(tokens)
    blocks = np.arange(len(tokens)) // BLOCK
    held = blocks % SPLIT_EVERY == SPLIT_EVERY - 1
    return tokens[~held], tokens[held]


@lru_cache(maxsize=1)
def corpus_split() -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) token arrays of :func:`corpus_text` (cached; treat them as read-only)."""
    return split(encode(corpus_text()))
