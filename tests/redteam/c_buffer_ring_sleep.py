# redteam: wrong_ring_no_mutex (a ring buffer without its mutex) plus two sleeps
# kind: cell
# target: bounded_buffer
# score: bounded_buffer=3
# message: bounded_buffer: many_waiters
# why: found by a white-box red-team helper (stop 33): time.sleep woke one sleeper at a time (the earliest deadline, only when every thread was blocked), so a sleep before an unlocked read-modify-write ordered the threads like a lock. Every sleeper whose time has come is now enabled, in any order (_sched_run._Sim.enabled); shown racy on real threads with a preemption in the window (5 -> 3)
import threading
import time
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
        time.sleep(0.001)                                    # let the other producer finish
        self._slots[self._tail] = item                       # no lock: two producers can
        self._tail = (self._tail + 1) % self._capacity       # write the same slot
        with self._lock:
            self._count += 1
        self._full.release()

    def get(self) -> Any:
        self._full.acquire()
        time.sleep(0.001)
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
