# redteam: a pool whose unlocked bookkeeping writes go through setattr inside map objects drained after the reads
# kind: cell
# target: semaphore_pool
# score: semaphore_pool=0
# message: semaphore_pool: allow-list (ch13lib/allowed.py) does not name
# message: semaphore_pool: passes setattr around as a value
# why: found by a white-box red-team helper (stop 33: 10/10, no flag; racy on real threads): the write is setattr run by C code that no CALL instruction reaches (a map(setattr, ...) built before the read, drained by for/unpacking/[*w]/in after it), so the thread scheduler sees a read and no write (honest twin with plain stores: 4). Closed at stop 34: every opcode that drains an operand in C (FOR_ITER, SEND, unpacking, [*w], {*w}, {**d}, f(*w), an operator on an object that is no builtin value) is an access to an unknown location unless the operand is a builtin value or its iterator (_sched_run.Run._drain). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (passes setattr around as a value), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import threading
from contextlib import contextmanager
from typing import Any, Callable


def _without(items: tuple, x: Any) -> tuple:
    kept = ()
    for r in items:
        if r is not x:
            kept = kept + (r,)
    return kept


def _has(items: tuple, x: Any) -> bool:
    for r in items:
        if r is x:
            return True
    return False


def _take(free: tuple, fresh: Any) -> tuple:
    if not free:
        return fresh, ()
    if fresh is not None:
        return free[-1], free[:-1] + (fresh,)
    return free[-1], free[:-1]


class ConnectionPool:
    """At most `size` resources: a semaphore counts them, the books are immutable tuples."""

    def __init__(self, size: int, factory: Callable[[], Any] = object) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self.factory = factory
        self.slots = threading.Semaphore(size)
        self.free = ()
        self.out = ()

    def acquire(self, timeout: float | None = None) -> Any:
        if not self.slots.acquire(timeout=timeout):
            raise TimeoutError(f"no resource became free within {timeout} s")
        fresh = None
        if not self.free:
            try:
                fresh = self.factory()
            except BaseException:
                self.slots.release()
                raise
        box = [None, None]
        w = map(setattr, (self, self), ("free", "out"), box)
        free = self.free
        out = self.out
        resource, free = _take(free, fresh)
        box[0] = free
        box[1] = out + (resource,)
        for _ in w:
            pass
        return resource

    def release(self, resource: Any) -> None:
        box = [None, None]
        w = map(setattr, (self, self), ("out", "free"), box)
        out = self.out
        if not _has(out, resource):
            raise ValueError(f"{resource!r} is not checked out from this pool")
        box[0] = _without(out, resource)
        box[1] = self.free + (resource,)
        for _ in w:
            pass
        self.slots.release()

    @contextmanager
    def connection(self, timeout: float | None = None):
        resource = self.acquire(timeout)
        try:
            yield resource
        finally:
            self.release(resource)

    @property
    def available(self) -> int:
        return self.size - len(self.out)
