# verdict: pass
# why: queue.Queue(maxsize) already is a bounded buffer built on condition variables
import queue


class BoundedBuffer:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._q = queue.Queue(maxsize=capacity)

    def put(self, item) -> None:
        self._q.put(item)

    def get(self):
        return self._q.get()

    def __len__(self) -> int:
        return self._q.qsize()
