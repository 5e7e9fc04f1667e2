"""The course's shipped models: one target, three drafts, and the unigram every model is compared with.

- ``target``: a 4-layer transformer trained on the corpus (:mod:`specdec_course.train_models`);
- drafts: ``small`` (a 1-layer transformer trained on the same text), ``n-gram`` (an order-6
  character n-gram counted on the same training split, :mod:`specdec_lib.ngram`) and
  ``distilled`` (the 1-layer transformer trained on the target's distributions);
- ``unigram``: character frequencies of the training split (add-one), the floor any model must beat.

Transformers come from their shipped float16 weights (:func:`specdec_lib.transformer.load`); the
n-gram and the unigram are counted when first asked for (a few seconds, then cached).
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

from .ngram import NGRAM_ORDER, NGramDraft, fitted_ngram
from .transformer import Transformer, load, model_card

DRAFTS = ("small", "n-gram", "distilled")
PRIMARY_DRAFT = "small"  # the classic pairing: a smaller model trained on the same text
_SHIPPED = {"target": "target", "small": "draft", "distilled": "distilled"}  # name -> weights file
_CARDS = {**_SHIPPED, "n-gram": "ngram"}  # name -> model card
_CARDS = {**_SHIPPED, "n-gram": "ngram"}  # name -> model card


@lru_cache(maxsize=4)
def load_model(name: str) -> Transformer | NGramDraft:
    """``"target"``, or a draft in :data:`DRAFTS` (cached: every caller shares one instance).

    >>> load_model("target").config.n_layers, load_model("small").config.n_layers
    (4, 1)
    """
    if name == "n-gram":
        return NGramDraft(fitted_ngram(NGRAM_ORDER))
    if name not in _SHIPPED:
        raise ValueError(f"name: must be 'target' or one of {DRAFTS}, got {name!r}")
    return load(_SHIPPED[name])


def build_model_pair(draft: str = PRIMARY_DRAFT) -> tuple[Transformer, Transformer | NGramDraft]:
    """(target, draft): the shipped target and the draft named ``draft`` (default the small transformer).

    >>> target, draft = build_model_pair()
    >>> target.parameter_count > 5 * draft.parameter_count
    True
    """
    if draft not in DRAFTS:
        raise ValueError(f"draft: must be one of {DRAFTS}, got {draft!r}")
    return cast(Transformer, load_model("target")), load_model(draft)


def model_table() -> dict[str, dict[str, float | int]]:
    """{name: {params, heldout_bits_per_char}} for the target, each draft, and the unigram.

    Every number comes from the model's card, written by ``make models`` with the numpy code on
    the held-out split (tests reproduce each). An n-gram's "params" is the number of
    (context, next character) counts it stores.

    >>> sorted(model_table()) == sorted(["target", *DRAFTS, "unigram"])
    True
    """
    table = {}
    for name in ("target", *DRAFTS, "unigram"):
        card = model_card(_CARDS.get(name, name))
        table[name] = {
            "params": int(card["params"]),
            "heldout_bits_per_char": float(card["heldout_bits_per_char"]),
        }
    return table
