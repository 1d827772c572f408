# redteam: kills the grading process with os.abort() after the first test passed
# kind: cell
# target: amdahl
# score: amdahl=2
# message: amdahl: killed by signal 6
# why: verdicts reached before the crash count, the rest score 0 with the reason
import os

_calls = [0]


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    _calls[0] += 1
    if _calls[0] > 150 and "CH13_DEVICE" in os.environ:     # during the second test
        os.abort()
    return 1 / ((1 - p) + p / n)
