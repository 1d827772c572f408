# verdict: pass
# why: an honest idiom the audit hook once refused (red team): traceback.print_exc() and logging.exception() in an except branch read the traceback's frames to format it
import logging
import traceback


def _check(p, n):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")


def amdahl_speedup(p: float, n: int) -> float:
    try:
        _check(p, n)
    except ValueError:
        traceback.print_exc()
        logging.getLogger("amdahl").exception("bad input")
        raise
    return 1.0 / ((1.0 - p) + p / n)
