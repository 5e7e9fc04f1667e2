"""Train the course's target and its two transformer drafts on the corpus (``make models``; needs ``.[train]``).

``python -m specdec_course.train_models [--steps-scale X]`` trains, from fixed seeds, in this order:

0. ``ngram`` and ``unigram``: counted on the training split (cards only; numpy);
1. ``target``: the large model, next-character cross-entropy on the training split;
2. ``draft``: the small model, the same loss on the same text;
3. ``distilled``: the small model again, from the same initial weights, trained to match the
   target's next-character distributions (forward KL, KL(p‖q), at temperature 1): speculative
   decoding accepts with α = 1 − TV(p, q), and a draft trained towards p lowers that distance
   directly rather than through the text's own noise.

The gradients come from JAX (CPU is enough at this size); the forward pass here mirrors
:meth:`specdec_lib.transformer.Transformer.forward` operation for operation. Each model is then
rounded to float16, saved to ``specdec_lib/models`` and evaluated with the numpy code, so the
losses on its card are those of the shipped weights as the course runs them. Progress (step,
loss, seconds) goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

import numpy as np

from specdec_lib.corpus import corpus_sha256, corpus_split, corpus_text
from specdec_lib.transformer import (
    LAYER_NORM_EPS,
    MODELS_DIR,
    ROPE_BASE,
    Config,
    KVCache,
    Transformer,
    causal_mask,
    save,
)


@dataclass(frozen=True)
class Recipe:
    """How one model is trained: its shape, seed, steps, batch of ``batch`` windows of ``config.window`` characters."""

    config: Config
    seed: int
    steps: int
    batch: int
    learning_rate: float
    warmup: int = 50


TARGET = Recipe(Config(n_layers=4, d_model=96, n_heads=3), seed=1, steps=750, batch=16, learning_rate=3e-3)
DRAFT = Recipe(Config(n_layers=1, d_model=64, n_heads=2), seed=2, steps=750, batch=16, learning_rate=3e-3)
EVAL_WINDOWS_TRAIN = 256  # training-split windows the card's train loss averages over


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise SystemExit("training needs JAX: pip install -e '.[train]'") from error
    jax.config.update("jax_platforms", "cpu")
    return jax, jnp


def init_weights(config: Config, seed: int) -> dict[str, np.ndarray]:
    """Normal(0, 0.02) matrices (residual outputs scaled by 1/√(2·n_layers)), LayerNorms at identity."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in config.shapes().items():
        if "gain" in name:
            weights[name] = np.ones(shape, np.float32)
        elif "bias" in name:
            weights[name] = np.zeros(shape, np.float32)
        else:
            std = 0.02 / np.sqrt(2 * config.n_layers) if name in ("w_out", "w_down") else 0.02
            weights[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    return weights


def make_forward(config: Config):
    """A JAX function (weights, tokens (batch, n)) → logits (batch, n, vocab), causal, positions 0 … n − 1."""
    jax, jnp = _jax()
    h, hd = config.n_heads, config.head_dim

    def layer_norm(x, gain, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + LAYER_NORM_EPS) * gain + bias

    def gelu(x):
        return 0.5 * x * (1.0 + jnp.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))

    def forward(w, tokens):
        b, n = tokens.shape
        frequencies = ROPE_BASE ** (-np.arange(0, hd, 2) / hd)
        angles = np.arange(n)[:, None] * frequencies
        cos, sin = jnp.asarray(np.cos(angles), jnp.float32), jnp.asarray(np.sin(angles), jnp.float32)

        def rotate(x):
            x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
            return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)

        allowed = jnp.asarray(causal_mask(0, n, config.window))
        x = w["embed"][tokens]
        for layer in range(config.n_layers):
            a = layer_norm(x, w["ln1_gain"][layer], w["ln1_bias"][layer])
            q, k, v = (a @ w["w_qkv"][layer]).reshape(b, n, 3, h, hd).transpose(2, 0, 3, 1, 4)
            scores = (rotate(q) * hd**-0.5) @ rotate(k).swapaxes(-1, -2)
            scores = jnp.where(allowed, scores, -jnp.inf)
            attended = jax.nn.softmax(scores, axis=-1) @ v
            x = x + attended.transpose(0, 2, 1, 3).reshape(b, n, -1) @ w["w_out"][layer]
            a = layer_norm(x, w["ln2_gain"][layer], w["ln2_bias"][layer])
            x = x + gelu(a @ w["w_up"][layer]) @ w["w_down"][layer]
        return layer_norm(x, w["lnf_gain"], w["lnf_bias"]) @ w["head"]

    return forward


def train(recipe: Recipe, train_tokens: np.ndarray, teacher=None, log=sys.stderr) -> dict[str, np.ndarray]:
    """Adam (β = 0.9, 0.99; warm-up then cosine decay to a tenth; gradient norm clipped at 1).

    With ``teacher`` (a (forward, weights) pair) the loss is KL(teacher ‖ model) per position;
    without, cross-entropy on the next character.
    """
    jax, jnp = _jax()
    config = recipe.config
    forward = make_forward(config)
    n = config.window

    def loss_fn(w, inputs, targets, teacher_logits):
        logq = jax.nn.log_softmax(forward(w, inputs), axis=-1)
        if teacher_logits is None:
            return -jnp.take_along_axis(logq, targets[..., None], axis=-1).mean()
        logp = jax.nn.log_softmax(teacher_logits, axis=-1)
        return (jnp.exp(logp) * (logp - logq)).sum(-1).mean()

    def schedule(step):
        warm = (step + 1) / recipe.warmup
        progress = jnp.clip((step - recipe.warmup) / max(1, recipe.steps - recipe.warmup), 0.0, 1.0)
        cosine = 0.1 + 0.9 * 0.5 * (1 + jnp.cos(jnp.pi * progress))
        return recipe.learning_rate * jnp.where(step < recipe.warmup, warm, cosine)

    @jax.jit
    def step_fn(w, m, v, step, inputs, targets, teacher_logits):
        loss, grads = jax.value_and_grad(loss_fn)(w, inputs, targets, teacher_logits)
        norm = jnp.sqrt(sum((g**2).sum() for g in jax.tree_util.tree_leaves(grads)))
        grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, 1.0 / (norm + 1e-6)), grads)
        m = jax.tree_util.tree_map(lambda m_, g: 0.9 * m_ + 0.1 * g, m, grads)
        v = jax.tree_util.tree_map(lambda v_, g: 0.99 * v_ + 0.01 * g * g, v, grads)
        t = step + 1
        lr = schedule(step)
        w = jax.tree_util.tree_map(
            lambda w_, m_, v_: w_ - lr * (m_ / (1 - 0.9**t)) / (jnp.sqrt(v_ / (1 - 0.99**t)) + 1e-8), w, m, v
        )
        return w, m, v, loss

    teacher_fn = jax.jit(teacher[0]) if teacher is not None else None
    w = {k: jnp.asarray(x) for k, x in init_weights(config, recipe.seed).items()}
    m = jax.tree_util.tree_map(jnp.zeros_like, w)
    v = jax.tree_util.tree_map(jnp.zeros_like, w)
    rng = np.random.default_rng(recipe.seed + 1000)
    started, recent = time.perf_counter(), []
    for step in range(recipe.steps):
        starts = rng.integers(0, len(train_tokens) - n - 1, recipe.batch)
        windows = train_tokens[starts[:, None] + np.arange(n + 1)]
        inputs, targets = jnp.asarray(windows[:, :-1]), jnp.asarray(windows[:, 1:])
        teacher_logits = teacher_fn(teacher[1], inputs) if teacher_fn is not None else None
        w, m, v, loss = step_fn(w, m, v, step, inputs, targets, teacher_logits)
        recent.append(float(loss))
        if step % 50 == 49 or step == recipe.steps - 1:
            elapsed = time.perf_counter() - started
            print(
                f"step {step + 1}/{recipe.steps}  loss {np.mean(recent):.4f} nats  {elapsed:.0f} s",
                file=log,
                flush=True,
            )
            recent = []
    return {k: np.asarray(x) for k, x in w.items()}


def windows_of(tokens: np.ndarray, length: int) -> np.ndarray:
    """Non-overlapping windows of ``length + 1`` tokens (inputs and their next characters), the tail dropped."""
    count = (len(tokens) - 1) // length
    return tokens[np.arange(count)[:, None] * length + np.arange(length + 1)]


def bits_per_char(model: Transformer, windows: np.ndarray, chunk: int = 32) -> float:
    """Mean −log₂ q(next character) over every position of ``windows`` (each scored from an empty cache)."""
    total, count = 0.0, 0
    for lo in range(0, len(windows), chunk):
        block = windows[lo : lo + chunk]
        cache = KVCache(model.config, batch=len(block), capacity=block.shape[1])
        rows = model.score_batch(cache, block[:, :-1])
        picked = np.take_along_axis(rows, block[:, 1:, None], axis=-1)[..., 0]
        total += float(-np.log2(picked.astype(np.float64)).sum())
        count += picked.size
    return total / count


def evaluation_windows(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """(train windows, held-out windows) the cards' losses average over: all held-out windows, a fixed train sample."""
    train_tokens, held_out = corpus_split()
    train = windows_of(train_tokens, config.window)
    pick = np.random.default_rng(0).choice(len(train), EVAL_WINDOWS_TRAIN, replace=False)
    return train[np.sort(pick)], windows_of(held_out, config.window)


def finish(name: str, recipe: Recipe, weights: dict, seconds: float, extra: dict) -> Transformer:
    """Round to float16, evaluate with the numpy code, save weights and card."""
    model = Transformer(recipe.config, {k: x.astype(np.float16) for k, x in weights.items()})
    train_windows, held_windows = evaluation_windows(recipe.config)
    card = {
        "name": name,
        "corpus": "pydoc_data.topics (Python reference topics, sorted keys, joined by blank lines)",
        "corpus_sha256": corpus_sha256(),
        "corpus_chars": len(corpus_text()),
        "seed": recipe.seed,
        "steps": recipe.steps,
        "batch": recipe.batch,
        "learning_rate": recipe.learning_rate,
        "train_bits_per_char": round(bits_per_char(model, train_windows), 6),
        "heldout_bits_per_char": round(bits_per_char(model, held_windows), 6),
        "train_seconds": round(seconds, 1),
        **extra,
    }
    MODELS_DIR.mkdir(exist_ok=True)
    save(MODELS_DIR / f"{name}.npz", model, card)
    print(f"{name}: {card['heldout_bits_per_char']:.4f} bits/char held out", file=sys.stderr, flush=True)
    return model


def count_ngrams() -> None:
    """Cards for the n-gram draft and the unigram (numpy only: counted, not trained)."""
    from specdec_lib.ngram import NGRAM_ORDER, fitted_ngram

    held_out = corpus_split()[1]
    for name, order in (("ngram", NGRAM_ORDER), ("unigram", 1)):
        model = fitted_ngram(order)
        card = {
            "name": name,
            "corpus_sha256": corpus_sha256(),
            "corpus_chars": len(corpus_text()),
            "order": order,
            "params": model.table_size,
            "heldout_bits_per_char": round(model.bits_per_char(held_out), 6),
        }
        (MODELS_DIR / f"{name}.json").write_text(json.dumps(card, indent=2) + "\n")
        print(f"{name}: {card['heldout_bits_per_char']:.4f} bits/char held out", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m specdec_course.train_models", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--steps-scale", type=float, default=1.0, help="multiply every recipe's steps (trials)"
    )
    parser.add_argument("--only", choices=["target", "draft", "distilled", "ngram"], action="append")
    args = parser.parse_args(argv)
    only = set(args.only or ["target", "draft", "distilled", "ngram"])
    if "ngram" in only:
        count_ngrams()

    def scaled(recipe):
        return Recipe(**{**recipe.__dict__, "steps": max(1, round(recipe.steps * args.steps_scale))})

    train_tokens, _ = corpus_split()
    target_recipe, draft_recipe = scaled(TARGET), scaled(DRAFT)
    if "target" in only:
        started = time.perf_counter()
        weights = train(target_recipe, train_tokens)
        finish(
            "target", target_recipe, weights, time.perf_counter() - started, {"objective": "cross-entropy"}
        )
    if "draft" in only:
        started = time.perf_counter()
        weights = train(draft_recipe, train_tokens)
        finish("draft", draft_recipe, weights, time.perf_counter() - started, {"objective": "cross-entropy"})
    if "distilled" in only:
        from specdec_lib.transformer import load

        teacher = load("target")
        started = time.perf_counter()
        weights = train(draft_recipe, train_tokens, teacher=(make_forward(teacher.config), teacher.weights))
        finish(
            "distilled",
            draft_recipe,
            weights,
            time.perf_counter() - started,
            {"objective": "KL(target || draft), the shipped target's float16 weights as teacher"},
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
