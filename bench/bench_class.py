"""Benchmark: grade a synthetic class serially with plain nbgrader, and with the kit's class runner
(local threads, and a Ray cluster of 1 and 2 nodes simulated on this machine). Prints figures;
asserts nothing about time; exits 1 if any path or rerun gives a different score.

    .venv/bin/python bench/bench_class.py [--students 40] [--notebooks 06_quiz] [--no-ray] [--jobs 2 3]

The class mixes right, wrong, hanging and cheating submissions built from the graders' catalogues
(tests/catalogue/) for the chosen notebooks. The default keeps to the quiz notebook so that the
serial baseline finishes in minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from nbformat.v4 import new_code_cell  # noqa: E402

from kit.answers import answer_cells  # noqa: E402
from kit.classrun import default_jobs, grade_class  # noqa: E402
from kit.course import Course  # noqa: E402

HANG = "def amdahl_speedup(p, n):\n    while True:\n        pass\n"
CHEAT_CELL = "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n"


def synthetic_class(course: Course, n: int, notebooks: list[str]) -> dict[str, dict]:
    entries = {}
    for name in notebooks:
        nb = course.release_notebook(name)
        for gid in answer_cells(nb):
            files = sorted(glob.glob(os.path.join(ROOT, "tests", "catalogue", gid, "*.py")))
            entries[gid] = [open(f, encoding="utf-8").read() for f in files]
    students = {}
    for i in range(n):
        kind = "hang" if i % 20 == 7 else "cheat" if i % 20 == 13 else "catalogue"
        subs = {}
        for name in notebooks:
            nb = course.release_notebook(name)
            for gid, cell in answer_cells(nb).items():
                pool = entries.get(gid) or [cell.source]
                cell.source = pool[i % len(pool)]
                if kind == "hang" and gid == "amdahl":
                    cell.source = HANG
            if kind == "cheat":
                nb.cells.insert(1, new_code_cell(CHEAT_CELL))
            subs[name] = nb
        students[f"s{i:03d}_{kind}"] = subs
    return students


def new_course(tmp: str, name: str, students: dict) -> Course:
    course = Course.create(os.path.join(tmp, name))
    course.generate()
    for student, subs in students.items():
        course.submit(student, subs)
    return course


GRADED: set[str] = set()  # the answer cells of the chosen notebooks


def all_scores(course: Course, students) -> dict:
    return {s: {g: c.score for g, c in course.scores(s).items() if g in GRADED} for s in students}


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine spent busy (not idle or waiting on I/O) since boot. Measured
    machine-wide because the kit's nbgrader processes are the forkserver's children, not ours."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def timed(fn):
    before = busy_cpu_seconds()
    t = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t
    return out, wall, busy_cpu_seconds() - before


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--notebooks", nargs="+", default=["06_quiz"])
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--jobs", type=int, nargs="+", help="parallel students to try (default: the kit's default)")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    tmp = tempfile.mkdtemp(prefix="ch13-bench-class-")
    probe = Course.create(os.path.join(tmp, "probe"))
    probe.generate()
    students = synthetic_class(probe, args.students, args.notebooks)
    GRADED.update(g for name in args.notebooks for g in answer_cells(probe.release_notebook(name)))
    names = sorted(students)
    print(f"synthetic class: {len(names)} students, notebooks {args.notebooks}, {cores} cores")

    serial = new_course(tmp, "serial", students)
    _, t_serial, cpu_serial = timed(lambda: serial.autograde(timeout=7200))
    reference = all_scores(serial, names)
    print(
        f"plain nbgrader autograde, serial: {t_serial:7.1f} s  ({t_serial / len(names):.2f} s/student, "
        f"CPU use {cpu_serial / t_serial / cores:.0%} of {cores} cores)"
    )

    results = {}
    kit = new_course(tmp, "kit", students)
    for jobs in args.jobs or [default_jobs()]:
        runs, t_kit, cpu_kit = timed(lambda: grade_class(kit, jobs=jobs, force=True, progress=None))
        results[f"kit, {jobs} jobs"] = all_scores(kit, names)
        per = [r.seconds for r in runs]
        mem = [r.peak_mb for r in runs]
        print(
            f"kit class runner, {jobs} jobs:    {t_kit:7.1f} s  throughput x{t_serial / t_kit:.2f} vs serial, "
            f"CPU use {cpu_kit / t_kit / cores:.0%}"
        )
        print(
            f"  per student: p50 {statistics.median(per):.1f} s, p95 {pct(per, 0.95):.1f} s; "
            f"peak memory per grading job: p50 {statistics.median(mem):.0f} MiB, max {max(mem):.0f} MiB"
        )
    _, t_resume, _ = timed(lambda: grade_class(kit, force=False, progress=None))
    results["kit rerun (resume)"] = all_scores(kit, names)
    print(f"  rerun without --force (everything already graded): {t_resume:.1f} s")
    grade_class(kit, force=True, progress=None)
    results["kit rerun (forced)"] = all_scores(kit, names)

    if not args.no_ray:
        os.environ.update(RAY_AUTH_MODE="disabled", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
        import ray
        from ray.cluster_utils import Cluster

        for nodes in (1, 2):
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
            for _ in range(nodes - 1):
                cluster.add_node(num_cpus=1)
            course = new_course(tmp, f"ray{nodes}", students)
            ray.init(
                address=cluster.address,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": ROOT, "PATH": os.environ["PATH"]}},
            )
            runs, t_ray, _ = timed(lambda: grade_class(course, force=True, progress=None, ray_address=cluster.address))
            results[f"ray {nodes} node(s)"] = all_scores(course, names)
            used = sorted({r.node for r in runs})
            print(
                f"kit on a Ray cluster of {nodes} node(s) x 1 CPU: {t_ray:7.1f} s "
                f"({len(names) / t_ray * 60:.1f} students/min; tasks ran on {len(used)} node(s))"
            )
            ray.shutdown()
            cluster.shutdown()

    differ = {path: [s for s in names if got[s] != reference[s]] for path, got in results.items()}
    bad = {path: ss for path, ss in differ.items() if ss}
    for path in results:
        print(
            f"identical scores to the serial run: {path}: "
            f"{'yes' if not differ[path] else 'NO ' + str(differ[path][:5])}"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
