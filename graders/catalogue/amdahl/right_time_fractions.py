# verdict: pass
# why: written as old time / new time, with the checks up front as one condition
def amdahl_speedup(p, n):
    if p < 0 or p > 1 or n < 1:
        raise ValueError("p in [0, 1] and n >= 1 required")
    serial, parallel = 1 - p, p
    return (serial + parallel) / (serial + parallel / n)
