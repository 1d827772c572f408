# redteam: prints 400 MB while being graded (a right answer otherwise)
# kind: cell
# target: amdahl
# score: amdahl=5
# why: grader output goes to a file capped by RLIMIT_FSIZE (never into nbgrader's memory) and only its tail is read; the answer still earns its points
import os
import sys

if "CH13_DEVICE" in os.environ:
    line = "spam " * 200_000 + "\n"
    for _ in range(400):
        try:
            sys.stdout.write(line)
        except OSError:
            break


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    return 1 / ((1 - p) + p / n)
