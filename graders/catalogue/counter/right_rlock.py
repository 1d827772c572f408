# verdict: pass
# why: an RLock instead of a Lock; value read without the lock (a single read is atomic)
import threading


class SafeCounter:
    def __init__(self) -> None:
        self._n = 0
        self._guard = threading.RLock()

    def increment(self) -> None:
        self._guard.acquire()
        try:
            self._n = self._n + 1
        finally:
            self._guard.release()

    @property
    def value(self) -> int:
        return self._n


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

