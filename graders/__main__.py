"""Run one grader on one answer cell: ``python -m graders GRADE_ID ANSWER_FILE RESULTS_FILE``.

Writes JSON lines to RESULTS_FILE: first the plan (tests and points, before any student code
runs), then one result per test as soon as it is known, so a hang or a crash part-way still
leaves the verdicts reached so far. ``--plan`` writes the plan alone.
"""

import argparse
import hashlib
import hmac
import json
import os
import resource
import sys

from ch13lib.lang import Messages

# numba reads this once, at its first import (graders import ch13lib's simulators). The device
# itself reaches the graders as data: --gpu -> Grader.run(gpu=...) -> the subject -> answer.gpu.
if "--gpu" not in sys.argv:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"


# What the judge says itself, in the course's language (ch13lib/lang.py; the graders say the rest).
M = Messages(
    reaches=(
        "未评分: 这个单元格伸手去够评分它的进程 (kit 的模块、帧、代码对象、钩子或原始内存), 没有哪道练习需要这样做。"
        "助教会复查。",
        "not graded: this cell reaches into the process that grades it (the kit's modules, frames, code objects, "
        "hooks or raw memory), which no exercise needs. A TA will review it.",
    ),
    outside=(
        "未评分: 这个单元格用到了本练习允许清单 (ch13lib/allowed.py) 之外的东西; 笔记本的自检也会指出这一点。"
        "助教会复查。",
        "not graded: this cell uses what its exercise's allow-list (ch13lib/allowed.py) does not name; the "
        "notebook's self-check says so too. A TA will review it.",
    ),
    no_compile=("单元格无法编译: 第 {line} 行: {msg}", "the cell does not compile: line {line}: {msg}"),
)

# CH13_TIMINGS set (bench/bench_class.py): CPU-seconds and the first test's start, for kit/grading.py
_timing: dict = {}


def _cpu(*kinds: int) -> float:
    """CPU-seconds of this process and of the children it waited for (or of ``kinds`` only)."""
    usage = [resource.getrusage(k) for k in kinds or (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def _timed(subject):
    """A subject whose CPU-seconds are read before each kill: a process killed before its parent
    reaped it (a hang's pid 1 in its sandbox) never reaches our RUSAGE_CHILDREN."""
    from kit.jobs import job_pids
    from kit.judge import _cpu_seconds

    stop = subject.stop

    def timed_stop() -> None:
        seen = _cpu_seconds(job_pids(subject.token, subject.uid)) if subject.proc is not None else 0.0
        before = _cpu(resource.RUSAGE_CHILDREN)
        stop()
        _timing["unreaped"] += max(0.0, seen - (_cpu(resource.RUSAGE_CHILDREN) - before))

    subject.stop = timed_stop
    _timing["subjects"].append(subject)
    return subject


def _early_subject(args, source: str, options: dict):
    """The cell's subject, started from the committed plan (graders/plans.json) before the grader
    is imported; None where there is no plan (the grader then starts its own)."""
    from kit.grading import plan
    from kit.judge import Subject

    try:
        info = plan(args.grade_id)
        harness, budget = info["harness"], args.budget or info["timeout_s"]
    except (KeyError, OSError, ValueError):
        return None
    subject = Subject(args.grade_id, source, harness=harness, budget_s=budget, **options)
    subject.start()
    return subject


def _emitter(key: bytes, results):
    def emit(item: dict) -> None:
        line = json.dumps(item, sort_keys=True)
        mac = hmac.new(key, line.encode(), hashlib.sha256).hexdigest()
        results.write(json.dumps({"line": line, "mac": mac}) + "\n")

    return emit


def main(argv=None, key: bytes | None = None) -> int:
    """One grading; ``key`` (signs each result line) is read from stdin when not given."""
    ap = argparse.ArgumentParser(prog="python -m graders")
    ap.add_argument("grade_id")
    ap.add_argument("answer_file", nargs="?")
    ap.add_argument("results_file", nargs="?")
    ap.add_argument("--plan", action="store_true", help="print the plan as JSON and exit")
    ap.add_argument("--gpu", action="store_true", help="grade on real CUDA instead of the simulators")
    ap.add_argument("--no-sandbox", action="store_true", help="run the subject without kit.sandbox (tests only)")
    ap.add_argument("--course", help="the course folder whose gradebook and submissions the subject must not see")
    ap.add_argument("--budget", type=float, help="the cell's budget in CPU-seconds (default: the grader's timeout_s)")
    # kit.config.Sandbox, from the nbgrader process (kit/grading.py): handed on to the subject's kit.sandbox
    ap.add_argument("--data-mb", type=int, help="RLIMIT_DATA of each subject process, MiB (kit.sandbox --data-mb)")
    ap.add_argument("--no-namespaces", action="store_true", help="the subject's sandbox without namespaces")
    args = ap.parse_args(argv)

    from ch13lib import allowed
    from ch13lib.cell import filename
    from graders.screen import refusals, screen

    if args.plan:
        from graders import load_grader

        print(json.dumps(load_grader(args.grade_id).plan()))
        return 0
    with open(args.answer_file, encoding="utf-8") as f:
        source = f.read()
    # The judge runs no student code (kit/subject.py does, in its own sandboxed process); the key
    # still signs each line, so a results file written by anything else is noticed.
    if key is None:
        key = sys.stdin.buffer.readline().strip()
        sys.stdin.close()
    # Not dumpable: a subject running as our uid (the sandbox's weakest tier) cannot read the key
    # or the hidden answers from our memory (/proc/PID/mem, ptrace).
    from kit.audit import seal_memory

    seal_memory()
    # Not graded: a cell that reaches into the process that grades it (the screen), or one that uses
    # what its exercise's published allow-list does not name (ch13lib/allowed.py: it fails closed).
    reaches, outside = refusals(source), allowed.outside(args.grade_id, source)
    refused = reaches + [line for line in outside if line not in reaches]
    try:
        compile(source, filename(args.grade_id), "exec")
        compile_error = ""
    except SyntaxError as e:
        compile_error = M("no_compile", line=e.lineno, msg=e.msg)
    options = {"sandbox": not args.no_sandbox, "gpu": args.gpu, "course": args.course}
    if args.data_mb is not None or args.no_namespaces:
        options["sandbox_args"] = (["--data-mb", str(args.data_mb)] if args.data_mb is not None else []) + (
            ["--no-namespaces"] if args.no_namespaces else []
        )
    # The subject starts next (kit.sandbox, an interpreter, the harness: a second or more) while
    # this process imports the grader (torch, for half of them): on two cores the waits overlap.
    subject = None if refused or compile_error else _early_subject(args, source, options)

    from graders import load_grader
    from kit.result import Result

    grader = load_grader(args.grade_id)
    if subject is not None and "kit.harnesses.cuda_check" in grader.harness:
        from graders.vec_add import start_compiler

        start_compiler()  # numba's CUDA compiler imports while the subject starts and loads the cell
    if args.budget:
        grader.timeout_s = args.budget
    results = open(args.results_file, "w", buffering=1, encoding="utf-8")

    emit = _emitter(key, results)
    del key
    emit({"plan": grader.plan()})
    if refused:
        why = "\n".join(([M("reaches")] if reaches else []) + ([M("outside")] if outside else []) + refused)
        emit({"refused": refused})  # for the TA's report, as data (kit/grading.py: Verdict.refused)
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, why).to_json())
        return 0
    flagged = screen(source)
    if flagged:  # honest code writes these too: an early warning for the TA, no change to the score
        emit({"flags": flagged})
    if compile_error:
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, compile_error).to_json())
        return 0
    if os.environ.get("CH13_TIMINGS"):
        import time

        _timing.update(first_test=time.time(), cpu_first=_cpu(), subjects=[], unreaped=0.0)
        make = grader.subject  # counts the subjects (and so the sandboxes) the tests start
        grader.subject = lambda *a, **k: _timed(make(*a, **k))
        subject = subject and _timed(subject)
    for result in grader.run(source, subject=subject, **options):
        emit(result.to_json())
    results.close()
    return 0


def run(argv: list[str], key: bytes | None = None) -> int:
    """What ``python -m graders <argv>`` does, for an exec'd judge and for one forked by
    kit/judges.py: grade, then leave the timing record where bench/bench_class.py reads it."""
    code = main(argv, key)
    if os.environ.get("CH13_TIMINGS") and len(argv) > 2 and not argv[2].startswith("-"):
        with open(argv[2] + ".timing", "w", encoding="utf-8") as f:
            subjects = _timing.pop("subjects", [])
            cpu = _cpu() + _timing.pop("unreaped", 0.0)
            json.dump({**_timing, "cpu": cpu, "subject_starts": sum(s.starts for s in subjects)}, f)
    return code


if __name__ == "__main__":
    sys.stdout.flush()
    code = run(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
