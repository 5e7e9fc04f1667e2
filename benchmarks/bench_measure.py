"""The full-size measurement of speculative decoding on this machine (issues 12 and 22), with its goals as ratios.

Run: ``.venv/bin/python benchmarks/bench_measure.py [--json PATH] [--skip-quick]``. Runs
``specdec_lib.measure`` with the ``full`` workload on the shipped target and its three drafts (the
chapter runs a small one), prints the report, then how each goal stands for every draft and
regime: the held-out speed-up at the chosen γ with its 95 % interval and both verdicts,
measured / predicted-with-v_γ, every interval's half-width against ±5 %, the roofline's predicted
and measured crossover, and the wall time of ``python -m specdec_lib.measure --quick --json``
against 30 s. The machine may be shared: the load average is printed with the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from time import perf_counter

from specdec_lib.measure import WORKLOADS, format_report, measure, to_json_dict


def _half_width(row) -> float:
    low, high = row.speedup_measured_ci
    return max(high / row.speedup_measured - 1, 1 - low / row.speedup_measured)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH")
    parser.add_argument("--skip-quick", action="store_true", help="do not time the --quick command")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    report = measure(WORKLOADS["full"], progress=sys.stderr)
    print(format_report(report))
    print()
    for draft, regimes in report.by_draft.items():
        for name, regime in regimes.items():
            low, high = regime.speedup_measured_ci
            ratio = regime.speedup_measured / regime.speedup_predicted_with_v
            widest = max(regime.rows, key=_half_width)
            v = regime.verdict
            print(
                f"{draft}, {name}: held-out speed-up at γ = {regime.gamma}: {regime.speedup_measured:.2f}× "
                f"[{low:.2f}, {high:.2f}]; Thm 3.8 {v.theorem38} ({v.theorem38_by:+.1%}), with v_γ {v.with_v} "
                f"({v.with_v_by:+.1%})"
            )
            print(f"  measured / predicted with v_γ: {ratio:.3f} ({abs(ratio - 1):.1%} off)")
            print(
                f"  widest 95 % interval: ±{_half_width(widest):.1%} at γ = {widest.gamma} (goal ≤ ±5 % for every γ)"
            )
    roof = report.roofline
    print(
        f"roofline: crossover n = {roof.crossover_predicted:.1f} predicted, {roof.crossover_measured:.1f} measured "
        f"(ratio {roof.crossover_measured / roof.crossover_predicted:.2f})"
    )
    batches = report.batch_curve
    print(
        f"batch curve: cost per token stops falling at batch {batches.saturation_batch}, "
        f"speculation stops paying at batch {batches.crossover_batch}"
    )
    if not args.skip_quick:
        start = perf_counter()
        subprocess.run(
            [sys.executable, "-m", "specdec_lib.measure", "--quick", "--json"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        print(f"python -m specdec_lib.measure --quick --json: {perf_counter() - start:.1f} s (goal < 30 s)")
    print(
        "load average (1, 5, 15 min) before / after: "
        + " ".join(f"{v:.2f}" for v in load_before)
        + " / "
        + " ".join(f"{v:.2f}" for v in os.getloadavg())
        + f" on {os.cpu_count()} cores"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(to_json_dict(report), f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
