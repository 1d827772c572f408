"""Autograde a whole class: students in parallel, each through the plain `nbgrader autograde`.

    python -m kit.classrun [--jobs N] [--force] [--student ID ...] [--timeout S] [--ray ADDRESS]

Each student is one `nbgrader autograde ch13_04 --student ID` process (the same path and the same
scores as a serial run; sqlite serialises the gradebook writes), forked from a server that imported
nbgrader once (kit/launch.py). A student whose notebook is not
readable is graded notebook by notebook, so the rest of their work still counts. A rerun skips
students already graded after their last submission unless --force. One student's crash or hang
is killed with its whole process tree and never stalls the run.

With ``--ray ADDRESS`` the students are spread over an existing Ray cluster instead of local
threads, one task per student. Every node must see the course folder at the same path (a shared
filesystem), since nbgrader's gradebook is one sqlite file.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import sys
import threading
import time

from kit import ASSIGNMENT, ROOT, judges
from kit.course import Course, nbgrader_env
from kit.grading import judge_env
from kit.jobs import job_memory, job_pids, kill_job, new_token
from kit.launch import run_nbgrader
from kit.preflight import UNGRADABLE, check_submission, release_folder

STUDENT_TIMEOUT_S = 1800.0  # last guard for one student's whole run; graders have their own


@dataclasses.dataclass
class StudentRun:
    student: str
    seconds: float = 0.0
    skipped: bool = False
    ok: bool = True
    problems: list[str] = dataclasses.field(default_factory=list)
    peak_mb: float = 0.0  # the most memory its processes held at once (sampled)
    node: str = ""  # where it ran (the Ray node, or "local")


def students(course: Course) -> list[str]:
    folder = course.path("submitted")
    return (
        sorted(s for s in os.listdir(folder) if os.path.isdir(os.path.join(folder, s, ASSIGNMENT)))
        if os.path.isdir(folder)
        else []
    )


def up_to_date(course: Course, student: str) -> bool:
    done = course.path("autograded", student, ASSIGNMENT)
    sub = course.path("submitted", student, ASSIGNMENT)
    if not os.path.isdir(done):
        return False
    newest = max((os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(sub) for f in fs), default=0)
    return os.path.getmtime(done) >= newest


class _MemorySampler(threading.Thread):
    """Samples the memory (kit.jobs.job_memory) of one student's processes: the nbgrader process
    (``pid``, once known) and every process of its job (kernel, graders, their children)."""

    def __init__(self, token: str, interval_s: float = 1.0) -> None:  # a proportional read costs ~2 ms a process
        super().__init__(daemon=True)
        self.token, self.interval_s, self.peak = token, interval_s, 0
        self.pid: int | None = None
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval_s):
            pids = set(job_pids(self.token)) | ({self.pid} if self.pid else set())
            self.peak = max(self.peak, job_memory(self.token, pids=list(pids), settled_at=self.peak))


def _autograde(course: Course, student: str, notebook: str | None, timeout: float, run: StudentRun) -> tuple[bool, str]:
    token = new_token()
    sampler = _MemorySampler(token)
    sampler.start()
    # one cell at a time: the class runner's width is students graded side by side
    argv = ["autograde", ASSIGNMENT, f"--student={student}", "--force", "--ExternalGrade.cells_at_once=1"]
    if notebook:
        argv.append(f"--notebook={notebook}")
    env = nbgrader_env()
    env["CH13_JOB_STUDENT"] = token
    try:
        done = run_nbgrader(
            argv,
            cwd=course.root,
            env=env,
            timeout=timeout,
            on_start=lambda pid: setattr(sampler, "pid", pid),
            zygotes=judges.share(judge_env(nbgrader_env())),  # one pair for the whole class (kit/judges.py)
        )
        ok = done.returncode == 0
        err = "" if ok else f"autograde stopped after {timeout:g} s" if done.timed_out else _first_error(done.log)
    finally:
        sampler.done.set()
        sampler.join()
        run.peak_mb = max(run.peak_mb, sampler.peak / 2**20)
        judges.end_student(token)
        kill_job(token)
    return ok, err


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "ERROR]" in line and "Traceback" not in line and "see the the above" not in line:
            return line.split("ERROR]", 1)[1].strip()[:160]
    return "autograde failed (see the nbgrader log)"


def _record_empty_submission(course: Course, student: str) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.path('gradebook.db')}") as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(ASSIGNMENT, student)


def grade_student(
    course: Course, student: str, *, force: bool = False, timeout: float = STUDENT_TIMEOUT_S
) -> StudentRun:
    run = StudentRun(student, node=os.environ.get("CH13_NODE", "local"))
    if not force and up_to_date(course, student):
        run.skipped = True
        return run
    start = time.perf_counter()
    problems, readable = check_submission(course.path("submitted", student, ASSIGNMENT), release_folder(course.root))
    run.problems = [p.message for ps in problems.values() for p in ps]
    unreadable = [n for n, ps in problems.items() if any(p.kind in UNGRADABLE for p in ps)]
    if not unreadable:
        ok, err = _autograde(course, student, None, timeout, run)
        if not ok:
            run.ok = False
            run.problems.append(err)
    elif not readable:  # nothing nbgrader can read: still a row (of zeros) in the export
        _record_empty_submission(course, student)
    else:
        for notebook in readable:  # nbgrader would drop the whole submission: go one by one
            ok, err = _autograde(course, student, notebook, timeout, run)
            if not ok:
                run.ok = False
                run.problems.append(f"{notebook}: {err}")
    run.seconds = time.perf_counter() - start
    return run


def grade_class(
    course: Course,
    only: list[str] | None = None,
    *,
    jobs: int | None = None,
    force: bool = False,
    timeout: float = STUDENT_TIMEOUT_S,
    progress=print,
    ray_address: str | None = None,
) -> list[StudentRun]:
    todo = only or students(course)
    runs: list[StudentRun] = []
    start = time.perf_counter()
    finished = (
        _on_ray(course, todo, ray_address, force, timeout)
        if ray_address
        else _on_threads(course, todo, jobs or default_jobs(), force, timeout)
    )
    for run in finished:
        runs.append(run)
        if progress:
            progress(_progress_line(run, len(runs), len(todo), time.perf_counter() - start))
    return sorted(runs, key=lambda r: r.student)


def default_jobs() -> int:
    """Students graded at once by default: one more than the cores, since part of every student's
    run waits (kernel start-up, the sandbox, sqlite) rather than computes."""
    return (os.cpu_count() or 1) + 1


def _on_threads(course, todo, jobs, force, timeout):
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(grade_student, course, s, force=force, timeout=timeout) for s in todo]
        for future in concurrent.futures.as_completed(futures):
            yield future.result()


def _grade_on_node(course_root: str, student: str, force: bool, timeout: float) -> StudentRun:
    import ray

    os.environ["CH13_NODE"] = ray.get_runtime_context().get_node_id()[:8]
    return grade_student(Course(course_root), student, force=force, timeout=timeout)


def _on_ray(course, todo, address, force, timeout):
    import ray

    for var, value in (("RAY_AUTH_MODE", "disabled"), ("RAY_USAGE_STATS_ENABLED", "0")):
        os.environ.setdefault(var, value)
    if not ray.is_initialized():
        ray.init(
            address=address,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": ROOT, "PATH": os.environ["PATH"]}},
        )
    task = ray.remote(num_cpus=1, max_retries=0)(_grade_on_node)
    pending = {task.remote(course.root, s, force, timeout): s for s in todo}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        student = pending.pop(done[0])
        try:
            yield ray.get(done[0])
        except Exception as e:  # the node died under it: say so, the rest goes on
            yield StudentRun(student, ok=False, problems=[f"lost with its Ray node: {type(e).__name__}"])


def _progress_line(run: StudentRun, done: int, total: int, elapsed: float) -> str:
    eta = elapsed / done * (total - done)
    bar = "#" * int(20 * done / total) + "." * (20 - int(20 * done / total))
    status = "skipped (already graded)" if run.skipped else f"{run.seconds:5.1f} s" + ("" if run.ok else "  FAILED")
    if run.node and run.node != "local":
        status += f"  on {run.node}"
    line = f"[{bar}] {done}/{total}  ETA {eta:4.0f} s  {run.student}: {status}"
    for p in run.problems:
        line += f"\n      ! {p}"
    return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.classrun", description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=None, help="parallel students (default: cores + 1)")
    ap.add_argument("--force", action="store_true", help="regrade students already graded")
    ap.add_argument("--student", action="append", help="grade only these students")
    ap.add_argument("--timeout", type=float, default=STUDENT_TIMEOUT_S, help="last guard per student, s")
    ap.add_argument("--course", default=".", help="course root (default: here)")
    ap.add_argument("--ray", metavar="ADDRESS", help="spread students over this Ray cluster (shared filesystem)")
    args = ap.parse_args(argv)
    course = Course(args.course)
    runs = grade_class(
        course, args.student, jobs=args.jobs, force=args.force, timeout=args.timeout, ray_address=args.ray
    )
    from kit.report import score_table, write_html

    print(score_table(course, runs))
    print("report:", write_html(course, runs, course.path("report.html")))
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
