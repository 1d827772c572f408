# verdict: pass
# why: a queue.Queue holds the free resources (made lazily); a set of ids guarded by a Lock tracks who is out
import queue
import threading


class _Lease:
    def __init__(self, pool, timeout):
        self.pool, self.timeout, self.resource = pool, timeout, None

    def __enter__(self):
        self.resource = self.pool.acquire(self.timeout)
        return self.resource

    def __exit__(self, *exc):
        self.pool.release(self.resource)
        return False


class ConnectionPool:
    def __init__(self, size, factory=object):
        if size < 1:
            raise ValueError("size must be positive")
        self.size = size
        self.factory = factory
        self.free = queue.Queue()
        for _ in range(size):
            self.free.put(None)          # None = a slot whose resource is not made yet
        self.lock = threading.Lock()
        self.out = {}

    def acquire(self, timeout=None):
        try:
            r = self.free.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no resource free") from None
        if r is None:
            r = self.factory()
        with self.lock:
            self.out[id(r)] = r
        return r

    def release(self, resource):
        with self.lock:
            if self.out.get(id(resource)) is not resource:
                raise ValueError("not checked out")
            del self.out[id(resource)]
        self.free.put(resource)

    def connection(self, timeout=None):
        return _Lease(self, timeout)

    @property
    def available(self):
        with self.lock:
            return self.size - len(self.out)
