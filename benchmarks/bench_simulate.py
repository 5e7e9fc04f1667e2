"""Throughput of ``simulate_rounds`` against a Python loop over ``verify`` and the RNG-bound limit.

Run: ``.venv/bin/python benchmarks/bench_simulate.py``. Prints rounds per second for
γ = 4 at V = 8 and V = 1000, for three ways of producing rounds:

* ``simulate_rounds``: all rounds at once, vectorised;
* a Python loop: γ ``sample_token`` drafts, then ``verify``, round after round;
* the RNG-bound limit: only drawing the 2γ+1 uniforms per round that one round consumes.

Each figure is the best of several repeats (the machine may be shared), and every
ratio comes from the same run. Goals (issue 4): ≥ 50× the loop and ≥ 0.25 of the
RNG-bound limit at V = 8; 10^5 rounds in ≤ 100 ms.
"""

from __future__ import annotations

import time

import numpy as np

from specdec_lib import sample_token, simulate_rounds, verify

GAMMA = 4
N_ROUNDS = 100_000
LOOP_ROUNDS = 2_000
REPEATS = 25


def best_seconds(run, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def random_rows(rng, n_rows, vocab):
    rows = rng.random((n_rows, vocab)) ** 3  # uneven rows, like real next-token laws
    return rows / rows.sum(axis=1, keepdims=True)


def python_loop(p, q, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        drafts = [sample_token(row, rng) for row in q]
        verify(drafts, p, q, rng)


def main():
    print(f"γ = {GAMMA}; best of {REPEATS} repeats (loop: best of 3 × {LOOP_ROUNDS} rounds)")
    columns = ("V", "simulate_rounds", "Python loop", "RNG-bound", "ms per 1e5", "× loop", "of RNG")
    print(" ".join(f"{c:>{w}}" for c, w in zip(columns, (5, 16, 13, 13, 11, 8, 7))))
    for vocab in (8, 1000):
        rng = np.random.default_rng(vocab)
        p, q = random_rows(rng, GAMMA + 1, vocab), random_rows(rng, GAMMA, vocab)
        simulate_rounds(p, q, 1_000, rng=0)  # warm-up
        t_sim = best_seconds(lambda p=p, q=q: simulate_rounds(p, q, N_ROUNDS, rng=1), REPEATS)
        t_loop = best_seconds(lambda p=p, q=q: python_loop(p, q, LOOP_ROUNDS, seed=2), 3)
        uniforms = np.random.default_rng(3)
        t_rng = best_seconds(lambda uniforms=uniforms: uniforms.random((2 * GAMMA + 1, N_ROUNDS)), REPEATS)
        sim, loop, bound = N_ROUNDS / t_sim, LOOP_ROUNDS / t_loop, N_ROUNDS / t_rng
        print(
            f"{vocab:>5} {sim:>14,.0f}/s {loop:>11,.0f}/s {bound:>11,.0f}/s {1e3 * t_sim:>11.1f} "
            f"{sim / loop:>7.0f}× {sim / bound:>7.2f}"
        )


if __name__ == "__main__":
    main()
