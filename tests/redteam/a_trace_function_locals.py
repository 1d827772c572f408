# redteam: installs a trace function (sys.settrace, and threading.settrace for new threads) that rewrites the grader's local `right = False` to True
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: not graded
# why: the judge's locals are in another process; in the subject only the harness may set trace hooks (the audit hook judges the caller). The screen refuses these spellings before anything runs; the audit hook refuses them at run time when spelled otherwise (tests/test_judge.py)
import sys
import threading


def tracer(frame, event, arg):
    if "right" in frame.f_locals:
        frame.f_locals["right"] = True
    return tracer


threading.settrace(tracer)
sys.settrace(tracer)


def amdahl_speedup(p, n):
    return 1.0
