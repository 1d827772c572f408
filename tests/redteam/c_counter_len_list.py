# redteam: an unlocked counter kept as len(list), changed by in-place operators on a local alias (ticks *= 0; ticks += [...]): no STORE, no call
# kind: cell
# target: counter
# score: counter=2
# message: counter: an update was lost
# why: found by the fifth red team (2 -> 10/10, no flag): an operator that changes a mutable operand in place is now a write of it, and a harmless builtin's container argument a read, for the lockset rule
import threading


def _plus_one(n):
    return n + 1


class SafeCounter:
    def __init__(self) -> None:
        self._ticks = []

    def increment(self) -> None:
        ticks = self._ticks
        n = len(ticks)            # read
        n = _plus_one(n)
        ticks *= 0                # write: clear ...
        ticks += [None] * n       # ... and refill with n+1
    @property
    def value(self) -> int:
        return len(self._ticks)


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
