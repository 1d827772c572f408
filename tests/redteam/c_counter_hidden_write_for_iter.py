# redteam: an unlocked increment whose write is setattr inside a map object, run by a for loop over it after the read
# kind: cell
# target: counter
# score: counter=2
# message: counter: no_lost_update
# why: found by a white-box red-team helper (stop 33: 10/10, no flag; racy on real threads): the write is setattr run by C code that no CALL instruction reaches (a map(setattr, ...) built before the read, drained by for/unpacking/[*w]/in after it), so the thread scheduler sees a read and no write
# known-bug: the thread scheduler takes no scheduling point at opcodes that run C code without a CALL (FOR_ITER, UNPACK_SEQUENCE, LIST_EXTEND, CONTAINS_OP over a map of setattr): open
import threading


def _next(v: int) -> int:
    return v + 1


class SafeCounter:
    def __init__(self) -> None:
        self.count = 0

    def increment(self) -> None:
        box = [0]
        writer = map(setattr, (self,), ("count",), box)
        v = self.count
        box[0] = _next(v)
        for _ in writer:
            pass

    @property
    def value(self) -> int:
        return self.count


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
