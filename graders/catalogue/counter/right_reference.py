# verdict: pass
# why: the reference solution (one Lock around the read-modify-write)
import threading


class SafeCounter:
    """一个可以被多个线程同时递增、且不会丢失更新的计数器。

    A counter that many threads may increment at once without losing an update.
    """

    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    def increment(self) -> None:
        with self._lock:            # the read AND the write of `+= 1` in one critical section
            self._value += 1

    @property
    def value(self) -> int:
        with self._lock:
            return self._value


def count_with_threads(n_threads: int, n_increments: int) -> int:
    """在同一个 SafeCounter 上启动 n_threads 个线程, 每个递增 n_increments 次; join 全部线程; 返回计数。

    Start n_threads threads on ONE SafeCounter, each incrementing n_increments times; join; return the count.
    """
    counter = SafeCounter()

    def work() -> None:
        for _ in range(n_increments):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()                    # every worker has finished before we read the count
    return counter.value
