"""Benchmark: how long does grading notebook 07 (pipeline, tensor_parallel, zero1) take?

Grades the notebook's reference solutions as autograde does (the simulated process group with the
logical clock, then one real gloo world of 3 processes per grade_id), at least 3 times each,
against the release's stub (which fails every test at once, before any world starts) as the
baseline measured in the same run. The sum of the medians is the time to grade one correct
submission; the CPU seconds do not depend on the machine's load. Prints figures only; asserts
nothing about time.

    .venv/bin/python bench/bench_parallelism.py [--runs 3] [--no-sandbox]
"""

from __future__ import annotations

import sys

from common import notebook_main


def main(argv=None) -> int:
    return notebook_main(
        argv,
        "notebook 07 (simulator + real gloo worlds)",
        ["pipeline", "tensor_parallel", "zero1"],
        "a correct submission of notebook 07: {wall:.1f} s",
    )


if __name__ == "__main__":
    sys.exit(main())
