# verdict: fail
# message: returned a value
# why: the formula is right but impossible inputs are accepted
def amdahl_speedup(p, n):
    return 1 / ((1 - p) + p / n)
