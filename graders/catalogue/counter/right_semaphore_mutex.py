# verdict: pass
# why: a binary Semaphore used as the mutex, with a module-level helper
import threading


class SafeCounter:
    def __init__(self) -> None:
        self.count = 0
        self.mutex = threading.Semaphore(1)

    def increment(self) -> None:
        with self.mutex:
            current = self.count
            self.count = current + 1

    @property
    def value(self) -> int:
        with self.mutex:
            return self.count


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

