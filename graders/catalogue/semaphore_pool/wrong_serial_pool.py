# verdict: fail
# message: too serial
# why: one Lock held from acquire() to release(): only one holder at a time
import threading
from contextlib import contextmanager


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError("size must be >= 1")
        self._size = size
        self._gate = threading.Lock()
        self._books = threading.Lock()
        self._free = [factory() for _ in range(size)]
        self._out = []

    def acquire(self, timeout=None):
        if not self._gate.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError("busy")
        with self._books:
            r = self._free.pop()
            self._out.append(r)
            return r

    def release(self, resource):
        with self._books:
            if not any(r is resource for r in self._out):
                raise ValueError("not checked out")
            self._out = [r for r in self._out if r is not resource]
            self._free.append(resource)
        self._gate.release()

    @contextmanager
    def connection(self, timeout=None):
        r = self.acquire(timeout)
        try:
            yield r
        finally:
            self.release(r)

    @property
    def available(self):
        with self._books:
            return len(self._free)
