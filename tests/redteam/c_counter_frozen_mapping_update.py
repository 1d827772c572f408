# redteam: an unlocked increment whose write is collections.abc.MutableMapping.update on a dict (frozen stdlib code)
# kind: cell
# target: counter
# score: counter=2
# message: counter: no_lost_update
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 10 -> 2): frozen modules other than the import system were neither traced nor a point, so MutableMapping.update (Python, in <frozen _collections_abc>) wrote out of sight; they are now library code like any (_sched_run.Run._global_trace)
import threading
from collections.abc import MutableMapping


class SafeCounter:
    def __init__(self) -> None:
        self._d = {"n": 0}

    def increment(self) -> None:
        d = self._d
        v = d["n"]
        MutableMapping.update(d, n=v + 1)

    @property
    def value(self) -> int:
        return self._d["n"]


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
