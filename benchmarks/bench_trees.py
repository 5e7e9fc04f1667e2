"""Every verification rule of the variants chapter on the trained pair, with a longer workload than the chapter.

Run: ``.venv/bin/python benchmarks/bench_trees.py [--seeds N] [--tokens N]``. Prints, for each rule,
tokens per target call, rows scored per call and the speed-up over plain decoding with its 95 %
bootstrap interval (CPU time of this process on one BLAS thread, as the chapter), then the pairs
of rules whose intervals separate. Defaults: 12 prompts of 300 new tokens (a few minutes).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

from specdec_lib import HeuristicGamma, TheoryGamma, verify_block, verify_lenient, verify_typical
from specdec_lib.corpus import corpus_split
from specdec_lib.pair import load_model
from specdec_lib.rule_timing import ranking, time_rules
from specdec_lib.tree_attention import TreeTransformer
from specdec_lib.tree_search import best_tree, rank_acceptance
from specdec_lib.trees import tree_shape

PROMPT_CHARS, BUDGET, C_ASSUMED = 64, 8, 0.25


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--gamma", type=int, default=3)
    args = parser.parse_args(argv)
    target_net, draft_net = load_model("target"), load_model("small")
    target, draft = TreeTransformer(target_net), TreeTransformer(draft_net)
    _, heldout = corpus_split()
    prompts = [
        [int(t) for t in heldout[(7919 * s) % (len(heldout) - PROMPT_CHARS) :][:PROMPT_CHARS]]
        for s in range(args.seeds)
    ]
    text = prompts[0] + [int(t) for t in heldout[PROMPT_CHARS : PROMPT_CHARS + 400]]
    chances, _ = rank_acceptance(
        target_net.score(target_net.new_cache(), text)[:-1],
        draft_net.score(draft_net.new_cache(), text)[:-1],
        4,
    )
    best, predicted = best_tree([chances], BUDGET)
    chain = tree_shape((1,) * args.gamma)
    rules = {
        "strict chain": {"shape": chain},
        "block": {"shape": chain, "verifier": verify_block},
        "SpecInfer 2 × 4": {"shape": tree_shape((2, 1, 1, 1))},
        "SpecTr 2 × 4": {"shape": tree_shape((2, 1, 1, 1)), "rule": "spectr"},
        "top-k 2 × 4": {"shape": tree_shape((2, 1, 1, 1)), "rule": "top_k"},
        "top-k best tree": {"shape": best, "rule": "top_k"},
        "adaptive γ, heuristic": {"policy": partial(HeuristicGamma, start=args.gamma, max_gamma=12)},
        "adaptive γ, Thm 3.8": {"policy": partial(TheoryGamma, c=C_ASSUMED, max_gamma=12)},
        "typical": {"shape": chain, "verifier": verify_typical},
        "lenient 1/2": {"shape": chain, "verifier": partial(verify_lenient, lenience=0.5)},
    }
    print(f"best tree of {BUDGET} nodes predicts {predicted:.2f} tokens per call", file=sys.stderr)
    timings = time_rules(
        target, draft, rules, prompts, args.tokens, progress=lambda s: print(s, file=sys.stderr)
    )
    for name, t in timings.items():
        print(
            f"{name:22} tokens/call {t.tokens_per_call:5.2f} ± {t.tokens_per_call_se:.2f}  rows/call {t.rows_per_call:5.1f}  "
            f"speed-up {t.speedup:.2f} [{t.low:.2f}, {t.high:.2f}]"
        )
    print("separated by their intervals (faster, slower):", ranking(timings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
