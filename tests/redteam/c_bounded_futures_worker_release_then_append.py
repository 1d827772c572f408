# redteam: put releases the lock and then appends (check-then-act), the release and the append run by concurrent.futures.thread._worker
# kind: cell
# target: bounded_buffer
# score: bounded_buffer=0
# message: bounded_buffer: allow-list (ch13lib/allowed.py) does not name
# message: bounded_buffer: imports concurrent.futures.thread
# why: found by the twenty-sixth white-box red team (stop 38: full marks, no flag): the scheduler trusted every stdlib frame with no self, so concurrent.futures.thread._worker called by the cell ran its initializer and work items (a Counter.update, lock calls) unseen and as no preemption point; a queue with its _put replaced on the object ran Counter.update inside trusted queue.py. Stopped (stop 38): a self-less stdlib frame is trusted only when trusted code or threading called it, a stdlib call acts for the cell when any stdlib frame above it is untrusted (Run._user_call), and an object whose attributes shadow its class's is not intact. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports concurrent.futures.thread), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import queue
import threading
from collections import deque
from concurrent.futures import Future
from concurrent.futures.thread import _WorkItem, _worker
from typing import Any


def _nobody():
    return None


class BoundedBuffer:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._items = deque()
        self._changed = threading.Condition()

    def put(self, item: Any) -> None:
        self._changed.acquire()
        while len(self._items) >= self._capacity:
            self._changed.wait()
        # check-then-act: the lock is released BEFORE the append (as wrong_append_outside_lock),
        # both run from concurrent.futures.thread's self-less _worker: no scheduling point between
        q = queue.Queue()
        q.put(_WorkItem(Future(), self._items.append, (item,), {}))
        q.put(None)
        _worker(_nobody, q, self._changed.release, ())
        with self._changed:
            self._changed.notify_all()

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
