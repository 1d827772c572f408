"""Benchmark: how long does grading notebook 02 (vec_add, vec_add_grid_stride, histogram, dot_reduction,
tiled_matmul) take?

Grades the notebook's reference solutions as autograde does, at least 3 times each, against the
release's stub (which fails every test at once) as the baseline measured in the same run. The sum
of the medians is the time to grade one correct submission of the notebook (the issue's budget:
20 s on the CPU simulator). Prints figures only; asserts nothing about time.

    .venv/bin/python bench/bench_cuda_kernels.py [--runs 3] [--no-sandbox]
"""

from __future__ import annotations

import argparse
import sys

from common import notebook_table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-sandbox", action="store_true", help="run the grader without kit.sandbox")
    args = ap.parse_args(argv)
    wall, _ = notebook_table(
        "notebook 02 on the CPU simulator",
        ["vec_add", "vec_add_grid_stride", "histogram", "dot_reduction", "tiled_matmul"],
        max(3, args.runs),
        not args.no_sandbox,
    )
    print(f"budget for a correct submission on the CPU simulator: 20 s; measured {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
