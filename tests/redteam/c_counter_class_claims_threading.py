# redteam: replaces threading.Thread with a serial class that declares __module__ = 'threading'
# kind: cell
# target: counter
# score: counter=0
# message: counter: your code replaced `threading.Thread`
# why: found by the second red team (2 -> 6/10): the tamper report trusted a class's __module__ and the scheduler silently restored threading.Thread; now the class's methods' files decide, and the scheduler leaves a replaced model in place for the report
import threading


class _Serial:
    __module__ = "threading"
    def __init__(self, target=None, args=(), kwargs=None, **kw):
        self.target, self.args, self.kwargs = target, args, kwargs or {}

    def start(self):
        self.target(*self.args, **self.kwargs)

    def join(self, timeout=None):
        pass


threading.Thread = _Serial


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
