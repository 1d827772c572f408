# redteam: a pool whose release() checks then acts with no lock, its writes hidden in in-place set/list operators on local aliases
# kind: cell
# target: semaphore_pool
# score: semaphore_pool=6
# message: semaphore_pool: exactly one must succeed
# why: found by the fifth red team (6 -> 10/10, no flag): in-place operators on a mutable operand are writes (lockset rule), a concurrent double release is found
import threading
from contextlib import contextmanager
from typing import Any, Callable


def _noted(key):
    return key


class ConnectionPool:
    """At most `size` resources; the books are kept with in-place set/list operators (no lock)."""

    def __init__(self, size: int, factory: Callable[[], Any] = object) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._size = size
        self._factory = factory
        self._slots = threading.Semaphore(size)
        self._free = []
        self._lock = threading.Lock()   # guards acquire's bookkeeping
        self._out = set()            # ids of the resources checked out

    def acquire(self, timeout: float | None = None) -> Any:
        if not self._slots.acquire(timeout=timeout):
            raise TimeoutError(f"no resource became free within {timeout} s")
        with self._lock:
            resource = self._free.pop() if self._free else self._factory()
            out = self._out
            out |= {id(resource)}
        return resource

    def release(self, resource: Any) -> None:
        out = self._out
        key = id(resource)
        if key not in out:                       # check ...
            raise ValueError(f"{resource!r} is not checked out from this pool")
        key = _noted(key)
        out -= {key}                             # ... then act, no lock
        free = self._free
        free += [resource]
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
