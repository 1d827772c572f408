# verdict: fail
# message: raised ZeroDivisionError; it should raise ValueError
# why: validates p but not n: n = 0 divides by zero instead of being refused
def amdahl_speedup(p, n):
    if not 0 <= p <= 1:
        raise ValueError("p must be in [0, 1]")
    return 1 / ((1 - p) + p / n)
