# redteam: an unlocked read-modify-write whose write is a setattr() call (no STORE opcode): the scheduler must make the call its scheduling point
# kind: cell
# target: counter
# score: counter=2
# message: counter: an update was lost
# why: found by the fourth red team (2 -> 10/10, no flag): the scheduler traced STORE_* opcodes only. A call that may touch data out of sight (not your code, not a model, not a harmless builtin) is now a scheduling point where the lockset rule finds it racy
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
