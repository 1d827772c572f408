# verdict: pass
# why: the formula with input checks
def amdahl_speedup(p: float, n: int) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return 1.0 / ((1.0 - p) + p / n)
