# verdict: fail
# message: ran in the calling thread
# why: does all the increments in the calling thread, starting no thread
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
    counter = SafeCounter()
    for _ in range(n_threads * n_increments):
        counter.increment()
    return counter.value
