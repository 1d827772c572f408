"""Benchmark: how long does grading notebook 03 (all_reduce, ddp_average, rs_ag_all_reduce) take?

For each grade_id, grades the notebook's reference solution the way autograde does
(kit.grading.grade_cell: `python -m graders` in its own sandboxed process: the simulated process
group, then real gloo worlds of 3 processes), at least 3 times, and prints the median; the
baseline is the same runner grading the release's stub (which fails every test at once, before
any world starts), measured in the same run. The sum of the three medians is the time to grade
one correct submission of the notebook (the issue's budget: 30 s on 2 cores). Prints figures
only; asserts nothing about time.

    .venv/bin/python bench/bench_collectives.py [--runs 3] [--no-sandbox]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

GRADE_IDS = ["all_reduce", "ddp_average", "rs_ag_all_reduce"]


def sources(grade_id: str) -> tuple[str, str]:
    """(reference solution, release stub) of the answer cell, from the instructor notebook."""
    import nbformat
    from kit.answers import answer_cells, notebook_of
    cell = answer_cells(nbformat.read(notebook_of(grade_id), as_version=4))[grade_id].source
    ref = re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n", "", cell, flags=re.M)
    stub = re.sub(r"^([ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION[ \t]*\n",
                  lambda m: f"{m.group(1)}raise NotImplementedError()\n", cell + "\n", flags=re.M | re.S)
    return ref, stub


CPU = []      # CPU seconds of each grading, every process it started included


def timed(grade_id: str, source: str, sandbox: bool) -> tuple[float, float, float]:
    import resource
    from kit.grading import grade_cell
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    verdict = grade_cell(grade_id, source, sandbox=sandbox)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    got = sum(r["points"] for r in verdict.results)
    total = sum(r["max_points"] for r in verdict.results)
    return dt, got, total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-sandbox", action="store_true", help="run the grader without kit.sandbox")
    args = ap.parse_args(argv)
    runs = max(3, args.runs)
    sandbox = not args.no_sandbox
    print(f"grading notebook 03 (simulator + real gloo worlds) on {os.cpu_count()} cores, median of {runs} runs, "
          f"{'sandboxed' if sandbox else 'unsandboxed'} `python -m graders` processes")
    print(f"{'grade_id':<22}{'reference (s)':>14}{'score':>10}{'stub (s)':>10}{'ratio':>8}")
    total_ref = total_stub = 0.0
    ref_cpu: dict[str, list[float]] = {}
    for gid in GRADE_IDS:
        ref, stub = sources(gid)
        ref_times, stub_times, score = [], [], ""
        for _ in range(runs):
            dt, got, total = timed(gid, stub, sandbox)
            stub_times.append(dt)
            dt, got, total = timed(gid, ref, sandbox)
            ref_times.append(dt)
            ref_cpu.setdefault(gid, []).append(CPU[-1])
            score = f"{got:g}/{total:g}"
        r, s = statistics.median(ref_times), statistics.median(stub_times)
        total_ref += r
        total_stub += s
        print(f"{gid:<22}{r:>14.2f}{score:>10}{s:>10.2f}{r / s:>8.2f}")
    print(f"{'notebook 03 in all':<22}{total_ref:>14.2f}{'':>10}{total_stub:>10.2f}{total_ref / total_stub:>8.2f}")
    cpu = {g: statistics.median(v) for g, v in ref_cpu.items()}
    print("CPU seconds to grade the reference (all processes; load-independent): "
          + ", ".join(f"{g} {c:.1f}" for g, c in cpu.items()) + f"; notebook {sum(cpu.values()):.1f} "
          f"-> at least {sum(cpu.values()) / 2:.1f} s of wall time on 2 idle cores")
    print(f"budget for a correct submission on 2 cores: 30 s; measured {total_ref:.1f} s "
          f"(load average now: {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
