# verdict: pass
# why: BoundedSemaphore + RLock, lazy creation counted under the lock, a generator context manager
import threading
from contextlib import contextmanager


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError(size)
        self._sem = threading.BoundedSemaphore(size)
        self._lock = threading.RLock()
        self._size = size
        self._factory = factory
        self._idle = []
        self._busy = []

    def acquire(self, timeout=None):
        if not self._sem.acquire(True, timeout):
            raise TimeoutError(f"timed out after {timeout}s")
        with self._lock:
            if self._idle:
                conn = self._idle.pop()
            else:
                conn = self._factory()
            self._busy.append(conn)
        return conn

    def release(self, resource):
        with self._lock:
            if not any(c is resource for c in self._busy):
                raise ValueError("resource not in use")
            self._busy = [c for c in self._busy if c is not resource]
            self._idle.append(resource)
            self._sem.release()

    @contextmanager
    def connection(self, timeout=None):
        conn = self.acquire(timeout)
        try:
            yield conn
        finally:
            self.release(conn)

    @property
    def available(self):
        with self._lock:
            return self._size - len(self._busy)
