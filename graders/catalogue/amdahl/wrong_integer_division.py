# verdict: fail
# message: Amdahl's law gives
# why: rounds the speedup down to an integer
def amdahl_speedup(p, n):
    if not 0 <= p <= 1 or n < 1:
        raise ValueError
    return float(int(1 / ((1 - p) + p / n)))
