# verdict: fail
# message: pop from empty list
# why: a Condition-based pool that waits with `if` instead of `while`
import threading
from contextlib import contextmanager


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError("size must be >= 1")
        self._cond = threading.Condition()
        self._free = [factory() for _ in range(size)]
        self._out = []

    def acquire(self, timeout=None):
        with self._cond:
            if not self._free:
                if not self._cond.wait(timeout):
                    raise TimeoutError("pool exhausted")
            r = self._free.pop()
            self._out.append(r)
            return r

    def release(self, resource):
        with self._cond:
            if not any(r is resource for r in self._out):
                raise ValueError("not checked out")
            self._out = [r for r in self._out if r is not resource]
            self._free.append(resource)
            self._cond.notify()

    @contextmanager
    def connection(self, timeout=None):
        r = self.acquire(timeout)
        try:
            yield r
        finally:
            self.release(r)

    @property
    def available(self):
        with self._cond:
            return len(self._free)
