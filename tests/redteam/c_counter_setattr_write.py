# redteam: an unlocked read-modify-write whose write is a setattr() call, which the scheduler does not trace as a write: it never sees a racy location and never preempts there
# kind: cell
# target: counter
# score: counter=2
# message: counter: an update was lost
# why: found by the fourth red team (2 -> 10/10, no flag). The scheduler makes scheduling points of traced reads and writes (STORE_* opcodes); a write through a call is invisible to it (issue 14)
# known-bug: issue 14: ch13lib.sched has no scheduling point at a call that writes shared state (setattr, vars()[...]=, object.__setattr__)
import threading


class SafeCounter:
    def __init__(self) -> None:
        self.n = 0

    def increment(self) -> None:
        setattr(self, "n", self.n + 1)

    @property
    def value(self) -> int:
        return self.n


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
