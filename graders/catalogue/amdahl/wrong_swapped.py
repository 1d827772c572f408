# verdict: fail
# message: Amdahl's law gives
# why: divides the serial part by n instead of the parallel part
def amdahl_speedup(p, n):
    if not 0 <= p <= 1 or n < 1:
        raise ValueError
    return 1 / ((1 - p) / n + p)
