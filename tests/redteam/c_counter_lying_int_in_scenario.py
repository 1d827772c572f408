# redteam: an unlocked counter whose value is an int subclass that equals everything once two threads incremented it
# kind: cell
# target: counter
# score: counter=2
# message: counter: plain value
# why: found by the second white-box red team (2 -> 10/10): the scenarios' asserts ran in the subject on the student's objects; every comparison in a scenario now sees plain values only (ch13lib.sched.plain_value)
import threading


class _Count(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0
        self._threads = set()

    def increment(self) -> None:
        self._threads.add(threading.current_thread().name)
        self._value += 1

    @property
    def value(self) -> int:
        if len(self._threads) > 1:
            return _Count(self._value)
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
