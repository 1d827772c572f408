# redteam: an unlocked counter whose += runs inside queue.Queue.put on a stand-in self (its not_full/not_empty are no-op context managers): the read-modify-write `self.unfinished_tasks += 1` is in queue.py, code the scheduler trusts and never traces
# kind: cell
# target: counter
# score: counter=2
# message: counter: an update was lost
# why: ch13lib._sched_code._TRUSTED_CODE holds queue.py's file: its frames are no scheduling points, so the racy += inside Queue.put (called with the cell's own object, no lock anywhere) is atomic to the search; in real threads it loses updates like any unlocked +=. Stopped (stop 36): the stdlib's queue and executor code is trusted only on their own objects; on an object of another class it is library code, watched like yours (_sched_code._trusted_frame)
import queue
import threading


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def notify(self):
        pass


class SafeCounter:
    def __init__(self) -> None:
        self.unfinished_tasks = 0
        self.maxsize = 0
        self.not_full = _NoLock()
        self.not_empty = _NoLock()

    def _put(self, item) -> None:
        pass

    def increment(self) -> None:
        queue.Queue.put(self, None)  # self.unfinished_tasks += 1, unlocked

    @property
    def value(self) -> int:
        return self.unfinished_tasks


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
