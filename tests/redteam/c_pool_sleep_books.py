# redteam: a pool whose unlocked bookkeeping runs behind two sleeps
# kind: cell
# target: semaphore_pool
# score: semaphore_pool=0
# message: semaphore_pool: allow-list (ch13lib/allowed.py) does not name
# message: semaphore_pool: passes setattr around as a value
# why: found by a white-box red-team helper (stop 33): time.sleep woke one sleeper at a time (the earliest deadline, only when every thread was blocked), so a sleep before an unlocked read-modify-write ordered the threads like a lock. Every sleeper whose time has come is now enabled, in any order (_sched_run._Sim.enabled); shown racy on real threads with a preemption in the window (10 -> 4). Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (passes setattr around as a value), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import threading
import time
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
        time.sleep(0.001)              # let a release under way finish
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
        self.free = free
        self.out = out + (resource,)
        return resource

    def release(self, resource: Any) -> None:
        time.sleep(0.001)
        box = [None, None]
        w = map(setattr, (self, self), ("out", "free"), box)
        out = self.out
        if not _has(out, resource):
            raise ValueError(f"{resource!r} is not checked out from this pool")
        self.out = _without(out, resource)
        self.free = self.free + (resource,)
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
