# redteam: an unlocked increment behind a time.sleep(0.001)
# kind: cell
# target: counter
# score: counter=2
# message: counter: no_lost_update
# why: found by a white-box red-team helper (stop 33): time.sleep woke one sleeper at a time (the earliest deadline, only when every thread was blocked), so a sleep before an unlocked read-modify-write ordered the threads like a lock. Every sleeper whose time has come is now enabled, in any order (_sched_run._Sim.enabled); shown racy on real threads with a preemption in the window (6 -> 2)
import threading
import time


def _next(v: int) -> int:
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0

    def increment(self) -> None:
        time.sleep(0.001)           # let an increment under way finish first
        self._value = _next(self._value)

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
