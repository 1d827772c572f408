# verdict: pass
# why: the classic: a semaphore counting free slots, one counting items, and a mutex
import threading


class BoundedBuffer:
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(capacity)
        self._slots = threading.Semaphore(capacity)
        self._filled = threading.Semaphore(0)
        self._mutex = threading.Lock()
        self._buf = []

    def put(self, item):
        self._slots.acquire()
        with self._mutex:
            self._buf.append(item)
        self._filled.release()

    def get(self):
        self._filled.acquire()
        with self._mutex:
            item = self._buf.pop(0)
        self._slots.release()
        return item

    def __len__(self):
        with self._mutex:
            return len(self._buf)
