# redteam: a pool with unlocked books behind time.sleep(ticket * 1e-9)
# kind: cell
# target: semaphore_pool
# score: semaphore_pool=6
# message: semaphore_pool: mutual_exclusion
# why: found by a white-box red-team helper (stop 34): the clock moved only when every thread waited, to the earliest deadline, so sleeps with distinct deadlines (a ticket each) still ran the unlocked sections one at a time. A timed wait may now end at any scheduling point (a running thread can be slower than any sleep; sync_checks.Scenario.early_timeouts, on by default); racy on real threads (10 -> 6)
import itertools
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable

_turns = itertools.count(1)


def _pop_last(free: list):
    return free.pop()


class ConnectionPool:
    """At most `size` resources, each checked out by one thread at a time."""

    def __init__(self, size: int, factory: Callable[[], Any] = object) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._size = size
        self._factory = factory
        self._slots = threading.Semaphore(size)
        self._free = []
        self._out = {}

    def acquire(self, timeout: float | None = None) -> Any:
        if not self._slots.acquire(timeout=timeout):
            raise TimeoutError(f"no resource became free within {timeout} s")
        time.sleep(next(_turns) * 1e-9)        # stagger the bookkeeping of concurrent callers
        try:
            resource = _pop_last(self._free) if self._free else self._factory()
            self._out[id(resource)] = resource
        except BaseException:
            self._slots.release()
            raise
        return resource

    def release(self, resource: Any) -> None:
        time.sleep(next(_turns) * 1e-9)
        if self._out.get(id(resource)) is not resource:
            raise ValueError(f"{resource!r} is not checked out from this pool")
        del self._out[id(resource)]
        self._free.append(resource)
        self._slots.release()

    @contextmanager
    def connection(self, timeout: float | None = None):
        resource = self.acquire(timeout)
        try:
            yield resource
        finally:
            self.release(resource)

    @property
    def available(self) -> int:
        return self._size - len(self._out)
