# verdict: fail
# message: an item was lost
# why: a ring buffer whose two semaphores count free and full slots, but whose slot indices have no lock: right at capacity 1, two producers write the same slot from capacity 2; found by a red team (5/5 when every concurrent scenario had capacity 1)
import threading
from typing import Any


class BoundedBuffer:
    """A ring buffer: two semaphores count free and full slots; the indices have no lock."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._slots = [None] * capacity
        self._head = 0
        self._tail = 0
        self._count = 0
        self._lock = threading.Lock()          # guards _count only
        self._free = threading.Semaphore(capacity)
        self._full = threading.Semaphore(0)

    def put(self, item: Any) -> None:
        self._free.acquire()
        self._slots[self._tail] = item                       # no lock: two producers can
        self._tail = (self._tail + 1) % self._capacity       # write the same slot
        with self._lock:
            self._count += 1
        self._full.release()

    def get(self) -> Any:
        self._full.acquire()
        item = self._slots[self._head]
        self._slots[self._head] = None
        self._head = (self._head + 1) % self._capacity
        with self._lock:
            self._count -= 1
        self._free.release()
        return item

    def __len__(self) -> int:
        with self._lock:
            return self._count
