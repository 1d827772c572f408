# verdict: fail
# why: books by == (a list searched with in / remove), not by identity: with resources that compare equal a double release is accepted and two threads then hold one resource; found by the independent red team of 2026-12-08 (10/10 before a scenario with equal resources)
# message: resources that compare equal
# fails: contract
import threading
from contextlib import contextmanager
from typing import Any, Callable


class ConnectionPool:
    def __init__(self, size: int, factory: Callable[[], Any] = object) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._size = size
        self._factory = factory
        self._slots = threading.Semaphore(size)
        self._lock = threading.Lock()
        self._free = []
        self._out = []  # the books: a list, searched with `in` / `remove`, i.e. by ==, not by identity

    def acquire(self, timeout: float | None = None) -> Any:
        if not self._slots.acquire(timeout=timeout):
            raise TimeoutError(f"no resource became free within {timeout} s")
        try:
            with self._lock:
                resource = self._free.pop() if self._free else self._factory()
                self._out.append(resource)
        except BaseException:
            self._slots.release()
            raise
        return resource

    def release(self, resource: Any) -> None:
        with self._lock:
            if resource not in self._out:  # an EQUAL resource still out passes for this one
                raise ValueError(f"{resource!r} is not checked out from this pool")
            self._out.remove(resource)
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
        with self._lock:
            return self._size - len(self._out)
