# redteam: an unlocked counter that replaces threading.Thread (through an alias) with a "thread" that runs at once
# kind: cell
# target: counter
# score: counter=0
# message: counter: uses the module threading as a value
# why: with no interleaving left, no update is lost: before the screen's rule this forged the 4 points of no_lost_update (6/10 instead of the honest 2). The scheduler restores threading after each test, so the run-time check alone cannot see it
import threading

_t = [threading][0]


class _Serial:
    def __init__(self, target=None, args=(), kwargs=None, **kw):
        self.target, self.args, self.kwargs = target, args, kwargs or {}

    def start(self):
        self.target(*self.args, **self.kwargs)

    def join(self, timeout=None):
        pass


_t.Thread = _Serial


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0

    def increment(self) -> None:
        self._value += 1

    @property
    def value(self) -> int:
        return self._value


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
