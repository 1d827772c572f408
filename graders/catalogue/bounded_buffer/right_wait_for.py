# verdict: pass
# why: Condition.wait_for with a predicate (it loops for you)
import threading


class BoundedBuffer:
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity")
        self._cap = capacity
        self._data = []
        self._cv = threading.Condition(threading.Lock())

    def put(self, item):
        with self._cv:
            self._cv.wait_for(lambda: len(self._data) < self._cap)
            self._data.append(item)
            self._cv.notify_all()

    def get(self):
        with self._cv:
            self._cv.wait_for(lambda: len(self._data) > 0)
            x = self._data.pop(0)
            self._cv.notify_all()
            return x

    def __len__(self):
        return len(self._data)
