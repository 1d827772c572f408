# redteam: opens files until the process runs out of descriptors, and keeps them open
# kind: cell
# target: amdahl
# score: amdahl=5
# why: RLIMIT_NOFILE stops it inside this process only; the grader's own results file was opened before
import os

hoard = []
if "CH13_DEVICE" in os.environ:
    try:
        while True:
            hoard.append(open(os.devnull))
    except OSError:
        del hoard[-16:]          # leave the grader a few to work with


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    return 1 / ((1 - p) + p / n)
