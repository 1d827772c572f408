# redteam: an unlocked counter whose write is an object claiming __func__ = staticmethod(a traced function) while its __call__ is a C partial(setattr): the callee check duck-typed __func__
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: type(...) with three arguments makes a class at run time
# why: found by the fifth red team (2 -> 10/10, no flag): only exact function and bound-method types count as Python code. Since stop 34 refused outright (0 in every test, the sequential one too): a class of the cell's whose dunder is no Python code, or made or changed at run time, is what let six more spellings hide a write (_sched_code._hidden_dunders). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (type(...) with three arguments makes a class at run time), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import threading
from functools import partial


def _plus_one(v):
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self._n = 0
        store = type("Store", (), {"__func__": staticmethod(_plus_one),
                                   "__call__": staticmethod(partial(setattr, self, "_n"))})
        self._store = store()

    def increment(self) -> None:
        self._store(_plus_one(self._n))

    @property
    def value(self) -> int:
        return self._n


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
