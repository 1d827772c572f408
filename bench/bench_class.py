"""Benchmark: grade a synthetic class serially with plain nbgrader, and with the kit's class runner
(local threads, and a Ray cluster of 1 and 2 nodes simulated on this machine). Prints figures;
asserts nothing about time; exits 1 if any path or rerun gives a different score.

    .venv/bin/python bench/bench_class.py [--students 40] [--notebooks 06_quiz] [--no-ray] [--jobs 2 3]
    .venv/bin/python bench/bench_class.py --all [--students 20] [--notebooks NB ...] [--no-ray]

The class mixes right, wrong, hanging and cheating submissions built from the graders' catalogues
(graders/catalogue/) for the chosen notebooks. The default keeps to the quiz notebook so that the
serial baseline finishes in minutes on 2 cores.

``--all`` (or ``--notebooks all``): the whole assignment, every notebook of the release (a new one
is picked up from the release folder), 20 students by default, one of them hanging, one hostile
(a kernel cell that rewrites later cells), one with a notebook missing and one with a broken
notebook (invalid JSON); serial vs the class runner at its default width only, then CPU-seconds per
student by notebook and by stage, from the kit's opt-in timing records (CH13_TIMINGS, docs/ta.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import nbformat
from nbformat.v4 import new_code_cell

from graders import _catalogue as catalogue
from kit import ROOT
from kit.answers import answer_cells
from kit.classrun import default_jobs, grade_class
from kit.course import Course
from kit.grading import plan

HANG = "def amdahl_speedup(p, n):\n    while True:\n        pass\n"
HANG_TOP = "while True:\n    pass\n"  # the whole-assignment hang, where amdahl is not among the notebooks
CHEAT_CELL = "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n"


def synthetic_class(course: Course, n: int, notebooks: list[str]) -> dict[str, dict]:
    entries = {}
    for name in notebooks:
        nb = course.release_notebook(name)
        for gid in answer_cells(nb):
            entries[gid] = [e.source for e in catalogue.entries(gid)]
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


SPECIAL = ("hang", "cheat", "broken", "missing")


def whole_class(course: Course, n: int, notebooks: list[str]) -> dict[str, dict]:
    """--all: every student submits every notebook, answers from the catalogues (student i gets the
    i-th file, right_* before wrong_*, of every cell); one student of each SPECIAL kind, spread."""
    entries, gids = {}, {}
    for name in notebooks:
        gids[name] = list(answer_cells(course.release_notebook(name)))
        for gid in gids[name]:
            entries[gid] = [e.source for e in catalogue.entries(gid)]
    cells = [g for name in notebooks for g in gids[name]]
    hang = "amdahl" if "amdahl" in cells else min(cells, key=lambda g: plan(g).get("timeout_s") or 1e9)
    spots = [round((k + 1) * n / 5) for k in range(4)] if n >= 5 else list(range(1, n))
    kinds = {spot: kind for spot, kind in zip(spots, SPECIAL)}
    students = {}
    for i in range(n):
        kind = kinds.get(i, "catalogue")
        subs = {}
        for name in notebooks:
            nb = course.release_notebook(name)
            for gid, cell in answer_cells(nb).items():
                pool = entries[gid] or [cell.source]
                cell.source = pool[i % len(pool)]
                if kind == "hang" and gid == hang:
                    cell.source = HANG if gid == "amdahl" else HANG_TOP
            if kind == "cheat":
                nb.cells.insert(1, new_code_cell(CHEAT_CELL))
            subs[name] = nb
        if kind == "missing":
            del subs[notebooks[len(notebooks) // 2]]
        if kind == "broken":  # the last notebook: plain nbgrader keeps the grades saved before it,
            # so it and the class runner (which grades the readable ones one by one) score alike
            subs[notebooks[-1]] = nbformat.writes(subs[notebooks[-1]])[:-200]
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


def ray_runs(tmp: str, students: dict, names: list[str], results: dict) -> None:
    """The kit on a Ray cluster of 1, then 2 nodes x 1 CPU simulated on this machine."""
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


STAGES = ("kernel run", "sandbox start", "grader start", "grader work", "nbgrader")


def sandbox_start_cost(runs: int = 5) -> tuple[float, float]:
    """(CPU-seconds, wall seconds) that one kit.sandbox start adds to what it wraps: a sandboxed
    `python -c pass` minus a plain one, medians of ``runs``. Measured with no other child of ours
    running, so RUSAGE_CHILDREN deltas are exact here."""
    from kit.jobs import kill_job, new_token, sandbox_uid
    from kit.sandbox import make_kit_reachable

    make_kit_reachable()
    plain = [sys.executable, "-c", "pass"]
    got: dict[str, list[tuple[float, float]]] = {"plain": [], "sandboxed": []}
    for _ in range(runs):
        for label, out in got.items():
            token = new_token()
            uid = sandbox_uid(token)
            work = tempfile.mkdtemp(prefix="ch13-bench-sandbox-")
            os.chmod(work, 0o755)
            sandbox = [sys.executable, "-m", "kit.sandbox", "--no-network", "--workdir", work]
            cmd = (
                plain
                if label == "plain"
                else sandbox + (["--uid", str(uid)] if uid is not None else []) + ["--"] + plain
            )
            before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            done = subprocess.run(
                cmd, cwd=work, env=dict(os.environ, PYTHONPATH=ROOT, CH13_JOB=token), capture_output=True
            )
            wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
            kill_job(token, uid)
            shutil.rmtree(work, ignore_errors=True)
            if done.returncode:
                print(f"  (kit.sandbox failed to start: {done.stderr.decode(errors='replace').strip()[-200:]})")
            out.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall))
    cpu = statistics.median(c for c, _ in got["sandboxed"]) - statistics.median(c for c, _ in got["plain"])
    wall = statistics.median(w for _, w in got["sandboxed"]) - statistics.median(w for _, w in got["plain"])
    return max(cpu, 0.0), max(wall, 0.0)


def stage_split(path: str, notebook_of: dict[str, str], sandbox_cpu: float):
    """From one run's CH13_TIMINGS records: ({(student, notebook): {stage: CPU-seconds}}, {student:
    [first start, last end]}, judges without figures). A graded cell belongs to the student whose
    notebook its nbgrader process (pid) executed last; the nbgrader process's own CPU between two
    executions goes to the first (its start-up to its first notebook)."""
    split: dict[tuple[str, str], dict[str, float]] = {}
    spans: dict[str, list[float]] = {}
    last: dict[int, tuple[tuple[str, str], dict]] = {}  # pid -> its latest execution
    lost = 0
    records = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    for r in records:
        pid = r["pid"]
        if r["kind"] == "execute":
            key = (r["student"], r["notebook"])
            cell = split.setdefault(key, dict.fromkeys(STAGES, 0.0))
            if pid in last:
                split[last[pid][0]]["nbgrader"] += r["self_start"] - last[pid][1]["self_start"]
            else:
                cell["nbgrader"] += r["self_start"]
            last[pid] = (key, r)
            cell["kernel run"] += r["cpu"] - sandbox_cpu
            cell["sandbox start"] += sandbox_cpu
        elif pid in last:
            key = (last[pid][0][0], notebook_of.get(r["grade_id"], last[pid][0][1]))
            cell = split.setdefault(key, dict.fromkeys(STAGES, 0.0))
            if r["cpu"] is None:
                lost += 1
            else:
                sandboxes = r["subject_starts"] * sandbox_cpu
                cell["grader start"] += r["cpu_start"]
                cell["grader work"] += r["cpu"] - r["cpu_start"] - sandboxes
                cell["sandbox start"] += sandboxes
        else:
            continue
        span = spans.setdefault(key[0], [r["t"] - r["wall"], r["t"]])
        span[0], span[1] = min(span[0], r["t"] - r["wall"]), max(span[1], r["t"])
    for key, r in last.values():  # the last execution of each process: up to its end
        split[key]["nbgrader"] += r["self_end"] - r["self_start"]
    return split, spans, lost


def print_split(label: str, split, names: list[str], notebooks: list[str]) -> list[float]:
    """Prints the mean CPU-seconds per student by notebook and stage; returns each student's total."""
    n = len(names)
    print(f"\nCPU-seconds per student, {label} (mean over the {n} students):")
    print(f"  {'notebook':<22}" + "".join(f"{st:>14}" for st in STAGES) + f"{'total':>10}")
    for nb in notebooks + ["all notebooks"]:
        row = dict.fromkeys(STAGES, 0.0)
        for (_, book), cell in split.items():
            if nb in (book, "all notebooks"):
                for st in STAGES:
                    row[st] += cell[st] / n
        print(f"  {nb:<22}" + "".join(f"{row[st]:>14.2f}" for st in STAGES) + f"{sum(row.values()):>10.2f}")
    return [sum(sum(c.values()) for (who, _), c in split.items() if who == s) for s in names]


def whole_assignment(args, tmp: str, probe: Course) -> int:
    cores = os.cpu_count() or 1
    folder = probe.path("release", "ch13_04")
    notebooks = (
        args.notebooks
        if args.notebooks and args.notebooks != ["all"]
        else sorted(f[:-6] for f in os.listdir(folder) if f.endswith(".ipynb"))
    )
    students = whole_class(probe, args.students or 20, notebooks)
    notebook_of = {g: nb for nb in notebooks for g in answer_cells(probe.release_notebook(nb))}
    GRADED.update(notebook_of)
    names = sorted(students)
    print(f"synthetic class: {len(names)} students, each with every one of {notebooks}, {cores} cores")
    print(f"  special: {', '.join(n for n in names if 'catalogue' not in n)}; the others: catalogue answers")
    sandbox_cpu, sandbox_wall = sandbox_start_cost()
    print(
        f"one kit.sandbox start: {sandbox_cpu:.3f} CPU-s, {sandbox_wall:.3f} s wall "
        "(a sandboxed `python -c pass` minus a plain one)"
    )

    serial = new_course(tmp, "serial", students)
    logs = {"serial": os.path.join(tmp, "timings-serial.jsonl"), "kit": os.path.join(tmp, "timings-kit.jsonl")}
    os.environ["CH13_TIMINGS"] = logs["serial"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, t_serial, busy_serial = timed(lambda: serial.autograde(timeout=6 * 3600))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree_serial = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    reference = all_scores(serial, names)
    print(
        f"plain nbgrader autograde, serial: {t_serial:8.1f} s  ({t_serial / len(names):.1f} s/student, "
        f"CPU use {busy_serial / t_serial / cores:.0%} of {cores} cores, machine-wide)"
    )

    kit = new_course(tmp, "kit", students)
    os.environ["CH13_TIMINGS"] = logs["kit"]
    jobs = args.jobs[0] if args.jobs else default_jobs()
    runs, t_kit, busy_kit = timed(lambda: grade_class(kit, jobs=jobs, force=True, progress=None))
    del os.environ["CH13_TIMINGS"]
    got = all_scores(kit, names)
    print(
        f"kit class runner, {jobs} jobs:     {t_kit:8.1f} s  throughput x{t_serial / t_kit:.2f} vs serial "
        f"(wall ratio serial/kit), CPU use {busy_kit / t_kit / cores:.0%}"
    )

    totals = {}
    for path, label in (("serial", "plain nbgrader, serial"), ("kit", f"kit class runner, {jobs} jobs")):
        split, spans, lost = stage_split(logs[path], notebook_of, sandbox_cpu)
        totals[path] = print_split(label, split, names, notebooks)
        cpu = totals[path]
        measured = sum(cpu)
        print(f"  per student CPU-s: p50 {statistics.median(cpu):.1f}, p95 {pct(cpu, 0.95):.1f}, max {max(cpu):.1f}")
        if path == "serial":
            walls = [spans[s][1] - spans[s][0] if s in spans else 0.0 for s in names]
            print(
                f"  stages sum to {measured:.0f} CPU-s; nbgrader's process tree as reaped (RUSAGE_CHILDREN): "
                f"{tree_serial:.0f} (it misses processes killed before their parent reaped them)"
            )
            print(f"  largest single process: {after.ru_maxrss / 1024:.0f} MiB")
        else:
            walls = [r.seconds for r in runs]
            mem = [r.peak_mb for r in runs]
            print(f"  stages sum to {measured:.0f} CPU-s; the machine was busy {busy_kit:.0f} (other load included)")
            print(
                f"  peak memory of one student's grading: p50 {statistics.median(mem):.0f} MiB, max {max(mem):.0f} MiB"
            )
        print(f"  per student wall: p50 {statistics.median(walls):.1f} s, p95 {pct(walls, 0.95):.1f} s")
        if lost:
            print(f"  ({lost} graded cell(s) without the judge's figures: killed before it wrote them)")

    print("\nscores (serial run): " + ", ".join(f"{s} {sum(v or 0 for v in reference[s].values()):g}" for s in names))
    results = {f"kit, {jobs} jobs": got}
    if not args.no_ray:
        ray_runs(tmp, students, names, results)
    bad = False
    for path, scores in results.items():
        cells = [
            f"{s}:{g} {reference[s].get(g)} vs {scores[s].get(g)}"
            for s in names
            for g in sorted(GRADED)
            if reference[s].get(g) != scores[s].get(g)
        ]
        bad = bad or bool(cells)
        print(
            f"identical scores to the serial run, every cell: {path}: "
            f"{'yes' if not cells else 'NO ' + '; '.join(cells[:8])}"
        )
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true", help="the whole assignment (every notebook of the release)")
    ap.add_argument("--students", type=int, help="default: 40, or 20 with --all")
    ap.add_argument("--notebooks", nargs="+", help="default: 06_quiz, or every notebook with --all ('all': the same)")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--jobs", type=int, nargs="+", help="parallel students to try (default: the kit's default)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ch13-bench-class-")
    probe = Course.create(os.path.join(tmp, "probe"))
    probe.generate()
    if args.all or args.notebooks == ["all"]:
        return whole_assignment(args, tmp, probe)
    args.students = args.students or 40
    args.notebooks = args.notebooks or ["06_quiz"]
    cores = os.cpu_count() or 1
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
        ray_runs(tmp, students, names, results)

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
