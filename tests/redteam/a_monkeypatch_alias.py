# redteam: the same monkeypatch of math.isclose, reached through the function's own module (`isclose.__self__`) inside a helper the static screen cannot follow
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: your code replaced `math.isclose`
# why: after each test the sandbox checks the grader's modules and the library functions graders call; a test during which one was replaced by something of the cell's fails, and the originals are put back (before: 3 forged points)
import math


def _patch(namespace):
    namespace.isclose = lambda *a, **k: True


_patch(math.isclose.__self__)


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("bad input")
    return 1.0
