# redteam: an unlocked read-modify-write whose write hides behind an operator: `self << v` calls a functools.partialmethod(setattr) with no call instruction and no STORE opcode
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: uses functools.partialmethod
# why: found while closing c_counter_setattr_write (10/10 with call points alone). Library code your code enters without a call instruction (an operator, a property, a descriptor) is a scheduling point too. Since stop 34 refused outright (0 in every test, the sequential one too): a class of the cell's whose dunder is no Python code, or made or changed at run time, is what let six more spellings hide a write (_sched_code._hidden_dunders). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (uses functools.partialmethod), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import functools
import threading


class SafeCounter:
    __lshift__ = functools.partialmethod(setattr, "n")

    def __init__(self) -> None:
        self.n = 0

    def increment(self) -> None:
        self << (self.n + 1)

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
