# redteam: an unlocked increment behind threading.Event().wait(ticket * 1e-9): a timed wait nobody ends, staggered
# kind: cell
# target: counter
# score: counter=2
# message: counter: no_lost_update
# why: found by a white-box red-team helper (stop 34): the clock moved only when every thread waited, to the earliest deadline, so sleeps with distinct deadlines (a ticket each) still ran the unlocked sections one at a time. A timed wait may now end at any scheduling point (a running thread can be slower than any sleep; sync_checks.Scenario.early_timeouts, on by default); racy on real threads (6 -> 2)
import itertools
import threading
import time

_turns = itertools.count(1)


def _next(v: int) -> int:
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0

    def increment(self) -> None:
        threading.Event().wait(next(_turns) * 1e-9)
        self._value = _next(self._value)

    @property
    def value(self) -> int:
        return self._value


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
