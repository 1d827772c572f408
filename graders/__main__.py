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
import sys

# numba reads this once, at its first import (graders import ch13lib's simulators).
if "--gpu" not in sys.argv:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ["CH13_DEVICE"] = "gpu" if "--gpu" in sys.argv else "cpu"


def _emitter(key: bytes, results):
    def emit(item: dict) -> None:
        line = json.dumps(item, sort_keys=True)
        mac = hmac.new(key, line.encode(), hashlib.sha256).hexdigest()
        results.write(json.dumps({"line": line, "mac": mac}) + "\n")

    return emit


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m graders")
    ap.add_argument("grade_id")
    ap.add_argument("answer_file", nargs="?")
    ap.add_argument("results_file", nargs="?")
    ap.add_argument("--plan", action="store_true", help="print the plan as JSON and exit")
    ap.add_argument("--gpu", action="store_true", help="grade on real CUDA instead of the simulators")
    ap.add_argument("--no-sandbox", action="store_true", help="run the subject without kit.sandbox (tests only)")
    ap.add_argument("--course", help="the course folder whose gradebook and submissions the subject must not see")
    ap.add_argument("--budget", type=float, help="the cell's budget in CPU-seconds (default: the grader's timeout_s)")
    args = ap.parse_args(argv)

    from graders import load_grader
    from graders.api import Result
    from graders.screen import refusals, screen

    grader = load_grader(args.grade_id)
    if args.budget:
        grader.timeout_s = args.budget
    if args.plan:
        print(json.dumps(grader.plan()))
        return 0
    with open(args.answer_file, encoding="utf-8") as f:
        source = f.read()
    # The judge runs no student code (kit/subject.py does, in its own sandboxed process); the key
    # still signs each line, so a results file written by anything else is noticed.
    key = sys.stdin.buffer.readline().strip()
    sys.stdin.close()
    # Not dumpable: a subject running as our uid (the sandbox's weakest tier) cannot read the key
    # or the hidden answers from our memory (/proc/PID/mem, ptrace). PR_SET_DUMPABLE = 4.
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    results = open(args.results_file, "w", buffering=1, encoding="utf-8")

    emit = _emitter(key, results)
    del key
    emit({"plan": grader.plan()})
    refused = refusals(source)
    if refused:  # spellings that only serve to reach into the process that runs the cell
        why = (
            "not graded: this cell reaches into the process that grades it (the kit's modules, frames, "
            "code objects, hooks or raw memory), which no exercise needs. A TA will review it.\n" + "\n".join(refused)
        )
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, why).to_json())
        return 0
    flagged = screen(source)
    if flagged:  # honest code writes these too: an early warning for the TA, no change to the score
        emit({"flags": flagged})
    try:
        compile(source, f"<answer cell {args.grade_id}>", "exec")
    except SyntaxError as e:
        why = f"the cell does not compile: line {e.lineno}: {e.msg}"
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, why).to_json())
        return 0
    for result in grader.run(source, sandbox=not args.no_sandbox, gpu=args.gpu, course=args.course):
        emit(result.to_json())
    results.close()
    return 0


if __name__ == "__main__":
    sys.stdout.flush()
    code = main()
    sys.stdout.flush()
    os._exit(code)
