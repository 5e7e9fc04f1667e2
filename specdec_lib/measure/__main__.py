"""``python -m specdec_lib.measure [--quick] [--json]``: run a workload and print the report (or one JSON object)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __doc__ as package_doc
from .report import format_report, to_json_dict
from .run import measure
from .workload import WORKLOADS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m specdec_lib.measure", description=package_doc.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds), not the full one")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    args = parser.parse_args(argv)
    report = measure(WORKLOADS["quick" if args.quick else "full"], progress=sys.stderr)
    print(json.dumps(to_json_dict(report), indent=1, allow_nan=False) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
