"""The shipped models: the corpus they learned from, the numpy transformer with its cache, the weights and their cards."""

import numpy as np
import pytest

from specdec_course.train_models import bits_per_char, evaluation_windows
from specdec_lib.corpus import ALPHABET, OTHER, VOCAB_SIZE, corpus_sha256, corpus_split, decode, encode, split
from specdec_lib.ngram import NGRAM_ORDER, NGramModel
from specdec_lib.pair import DRAFTS, load_model, model_table
from specdec_lib.transformer import MODELS_DIR, Config, Transformer, causal_mask, model_card

SHIPPED = ("target", "draft", "distilled")
BITS_TOLERANCE = 1e-3
SAME_CORPUS = all(model_card(name)["corpus_sha256"] == corpus_sha256() for name in SHIPPED)
needs_corpus = pytest.mark.skipif(
    not SAME_CORPUS,
    reason="this Python ships other reference topics than the corpus the models were trained on",
)


def test_decode_inverts_encode_and_marks_other_characters():
    text = "def f(x):\n    return {'a': x ** 2}  # ok"
    assert decode(encode(text)) == text
    assert encode("\N{EM DASH}").tolist() == [OTHER] and len(ALPHABET) + 1 == VOCAB_SIZE


def test_split_is_deterministic_and_disjoint():
    tokens = np.arange(25_000)
    train, held_out = split(tokens)
    assert len(train) + len(held_out) == len(tokens) and not set(train) & set(held_out)
    assert np.array_equal(split(tokens)[1], held_out) and len(held_out) / len(tokens) == pytest.approx(
        0.1, abs=0.02
    )


def test_one_call_on_many_positions_equals_one_call_per_position():
    target = load_model("target")
    tokens = encode("for item in sequence:\n    total += item")
    batched = target.score(target.new_cache(), tokens)
    cache = target.new_cache()
    stepwise = np.array([target.score(cache, [t])[0] for t in tokens])
    np.testing.assert_allclose(batched, stepwise, atol=1e-5)


def test_rollback_forgets_rejected_tokens():
    target = load_model("target")
    prompt = encode("The return statement")
    cache = target.new_cache()
    target.score(cache, prompt)
    target.score(cache, encode("zzqx"))  # a rejected branch, written into the cache
    cache.rollback(len(prompt))
    after = target.score(cache, encode(" leaves"))
    fresh = target.score(target.new_cache(), np.r_[prompt, encode(" leaves")])[len(prompt) :]
    np.testing.assert_allclose(after, fresh, atol=1e-5)
    with pytest.raises(ValueError, match="length"):
        cache.rollback(cache.length + 1)


def test_window_limits_what_a_position_sees():
    """Past the window, changing the oldest token changes nothing; inside it, it does (control).

    One layer: with more, each layer widens what a position sees by another window.
    """
    model = Transformer.random(Config(n_layers=1, d_model=16, n_heads=2, window=8, vocab=11), seed=3)
    base = np.arange(12) % 11
    changed = base.copy()
    changed[0] = 7
    rows = [model.score(model.new_cache(), t) for t in (base, changed)]
    np.testing.assert_allclose(rows[0][8:], rows[1][8:], atol=1e-6)
    assert not np.allclose(rows[0][7], rows[1][7])


def test_forward_with_a_mask_equals_the_chain_it_describes():
    """A mask that hides one new token from the next is the same as never having fed it (positions given)."""
    model = Transformer.random(Config(n_layers=2, d_model=16, n_heads=2, vocab=11), seed=4)
    cache = model.new_cache()
    model.score(cache, [1, 2, 3])
    mask = causal_mask(3, 2)
    mask[1, 3] = False  # the second new token does not see the first
    logits = model.forward(cache, [4, 5], [3, 3], mask)
    other = model.new_cache()
    model.score(other, [1, 2, 3])
    alone = model.forward(other, [5], [3], causal_mask(3, 1))
    np.testing.assert_allclose(logits[1], alone[0], atol=1e-5)


def test_bad_model_inputs_name_themselves():
    target = load_model("target")
    with pytest.raises(ValueError, match="tokens"):
        target.score_batch(target.new_cache(batch=2), [encode("ab")])
    with pytest.raises(ValueError, match="tokens"):
        target.score(target.new_cache(), [VOCAB_SIZE])
    with pytest.raises(ValueError, match="mask"):
        target.forward(target.new_cache(), [1], [0], np.zeros((1, 1), bool))
    with pytest.raises(ValueError, match="name"):
        model_card("oracle")


def test_shipped_weights_fit_the_budget_and_cards_say_what_they_are():
    total = sum(path.stat().st_size for path in MODELS_DIR.glob("*.npz"))
    assert total <= 10 * 2**20
    cards = {name: model_card(name) for name in SHIPPED}
    for name, card in cards.items():
        assert {
            "corpus_sha256",
            "config",
            "seed",
            "steps",
            "train_bits_per_char",
            "heldout_bits_per_char",
            "params",
        } <= set(card)
        with np.load(MODELS_DIR / f"{name}.npz") as stored:
            assert all(array.dtype == np.float16 for array in stored.values())
    target_cost, draft_cost = (Config(**cards[n]["config"]).flops_per_token() for n in ("target", "draft"))
    assert draft_cost <= 0.15 * target_cost  # the draft costs about a tenth of the target per token


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_weights_reproduce_their_recorded_held_out_loss(name):
    card = model_card(name)
    model = Transformer(Config(**card["config"]), dict(np.load(MODELS_DIR / f"{name}.npz")))
    _, held_out = evaluation_windows(model.config)
    assert bits_per_char(model, held_out) == pytest.approx(card["heldout_bits_per_char"], abs=BITS_TOLERANCE)
    model.weights["head"] = model.weights["head"][:, ::-1].copy()  # negative control: scrambled logits
    assert abs(bits_per_char(model, held_out[:8]) - card["heldout_bits_per_char"]) > 1.0


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("name, order", [("ngram", NGRAM_ORDER), ("unigram", 1)])
def test_counted_models_reproduce_their_recorded_held_out_loss(name, order):
    card = model_card(name)
    model = NGramModel(corpus_split()[0], order)
    assert (card["order"], card["params"]) == (order, model.table_size)
    assert model.bits_per_char(corpus_split()[1]) == pytest.approx(
        card["heldout_bits_per_char"], abs=BITS_TOLERANCE
    )


@needs_corpus
def test_the_target_learned_the_text():
    """The target beats the unigram by far and continues Python keywords it has seen."""
    table = model_table()
    assert table["target"]["heldout_bits_per_char"] < table["unigram"]["heldout_bits_per_char"] - 1.5
    target = load_model("target")
    for prefix, expected in (("The retur", "n"), ("if x is Non", "e")):
        row = target.score(target.new_cache(), encode(prefix))[-1]
        assert ALPHABET[int(row.argmax())] == expected, prefix
    assert set(table) == {"target", *DRAFTS, "unigram"}


def test_ngram_probabilities_sum_to_one_and_follow_counts():
    model = NGramModel(encode("abab abab abab"), order=3)
    row = model.probabilities(encode("ab"))
    assert row.sum() == pytest.approx(1) and ALPHABET[int(row.argmax())] == "a"
    assert corpus_split()[0].size > 9 * corpus_split()[1].size


@pytest.mark.slow
def test_training_forward_matches_the_numpy_inference():
    """The JAX forward the weights were trained with computes what the numpy cache code computes."""
    jnp = pytest.importorskip("jax.numpy", reason="the train extra (JAX) is not installed")
    from specdec_course.train_models import init_weights, make_forward

    config = Config(n_layers=2, d_model=32, n_heads=2, window=8)
    weights = {
        k: v * (20 if k.startswith("w_") or k in ("embed", "head") else 1)
        for k, v in init_weights(config, 0).items()
    }
    tokens = np.random.default_rng(0).integers(0, config.vocab, (2, 12))
    trained = np.asarray(
        make_forward(config)({k: jnp.asarray(v) for k, v in weights.items()}, jnp.asarray(tokens))
    )
    model = Transformer(config, weights)
    cache = model.new_cache(batch=2)
    served = [model.forward(cache, tokens[:, :5], np.arange(5), causal_mask(0, 5, 8))]
    served += [model.forward(cache, tokens[:, i : i + 1], [i], causal_mask(i, 1, 8)) for i in range(5, 12)]
    np.testing.assert_allclose(trained, np.concatenate(served, axis=1), atol=1e-4)
    assert not np.allclose(trained[:, 1:], trained[:, :-1], atol=1e-2)  # control: rows differ by position
