# verdict: fail
# message: x not in list
# why: no semaphore: polls with sleep, then takes the last free resource in a separate step (check-then-act)
import time
from contextlib import contextmanager


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.free = [factory() for _ in range(size)]
        self.out = []

    def acquire(self, timeout=None):
        waited = 0.0
        while not self.free:
            if timeout is not None and waited >= timeout:
                raise TimeoutError("no free resource")
            time.sleep(0.01)
            waited += 0.01
        r = self.free[-1]
        self.out.append(r)
        self.free.remove(r)
        return r

    def release(self, resource):
        if not any(r is resource for r in self.out):
            raise ValueError("not checked out")
        self.out = [r for r in self.out if r is not resource]
        self.free.append(resource)

    @contextmanager
    def connection(self, timeout=None):
        r = self.acquire(timeout)
        try:
            yield r
        finally:
            self.release(r)

    @property
    def available(self):
        return len(self.free)
