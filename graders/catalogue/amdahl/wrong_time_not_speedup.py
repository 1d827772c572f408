# verdict: fail
# message: Amdahl's law gives
# why: returns the new running time as a fraction of the old, not the speedup (its reciprocal)
def amdahl_speedup(p, n):
    if not 0 <= p <= 1 or n < 1:
        raise ValueError("p in [0, 1], n >= 1")
    return (1 - p) + p / n
