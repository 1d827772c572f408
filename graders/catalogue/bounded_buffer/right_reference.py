# verdict: pass
# why: the reference solution (one Condition, while around wait, notify_all)
import threading
from collections import deque
from typing import Any


class BoundedBuffer:
    """生产者线程和消费者线程共享的先进先出缓冲区, 最多容纳 `capacity` 个元素。

    A FIFO buffer of at most `capacity` items shared by producer and consumer threads.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._items = deque()
        self._changed = threading.Condition()     # one condition: "the buffer changed"

    def put(self, item: Any) -> None:
        with self._changed:
            while len(self._items) >= self._capacity:   # while, not if: re-check after waking
                self._changed.wait()
            self._items.append(item)
            self._changed.notify_all()              # producers AND consumers wait here

    def get(self) -> Any:
        with self._changed:
            while not self._items:
                self._changed.wait()
            item = self._items.popleft()
            self._changed.notify_all()
            return item

    def __len__(self) -> int:
        with self._changed:
            return len(self._items)
