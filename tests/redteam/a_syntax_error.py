# redteam: a cell that does not compile
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: the cell does not compile: line 10
# why: broken, not hostile: the runner reports the line and scores 0
def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("bad input")
    return 1 / ((1 - p) + p / n
