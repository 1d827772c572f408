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
    args = ap.parse_args(argv)
    if not args.gpu:
        # numba reads this once, at its first import: it must be set before any grader imports it.
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    os.environ["CH13_DEVICE"] = "gpu" if args.gpu else "cpu"

    from graders import load_grader
    from graders.api import Result
    from graders.screen import screen

    grader = load_grader(args.grade_id)
    if args.plan:
        print(json.dumps(grader.plan()))
        return 0
    with open(args.answer_file, encoding="utf-8") as f:
        source = f.read()
    # The key arrives on stdin before any student code runs: a line the student's code writes
    # into the results file cannot carry a valid MAC without it (kit/grading.py checks).
    key = sys.stdin.buffer.readline().strip()
    sys.stdin.close()
    # Not dumpable: nothing of the job, the student's code included, can read the key from memory
    # through /proc/self/mem or ptrace (also when run without kit.sandbox). PR_SET_DUMPABLE = 4.
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    # Opened before the student's code runs; line-buffered so each verdict lands at once.
    results = open(args.results_file, "w", buffering=1, encoding="utf-8")

    emit = _emitter(key, results)
    del key     # only the emitter's closure keeps it
    emit({"plan": grader.plan()})

    flagged = screen(source)
    if flagged:
        why = ("not graded: this cell reaches into the grading process, which no exercise needs. "
               "A TA will review it.\n" + "\n".join(flagged))
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, why).to_json())
        return 0
    try:
        compile(source, f"<answer cell {args.grade_id}>", "exec")
    except SyntaxError as e:
        why = f"the cell does not compile: line {e.lineno}: {e.msg}"
        for t in grader.tests:
            emit(Result(t.name, 0.0, t.points, False, why).to_json())
        return 0
    for result in grader.run(source):
        emit(result.to_json())
    results.close()
    return 0


if __name__ == "__main__":
    # os._exit skips interpreter shutdown: threads a student left running cannot keep us alive.
    sys.stdout.flush()
    code = main()
    sys.stdout.flush()
    os._exit(code)
