# redteam: monkeypatches math.isclose (which the grader uses) so that any speedup "matches"
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: monkeypatches math.isclose
# why: the screen refuses assignments to attributes of imported modules (before the fix this forged 3 of 5 points)
import math

math.isclose = lambda *a, **k: True


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("bad input")
    return 1.0
