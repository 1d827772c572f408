# verdict: fail
# message: join every worker
# why: starts the workers but never joins them, so it returns early
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

    def work() -> None:
        for _ in range(n_increments):
            counter.increment()

    for _ in range(n_threads):
        threading.Thread(target=work).start()
    return counter.value
