"""Benchmark: how long `python -m graders fsdp_checkpoint` takes on the reference solution.

Runs the runner as autograde does (a subprocess, the HMAC key on stdin), N times each on the
notebook's reference solution and on the release stub (the baseline: interpreter start,
importing torch and the grader; the stub fails at the first save, so no training happens), and
prints the medians and their ratio. With --sandbox it also times kit.grading.grade_cell, the
sandboxed path nbgrader's autograde takes. Asserts nothing about time.

    .venv/bin/python bench/bench_fsdp_checkpoint.py [N] [--sandbox]
"""

from __future__ import annotations

import statistics
import sys
import time

from common import runner_table

GID = "fsdp_checkpoint"


def main(argv: list[str]) -> int:
    sandbox = "--sandbox" in argv
    args = [a for a in argv if not a.startswith("--")]
    n = int(args[0]) if args else 3
    runner_table(GID, n, {}, "target: reference at most 60 s on 2 cores")
    if sandbox:
        from kit.answers import reference_solutions
        from kit.grading import grade_cell

        times = []
        for _ in range(n):
            start = time.perf_counter()
            v = grade_cell(GID, reference_solutions()[GID], sandbox=True)
            times.append(time.perf_counter() - start)
        print(
            f"  sandboxed grade_cell (as autograde): median {statistics.median(times):6.2f} s  "
            f"runs {', '.join(f'{t:.2f}' for t in times)}  points {v.score:g}/{v.max_score:g}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
