# verdict: fail
# message: Amdahl's law gives
# why: perfect linear speedup, ignoring the serial part
def amdahl_speedup(p, n):
    if not 0 <= p <= 1 or n < 1:
        raise ValueError
    return float(n)
