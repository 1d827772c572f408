"""Determinism under stress: the demo class regraded many times, and again with every core busy.

    python bench/stress_determinism.py [--runs 10] [--busy-runs 2] [--course out/stress] [--jobs N]
    python bench/stress_determinism.py --catalogue [GRADE_ID ...] [--runs 2] [--jobs 2]

Builds the demo class (kit/demo.py: ada, ben, cy, di, ed, fay) once, grades it with the kit's class
runner (plain `nbgrader autograde` per student, the same path as `make demo`) `--runs` times, then
`--busy-runs` more times while one busy-looping process per core competes for the CPU. Every run
must give every (student, answer cell) exactly the same score, and the same verdict per test.
Prints the figures (time per run, the score table, the differences) and exits 1 on any difference.
Too slow for the test suite (minutes per run on 2 cores).

With ``--catalogue``, every catalogue answer (of the grade_ids named, or all) is graded ``--runs``
times through the grader's path (kit.grading.grade_cell: judge, sandboxed subject), the runs of
one answer side by side on ``--jobs`` workers, and each answer must get the same score and the same
test verdicts every time. The demo class holds mostly right answers; races live in the wrong
ones (a save every rank writes, a missing barrier), which is where a grader's world can leave an
outcome to the thread scheduler. The suite grades each answer once, so it sees such a difference
only as a rare red run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import re
import shutil
import sys
import time

from kit import ROOT
from kit.classrun import grade_class, students
from kit.course import Course
from kit.demo import build_class

VERDICT = re.compile(r"^\[(PASS|FAIL)\] (\S+) \(([\d.]+)/([\d.]+)\)", re.M)


def spin() -> None:  # other work: a pure-Python busy loop
    while True:
        pass


def snapshot(course: Course) -> dict:
    """(student, grade_id) -> (score, per-test verdicts as the report shows them)."""
    out = {}
    for student in students(course):
        for gid, cell in course.scores(student).items():
            out[(student, gid)] = (cell.score, tuple(VERDICT.findall(cell.report)))
    return out


def catalogue(grade_ids: list[str], runs: int, jobs: int) -> int:
    """Grade each catalogue answer ``runs`` times; 1 when any answer's outcomes differ."""
    from graders._catalogue import entries
    from kit.grading import grade_cell

    todo = [e for e in entries() if not grade_ids or e.grade_id in grade_ids]
    t0 = time.perf_counter()
    differing = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [(e, [pool.submit(grade_cell, e.grade_id, e.source) for _ in range(runs)]) for e in todo]
        for e, fs in futures:
            got = [(v.score, tuple(VERDICT.findall(v.report()))) for v in (f.result() for f in fs)]
            if len(set(got)) > 1:
                differing.append(e)
                print(f"DIFFERENT {e.grade_id}/{e.name}: scores {[g[0] for g in got]}", flush=True)
                for score, verdicts in got:
                    failed = [name for verdict, name, *_ in verdicts if verdict == "FAIL"]
                    print(f"    {score:g}: failed {', '.join(failed) or 'nothing'}")
            else:
                print(f"same      {e.grade_id}/{e.name}: {got[0][0]:g} x {runs}", flush=True)
    print(
        f"\n{len(todo)} catalogue answers x {runs} runs on {jobs} workers, {time.perf_counter() - t0:.0f} s: "
        + (f"{len(differing)} DIFFERENT" if differing else "every score and every test verdict identical")
    )
    return 1 if differing else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalogue", nargs="*", metavar="GRADE_ID", help="grade the catalogue instead of the demo class")
    ap.add_argument("--runs", type=int, default=None, help="runs (default 10; 2 with --catalogue)")
    ap.add_argument("--busy-runs", type=int, default=2)
    ap.add_argument("--course", default=os.path.join(ROOT, "out", "stress"))
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    if args.catalogue is not None:
        return catalogue(args.catalogue, args.runs or 2, args.jobs or 2)
    args.runs = 10 if args.runs is None else args.runs
    shutil.rmtree(args.course, ignore_errors=True)
    course = Course.create(args.course)
    course.generate()
    build_class(course)
    print(f"course {course.root}: students {', '.join(students(course))}; {os.cpu_count()} cores")

    results, times = [], []
    plan = ["quiet"] * args.runs + ["busy"] * args.busy_runs
    for i, mode in enumerate(plan):
        spinners = []
        if mode == "busy":
            spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(os.cpu_count() or 1)]
            for p in spinners:
                p.start()
        t0 = time.perf_counter()
        try:
            grade_class(course, jobs=args.jobs, force=True, progress=None)
        finally:
            for p in spinners:
                p.kill()
                p.join()
        times.append(time.perf_counter() - t0)
        results.append(snapshot(course))
        total = sum(score for score, _ in results[-1].values())
        print(
            f"run {i + 1:2d} ({mode}, {len(spinners)} busy processes): {times[-1]:6.1f} s, "
            f"{len(results[-1])} graded cells, total score {total:g}",
            flush=True,
        )

    base = results[0]
    differences = []
    for i, got in enumerate(results[1:], start=2):
        for key in sorted(set(base) | set(got)):
            if base.get(key) != got.get(key):
                differences.append(
                    f"run {i} ({plan[i - 1]}): {key[0]} {key[1]}: "
                    f"{base.get(key, ('missing',))[0]} -> {got.get(key, ('missing',))[0]}"
                    f"{'' if base.get(key, (0,))[0] != got.get(key, (0,))[0] else ' (same score, other verdicts)'}"
                )
    print("\nscores (every run):")
    for (student, gid), (score, tests) in sorted(base.items()):
        print(
            f"  {student:5s} {gid:22s} {score:6g}  ({sum(1 for t in tests if t[0] == 'PASS')}/{len(tests)} tests pass)"
        )
    quiet = [t for t, m in zip(times, plan) if m == "quiet"]
    busy = [t for t, m in zip(times, plan) if m == "busy"]
    print(
        f"\ntime per run: quiet median {sorted(quiet)[len(quiet) // 2]:.1f} s "
        f"(min {min(quiet):.1f}, max {max(quiet):.1f})"
        if quiet
        else ""
    )
    if busy:
        print(
            f"              busy  median {sorted(busy)[len(busy) // 2]:.1f} s "
            f"(min {min(busy):.1f}, max {max(busy):.1f})"
        )
    if differences:
        print(f"\n{len(differences)} DIFFERENCES:")
        print("\n".join("  " + d for d in differences))
        return 1
    print(f"\nidentical: {len(results)} runs x {len(base)} cells, every score and every test verdict")
    return 0


if __name__ == "__main__":
    sys.exit(main())
