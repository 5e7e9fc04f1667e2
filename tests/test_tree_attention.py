"""Tree attention: every node of a tree scored in one call gets the distribution its path gets as a chain."""

import numpy as np
import pytest

from specdec_lib.transformer import Config, Transformer, causal_mask
from specdec_lib.tree_attention import TreeTransformer, tree_mask, tree_positions

MODEL = Transformer.random(Config(n_layers=2, d_model=16, n_heads=2, vocab=9, window=6), seed=3)
PROMPT = [1, 4, 2, 7, 3, 5, 0, 8]  # longer than the window, so the window's edge is exercised
# a tree below the pending token (node 0): two children, one with two children, one grandchild below
TOKENS = [5, 2, 6, 1, 3, 8, 4]
PARENTS = [-1, 0, 0, 1, 1, 2, 3]
TOLERANCE = 1e-5  # float32 network: the chain and the tree sum the same terms in another order


def path_of(node, parents=PARENTS, tokens=TOKENS):
    path = []
    while node >= 0:
        path.append(tokens[node])
        node = parents[node]
    return path[::-1]


def chain_row(path):
    """The next-token distribution after PROMPT + path, scored as a plain chain."""
    cache = MODEL.new_cache()
    return MODEL.score(cache, PROMPT[:-1] + path)[-1].astype(np.float64)


def test_every_node_gets_the_distribution_of_its_path_as_a_chain():
    tree = TreeTransformer(MODEL)
    rows = tree.score_tree(tree.start(PROMPT), TOKENS, PARENTS)
    for node in range(len(TOKENS)):
        np.testing.assert_allclose(rows[node], chain_row(path_of(node)), atol=TOLERANCE)


def test_scoring_level_by_level_equals_one_call():
    tree = TreeTransformer(MODEL)
    whole = tree.score_tree(tree.start(PROMPT), TOKENS, PARENTS)
    state = tree.start(PROMPT)
    levels = [tree.score_tree(state, TOKENS[a:b], PARENTS[a:b]) for a, b in [(0, 1), (1, 3), (3, 7)]]
    np.testing.assert_allclose(np.concatenate(levels), whole, atol=TOLERANCE)


def test_after_keeping_the_accepted_path_the_cache_continues_like_a_chain():
    tree = TreeTransformer(MODEL)
    state = tree.start(PROMPT)
    tree.score_tree(state, TOKENS, PARENTS)
    tree.keep(state, [0, 1, 4])  # pending token, its first child, that child's second child
    assert state.cache.length == len(PROMPT) - 1 + 3
    next_rows = tree.score_tree(state, [6, 2], [-1, 0])
    expected = MODEL.score(MODEL.new_cache(), PROMPT[:-1] + path_of(4) + [6, 2])[-2:]
    np.testing.assert_allclose(next_rows, expected, atol=TOLERANCE)


def test_positions_by_index_instead_of_depth_are_caught():
    """Negative control: the same mask with breadth-first positions (a chain's) changes the rows."""
    cache = MODEL.new_cache()
    MODEL.score(cache, PROMPT[:-1])
    cached = cache.length
    wrong = MODEL.forward(
        cache, TOKENS, np.arange(cached, cached + len(TOKENS)), tree_mask(PARENTS, cached, 6)
    )
    probs = np.exp(wrong - wrong.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    mismatched = [
        n for n in range(len(TOKENS)) if not np.allclose(probs[n], chain_row(path_of(n)), atol=TOLERANCE)
    ]
    assert mismatched, "index positions matched the chains: the test could not tell depth from index"


def test_a_chain_is_the_causal_mask():
    for cached, n in [(0, 4), (3, 5)]:
        chain = list(range(-1, n - 1))
        assert (tree_mask(chain, cached, window=4) == causal_mask(cached, n, window=4)).all()
        assert tree_positions(chain, cached).tolist() == list(range(cached, cached + n))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: tree_mask([0]), "parents"),
        (lambda: tree_mask([-1, 2, 0]), "parents"),
        (lambda: TreeTransformer("not a model"), "model"),
        (lambda: TreeTransformer(MODEL).start([]), "prompt"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        call()


@pytest.mark.parametrize("rule, branching", [("specinfer", (2, 1)), ("top_k", (3, 2)), ("spectr", (2, 2))])
def test_decoding_with_tree_attention_equals_decoding_from_whole_paths(rule, branching):
    """The cached tree loop and a loop that rescores every path from scratch emit the same tokens, seed by seed."""
    from specdec_lib.tree_decoding import PathModel, tree_generate
    from specdec_lib.trees import tree_shape

    draft_net = Transformer.random(Config(n_layers=1, d_model=8, n_heads=2, vocab=9, window=6), seed=4)

    def from_scratch(net):
        def row(prefix):
            p = net.score(net.new_cache(), list(prefix))[-1].astype(np.float64)
            return p / p.sum()

        return PathModel(row)

    shape = tree_shape(branching)
    for seed in range(3):
        cached = tree_generate(
            TreeTransformer(MODEL), TreeTransformer(draft_net), PROMPT, 12, shape, rule=rule, seed=seed
        )
        scratch = tree_generate(
            from_scratch(MODEL), from_scratch(draft_net), PROMPT, 12, shape, rule=rule, seed=seed
        )
        assert cached.tokens == scratch.tokens
