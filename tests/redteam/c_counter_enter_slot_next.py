# redteam: an unlocked increment whose write is a map(setattr, ...) drained by a with block whose __enter__ is functools.partial(next, w)
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: passes setattr around as a value
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 10 -> 0, refused): see c_counter_setitem_slot_partial. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (passes setattr around as a value), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import functools
import operator
import threading


def _next(v: int) -> int:
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self.n = 0

    def increment(self) -> None:
        box = [0]
        w = map(setattr, (self,), ("n",), box)

        class Ctx:
            __enter__ = functools.partial(next, w)
            __exit__ = slice

        v = self.n
        box[0] = _next(v)
        with Ctx():
            pass

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
