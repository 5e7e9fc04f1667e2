"""The full-size measurement of speculative decoding on this machine (issue 5), with its goals as ratios.

Run: ``.venv/bin/python benchmarks/bench_measure.py [--json PATH]``. Runs
``specdec_lib.measure`` with the ``full`` workload (the chapter runs a small one), prints the
report, then how each goal stands: best-γ measured speedup against 2.0×, measured/predicted
speedup for every γ against the ±10 % band, and the draft/verify/overhead parts against the
measured wall time (5 %). The machine may be shared: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import sys

from specdec_lib.measure import WORKLOADS, format_report, measure


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH")
    args = parser.parse_args(argv)
    result = measure(WORKLOADS["full"], progress=sys.stderr)
    print(format_report(result))
    print(f"\nbest measured speedup / goal 2.0×: {result['speedup_measured'] / 2.0:.2f}")
    print(f"α = {result['alpha']:.3f} (goal ≥ 0.7), c = {result['c']:.3f} (goal ≤ 0.1) at γ = {result['gamma']}")
    ratios = [s["speedup_measured"] / s["speedup_predicted"] for s in result["sweep"]]
    print("measured/predicted by γ:", "  ".join(f"{s['gamma']}:{r:.3f}" for s, r in zip(result["sweep"], ratios)),
          f"(worst {max(abs(r - 1) for r in ratios):.1%} off; goal ≤ 10 %)")
    parts = [s["parts_over_wall"] for s in result["sweep"]]
    print(f"(draft + verify + overhead) / wall: {min(parts):.4f} … {max(parts):.4f} (goal within 5 %)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
