# verdict: pass
# why: a Condition-based pool with a while loop and a deadline, resources made eagerly
import threading
import time
from contextlib import contextmanager


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError("size must be >= 1")
        self._cond = threading.Condition()
        self._free = [factory() for _ in range(size)]
        self._out = []

    def acquire(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._free:
                if deadline is None:
                    self._cond.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError("pool exhausted")
                    self._cond.wait(left)
            r = self._free.pop(0)
            self._out.append(r)
            return r

    def release(self, resource):
        with self._cond:
            for i, r in enumerate(self._out):
                if r is resource:
                    del self._out[i]
                    self._free.append(resource)
                    self._cond.notify()
                    return
            raise ValueError("not checked out from this pool")

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
