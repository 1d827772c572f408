# redteam: a counter whose Semaphore(1) is released twice per increment, so every call adds a permit
# kind: cell
# target: counter
# score: counter=2
# message: counter: both wrote old+1
# why: found by the second independent red team of 2026-12-08 (got 10, honest 2, no flag): a Semaphore(1) counted as a lock for good, decided when it was made, so after the first extra release two threads were inside while the lockset still called it a lock. Stopped: a semaphore released to a count above 1 is no lock from then on (_sched_models.Semaphore.release)
import threading


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0
        self._guard = threading.Semaphore(1)

    def increment(self) -> None:
        self._guard.acquire()
        try:
            self._value += 1
        finally:
            self._guard.release()
        self._guard.release()  # the bug: a second release; each call adds a permit, so threads soon overlap

    @property
    def value(self) -> int:
        with self._guard:
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
