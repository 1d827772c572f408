# redteam: an unlocked increment whose write is setattr inside a map object, run by a for loop over it after the read
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: passes setattr around as a value
# why: found by a white-box red-team helper (stop 33: 10/10, no flag; racy on real threads): the write is setattr run by C code that no CALL instruction reaches (a map(setattr, ...) built before the read, drained by for/unpacking/[*w]/in after it), so the thread scheduler sees a read and no write. Closed at stop 34: every opcode that drains an operand in C (FOR_ITER, SEND, unpacking, [*w], {*w}, {**d}, f(*w), an operator on an object that is no builtin value) is an access to an unknown location unless the operand is a builtin value or its iterator (_sched_run.Run._drain). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (passes setattr around as a value), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
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
