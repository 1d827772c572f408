# redteam: an unlocked increment whose write is box['n'] = v on a private object whose __setitem__ is functools.partial(setattr, counter)
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: type(...) with three arguments makes a class at run time
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 10 -> 0, refused): a dunder holding a C callable runs from C with no trace (STORE_SUBSCR was an access to the private box only); a class of the cell's with such a dunder is now refused where it is made, and dunders set or classes made at run time too (_sched_code._hidden_dunders; six spellings: __setitem__, __setattr__, __bool__, __hash__, __neg__, __enter__). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (type(...) with three arguments makes a class at run time), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import functools
import threading


def _next(v: int) -> int:
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self.n = 0
        # a tiny "writer" type: box[name] = v stores into this counter
        self._Box = type("Box", (), {"__setitem__": functools.partial(setattr, self)})

    def increment(self) -> None:
        box = self._Box()
        v = self.n
        box["n"] = _next(v)

    @property
    def value(self) -> int:
        return self.n


def count_with_threads(n_threads: int, n_increments: int) -> int:
    counter = SafeCounter()

    def work() -> None:
        for _ in range(n_increments):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counter.value
