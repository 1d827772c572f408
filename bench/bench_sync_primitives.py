"""Benchmark of notebook 01's graders (counter, semaphore_pool, bounded_buffer, bank_transfer).

Prints, for each grade_id, the median (of RUNS) wall time to grade the reference solution with
``python -m graders`` in a subprocess (as autograde does), pinned to one core where ``taskset``
exists, against a baseline measured the same way: the runner grading a trivially failing stub.
Then the search itself, in-process: for every scenario of every grader, the schedules tried,
whether the bounded search was exhaustive, and schedules per second.
Prints figures; asserts nothing about time.

    .venv/bin/python bench/bench_sync_primitives.py [RUNS]
"""

from __future__ import annotations

import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from kit import ROOT, source_ch13lib

source_ch13lib()  # main() imports ch13lib's scheduler: the copy beside the notebooks

GRADE_IDS = ["counter", "semaphore_pool", "bounded_buffer", "bank_transfer"]
STUB = "def nothing():\n    raise NotImplementedError()\n"


def grade_seconds(gid: str, source: str, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + sys of the grading process)."""
    import resource

    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        ans, res = os.path.join(tmp, "answer.py"), os.path.join(tmp, "results.jsonl")
        with open(ans, "w", encoding="utf-8") as f:
            f.write(source)
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(
                pin + [sys.executable, "-m", "graders", gid, ans, res, "--no-sandbox"],
                cwd=ROOT,
                check=True,
                input=b"bench-key\n",
                stdout=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def main(runs: int = 3) -> int:
    from ch13lib import sync_checks as sc
    from kit.answers import reference_solutions
    from kit.subject import Cell  # the reference, in this process: a trusted benchmark, not grading

    refs = reference_solutions()
    print(f"grading the reference solution with `python -m graders` (median of {runs}, one core if pinned)")
    print(f"  load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times grow with it)")
    total = total_cpu = 0.0
    for gid in GRADE_IDS:
        ref, ref_cpu = grade_seconds(gid, refs[gid], runs)
        base, base_cpu = grade_seconds(gid, STUB, runs)
        total += ref
        total_cpu += ref_cpu
        print(
            f"  {gid:15} reference {ref:6.2f} s (cpu {ref_cpu:5.2f} s)   failing stub {base:5.2f} s "
            f"(cpu {base_cpu:4.2f} s)   ratio {ref / base:5.1f}x"
        )
    print(f"  {'notebook 01':15} reference {total:6.2f} s in all (cpu {total_cpu:.2f} s)")

    print("\nthe search, per scenario (in-process, reference solution)")
    print(
        f"  {'grader':15} {'scenario':55} {'threads':>7} {'scheds':>6} {'exhaustive':>10} {'sched/s':>8}"
        f"  {'<=2 preemptions':>15}"
    )
    all_n = all_t = 0
    for gid in GRADE_IDS:
        g = importlib.import_module(f"graders.{gid}")
        answer = Cell(gid, refs[gid])
        scenarios = []
        for name in dir(g) + ["COUNTER_SCENARIOS", "POOL_SCENARIOS", "BUFFER_SCENARIOS", "BANK_SCENARIOS"]:
            v = getattr(g, name, None)
            if isinstance(v, list) and v and isinstance(v[0], sc.Scenario):
                scenarios += [s for s in v if s not in scenarios]
        for s in scenarios:
            t = time.perf_counter()
            rep = sc.run(None, s, load=answer.load, filename=answer.filename, **g.BUDGET)
            dt = time.perf_counter() - t
            all_n += rep.schedules
            all_t += dt
            # coverage in CHESS's terms: every schedule with <= 2 preemptions (free switches at
            # blocking points all explored); not what grading runs, measured here only
            cov = ""
            if rep.threads >= 2:
                pre = sc.run(
                    None,
                    s,
                    load=answer.load,
                    filename=answer.filename,
                    max_preemptions=2,
                    max_schedules=20000,
                    bound="preemption",
                )
                cov = f"{pre.schedules} {'all ok' if pre.ok and pre.exhaustive else 'INCOMPLETE/FAILED'}"
            print(
                f"  {gid:15} {s.name[:55]:55} {rep.threads:>7} {rep.schedules:>6} "
                f"{str(rep.exhaustive):>10} {rep.schedules / dt:>8.0f}  {cov:>15}   {'ok' if rep.ok else 'FAILED'}"
            )
    print(f"\n  {all_n} schedules in {all_t:.1f} s: {all_n / all_t:.0f} schedules/s overall")
    b = importlib.import_module("graders.counter").BUDGET
    print(
        f"  budget per scenario: every schedule with at most {b['max_preemptions']} deviations from the "
        f"default schedule (capped at {b['max_schedules']}), then {b['random_schedules']} seeded random ones"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
