# verdict: pass
# why: guard clauses with their own messages, and the speedup as the reciprocal of the new time
def amdahl_speedup(p: float, n: int) -> float:
    if p < 0 or p > 1:
        raise ValueError("the parallel fraction p is a fraction: 0 <= p <= 1")
    if n < 1:
        raise ValueError("at least one core")
    new_time = (1 - p) + p / n
    return 1 / new_time
