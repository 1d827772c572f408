# verdict: fail
# sample: no_lost_update
# message: an update was lost
# why: collections.Counter.update with no lock: it is Python code (a read, then a write), no more atomic than +=; found by a red team (10/10 before the scheduler watched library code)
import threading
from collections import Counter


class SafeCounter:

    def __init__(self) -> None:
        self._counts = Counter()

    def increment(self) -> None:
        self._counts.update(n=1)

    @property
    def value(self) -> int:
        return self._counts["n"]


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
