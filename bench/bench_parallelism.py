"""Benchmark: how long does grading notebook 07 (pipeline, tensor_parallel, zero1) take?

Grades the notebook's reference solutions as autograde does (the simulated process group with the
logical clock, then one real gloo world of 3 processes per grade_id), at least 3 times each,
against the release's stub (which fails every test at once, before any world starts) as the
baseline measured in the same run. The sum of the medians is the time to grade one correct
submission; the CPU seconds do not depend on the machine's load. Prints figures only; asserts
nothing about time.

    .venv/bin/python bench/bench_collectives.py [--runs 3] [--no-sandbox]
"""

from __future__ import annotations

import argparse
import os
import sys

from common import notebook_table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-sandbox", action="store_true", help="run the grader without kit.sandbox")
    args = ap.parse_args(argv)
    wall, cpu = notebook_table(
        "notebook 07 (simulator + real gloo worlds)",
        ["pipeline", "tensor_parallel", "zero1"],
        max(3, args.runs),
        not args.no_sandbox,
    )
    cores = os.cpu_count() or 1
    print(
        f"a correct submission of notebook 07: {wall:.1f} s "
        f"(its {cpu:.1f} CPU s need at least {cpu / cores:.1f} s on {cores} idle cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
