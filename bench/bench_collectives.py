"""Benchmark: how long does grading notebook 03 (all_reduce, ddp_average, rs_ag_all_reduce) take?

Grades the notebook's reference solutions as autograde does (the simulated process group, then
real gloo worlds of 3 processes), at least 3 times each, against the release's stub (which fails
every test at once, before any world starts) as the baseline measured in the same run. The sum of
the medians is the time to grade one correct submission (the issue's budget: 30 s on 2 cores); the
CPU seconds do not depend on the machine's load. Prints figures only; asserts nothing about time.

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
        "notebook 03 (simulator + real gloo worlds)",
        ["all_reduce", "ddp_average", "rs_ag_all_reduce"],
        max(3, args.runs),
        not args.no_sandbox,
    )
    cores = os.cpu_count() or 1
    print(
        f"budget for a correct submission on 2 cores: 30 s; measured {wall:.1f} s "
        f"(its {cpu:.1f} CPU s need at least {cpu / cores:.1f} s on {cores} idle cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
