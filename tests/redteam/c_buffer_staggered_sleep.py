# redteam: a ring buffer with unlocked indices behind time.sleep(ticket * 1e-9)
# kind: cell
# target: bounded_buffer
# score: bounded_buffer=3
# message: bounded_buffer: many_waiters
# why: found by a white-box red-team helper (stop 34): the clock moved only when every thread waited, to the earliest deadline, so sleeps with distinct deadlines (a ticket each) still ran the unlocked sections one at a time. A timed wait may now end at any scheduling point (a running thread can be slower than any sleep; sync_checks.Scenario.early_timeouts, on by default); racy on real threads (5 -> 3)
import threading
import itertools
import time

_turns = itertools.count(1)
from typing import Any


def _advance(i: int, n: int) -> int:
    return (i + 1) % n


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
        time.sleep(next(_turns) * 1e-9)                                    # let the other producer finish
        self._slots[self._tail] = item                       # no lock: two producers can
        self._tail = _advance(self._tail, self._capacity)       # write the same slot
        with self._lock:
            self._count += 1
        self._full.release()

    def get(self) -> Any:
        self._full.acquire()
        time.sleep(next(_turns) * 1e-9)
        item = self._slots[self._head]
        self._slots[self._head] = None
        self._head = _advance(self._head, self._capacity)
        with self._lock:
            self._count -= 1
        self._free.release()
        return item

    def __len__(self) -> int:
        with self._lock:
            return self._count
