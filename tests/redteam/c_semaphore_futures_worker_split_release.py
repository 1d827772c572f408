# redteam: release() checks under the lock, then releases and re-takes it before acting, through concurrent.futures.thread._worker
# kind: cell
# target: semaphore_pool
# score: semaphore_pool=0
# message: semaphore_pool: allow-list (ch13lib/allowed.py) does not name
# message: semaphore_pool: imports concurrent.futures.thread
# why: found by the twenty-sixth white-box red team (stop 38: full marks, no flag): the scheduler trusted every stdlib frame with no self, so concurrent.futures.thread._worker called by the cell ran its initializer and work items (a Counter.update, lock calls) unseen and as no preemption point; a queue with its _put replaced on the object ran Counter.update inside trusted queue.py. Stopped (stop 38): a self-less stdlib frame is trusted only when trusted code or threading called it, a stdlib call acts for the cell when any stdlib frame above it is untrusted (Run._user_call), and an object whose attributes shadow its class's is not intact. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports concurrent.futures.thread), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import queue
import threading
from concurrent.futures import Future
from concurrent.futures.thread import _WorkItem, _worker


def _nobody():
    return None

from contextlib import contextmanager
from typing import Any, Callable


class ConnectionPool:
    """At most `size` resources, each checked out by one thread at a time."""

    def __init__(self, size: int, factory: Callable[[], Any] = object) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._size = size
        self._factory = factory
        self._slots = threading.Semaphore(size)   # one permit per resource that may be out
        self._lock = threading.Lock()             # guards _free and _out
        self._free = []                           # made and not checked out
        self._out = {}                            # id(resource) -> resource, checked out

    def acquire(self, timeout: float | None = None) -> Any:
        if not self._slots.acquire(timeout=timeout):
            raise TimeoutError(f"no resource became free within {timeout} s")
        try:
            with self._lock:
                # a permit guarantees a resource: a free one, or room to make one
                resource = self._free.pop() if self._free else self._factory()
                self._out[id(resource)] = resource
        except BaseException:
            self._slots.release()                 # the factory failed: give the permit back
            raise
        return resource

    def release(self, resource: Any) -> None:
        self._lock.acquire()
        checked_out = self._out.get(id(resource)) is resource
        # two critical sections, as the catalogue's wrong_check_then_act_release: the lock is
        # released and taken again between the check and the act (from _worker: no point between)
        q = queue.Queue()
        q.put(_WorkItem(Future(), self._lock.acquire, (), {}))
        q.put(None)
        _worker(_nobody, q, self._lock.release, ())
        if not checked_out:
            self._lock.release()
            raise ValueError(f"{resource!r} is not checked out from this pool")
        self._out.pop(id(resource), None)
        self._free.append(resource)
        self._lock.release()
        self._slots.release()

    @contextmanager
    def connection(self, timeout: float | None = None):
        resource = self.acquire(timeout)
        try:
            yield resource
        finally:                                  # even when the body raises: no leaked permit
            self.release(resource)

    @property
    def available(self) -> int:
        with self._lock:
            return self._size - len(self._out)
