# verdict: pass
# why: honest idioms the old static screen zeroed (20/30 for a correct counter): vars(self) in a __repr__ and setattr/getattr with a computed name on the student's own object
import threading


class SafeCounter:
    FIELDS = ("_count",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        for name in self.FIELDS:
            setattr(self, name, 0)

    def increment(self) -> None:
        with self._lock:
            name = self.FIELDS[0]
            setattr(self, name, getattr(self, name) + 1)

    @property
    def value(self) -> int:
        with self._lock:
            return self._count

    def __repr__(self) -> str:
        return f"SafeCounter({vars(self)['_count']})"


def count_with_threads(n_threads: int, n_increments: int) -> int:
    counter = SafeCounter()

    def work():
        for _ in range(n_increments):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counter.value
