"""Benchmark: how long does grading notebook 03 (all_reduce, ddp_average, rs_ag_all_reduce) take?

Grades the notebook's reference solutions as autograde does (the simulated process group, then
real gloo worlds of 3 processes), at least 3 times each, against the release's stub (which fails
every test at once, before any world starts) as the baseline measured in the same run. The sum of
the medians is the time to grade one correct submission (the issue's budget: 30 s on 2 cores); the
CPU seconds do not depend on the machine's load. Prints figures only; asserts nothing about time.

    .venv/bin/python bench/bench_collectives.py [--runs 3] [--no-sandbox]
"""

from __future__ import annotations

import sys

from common import notebook_main


def main(argv=None) -> int:
    return notebook_main(
        argv,
        "notebook 03 (simulator + real gloo worlds)",
        ["all_reduce", "ddp_average", "rs_ag_all_reduce"],
        "budget for a correct submission on 2 cores: 30 s; measured {wall:.1f} s",
    )


if __name__ == "__main__":
    sys.exit(main())
