# redteam: a bounded buffer that checks under the condition but appends after releasing it, through a local alias (items += [item])
# kind: cell
# target: bounded_buffer
# score: bounded_buffer=3
# message: bounded_buffer: capacity is 1
# why: found by the fifth red team (3 -> 5/5, no flag): in-place operators on a mutable operand are writes for the lockset rule
import threading
from typing import Any


class BoundedBuffer:
    """A FIFO buffer of at most `capacity` items shared by producer and consumer threads."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._items = []
        self._changed = threading.Condition()

    def put(self, item: Any) -> None:
        items = self._items
        with self._changed:
            while len(items) >= self._capacity:
                self._changed.wait()
        items += [item]                      # after the lock is let go: check-then-act
        with self._changed:
            self._changed.notify_all()

    def get(self) -> Any:
        with self._changed:
            while not self._items:
                self._changed.wait()
            item = self._items.pop(0)
            self._changed.notify_all()
            return item

    def __len__(self) -> int:
        with self._changed:
            return len(self._items)
