# verdict: fail
# sample: matches_the_formula
# message: Amdahl's law gives
# why: Gustafson's scaled speedup (1 - p) + p·n, which grows without bound: a different question
def amdahl_speedup(p, n):
    if not 0 <= p <= 1 or n < 1:
        raise ValueError("p in [0, 1], n >= 1")
    return (1 - p) + p * n
