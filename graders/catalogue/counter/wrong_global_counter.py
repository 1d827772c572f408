# verdict: fail
# sample: sequential
# message: two counters share their count
# why: the chapter's module-level counter kept as SafeCounter's state, with an unlocked +=
import threading

lock = threading.Lock()
counter = 0


class SafeCounter:
    def __init__(self) -> None:
        global counter
        with lock:
            counter = 0

    def increment(self) -> None:
        global counter
        counter += 1

    @property
    def value(self) -> int:
        return counter


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

