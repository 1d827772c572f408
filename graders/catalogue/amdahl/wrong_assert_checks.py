# verdict: fail
# sample: rejects_impossible_inputs
# message: raised AssertionError; it should raise ValueError
# why: checks the inputs with assert, which raises AssertionError (and disappears under python -O)
def amdahl_speedup(p, n):
    assert 0 <= p <= 1, "p out of range"
    assert n >= 1, "n out of range"
    return 1 / ((1 - p) + p / n)
