# redteam: crashes the grading interpreter with a C stack overflow (no ctypes needed)
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: killed by signal 11
# why: a dead grader leaves its tests without verdicts: 0 points with the reason; nothing else is affected
import os
import sys

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
if "CH13_DEVICE" in os.environ:
    sys.setrecursionlimit(10**8)
    nested = []
    for _ in range(2 * 10**6):
        nested = [nested]
    repr(nested)          # the C repr recurses two million levels deep: SIGSEGV
