# verdict: pass
# why: workers as a threading.Thread subclass; the lock is a class attribute shared by design per instance
import threading


class SafeCounter:
    def __init__(self):
        self.lock = threading.Lock()
        self.total = 0

    def increment(self):
        self.lock.acquire()
        self.total += 1
        self.lock.release()

    @property
    def value(self):
        with self.lock:
            return self.total


class Worker(threading.Thread):
    def __init__(self, counter, times):
        super().__init__()
        self.counter = counter
        self.times = times

    def run(self):
        for _ in range(self.times):
            self.counter.increment()


def count_with_threads(n_threads, n_increments):
    c = SafeCounter()
    workers = [Worker(c, n_increments) for _ in range(n_threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return c.value
