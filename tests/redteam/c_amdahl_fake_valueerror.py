# redteam: amdahl raising a class of its own named ValueError (a RuntimeError) for impossible inputs
# kind: cell
# target: amdahl
# score: amdahl=4
# message: amdahl: a class of yours, a RuntimeError and not the built-in ValueError
# why: found by the independent red team of 2026-12-08 (got 5, honest 4, no flag): the judge asked an exception only for its class's name, and the cell can name a class anything. Stopped: the subject reports the built-in exception classes an exception is an instance of, by the class's real MRO (kit.subject.builtin_kinds), and the judge asks that list (Raised.is_a); a subclass of the real ValueError still counts
class ValueError(RuntimeError):  # not the builtin ValueError: `except ValueError` in a caller never catches it
    pass


def amdahl_speedup(p: float, n: int) -> float:
    if not (0.0 <= p <= 1.0) or n < 1:
        raise ValueError(f"bad input p={p}, n={n}")
    return 1.0 / ((1.0 - p) + p / n)
