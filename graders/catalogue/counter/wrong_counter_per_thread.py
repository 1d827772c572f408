# verdict: fail
# sample: count_with_threads
# message: different SafeCounter objects
# why: each worker gets its own counter, and the results are summed
import threading


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    def increment(self) -> None:
        with self._lock:
            self._value += 1

    @property
    def value(self) -> int:
        with self._lock:
            return self._value


def count_with_threads(n_threads: int, n_increments: int) -> int:
    counters = [SafeCounter() for _ in range(n_threads)]

    def work(c) -> None:
        for _ in range(n_increments):
            c.increment()

    threads = [threading.Thread(target=work, args=(c,)) for c in counters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(c.value for c in counters)
