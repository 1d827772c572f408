# verdict: pass
# why: count_with_threads with a ThreadPoolExecutor (its workers are threading.Thread objects)
import threading
from concurrent.futures import ThreadPoolExecutor


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    def increment(self) -> None:
        with self._lock:
            self._value += 1

    @property
    def value(self) -> int:
        return self._value


def count_with_threads(n_threads: int, n_increments: int) -> int:
    counter = SafeCounter()

    def work() -> None:
        for _ in range(n_increments):
            counter.increment()

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        futures = [pool.submit(work) for _ in range(n_threads)]
        for f in futures:
            f.result()
    return counter.value
