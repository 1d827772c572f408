# verdict: fail
# message: join every worker
# why: waits with time.sleep instead of join (daemon threads): works on a quiet machine only
import time
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
        threading.Thread(target=work, daemon=True).start()
    time.sleep(0.1)
    return counter.value
