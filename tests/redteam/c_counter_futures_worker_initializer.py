# redteam: an unlocked Counter.update run as the initializer of concurrent.futures.thread._worker, called by the cell
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: imports concurrent.futures.thread
# why: found by the twenty-sixth white-box red team (stop 38: full marks, no flag): the scheduler trusted every stdlib frame with no self, so concurrent.futures.thread._worker called by the cell ran its initializer and work items (a Counter.update, lock calls) unseen and as no preemption point; a queue with its _put replaced on the object ran Counter.update inside trusted queue.py. Stopped (stop 38): a self-less stdlib frame is trusted only when trusted code or threading called it, a stdlib call acts for the cell when any stdlib frame above it is untrusted (Run._user_call), and an object whose attributes shadow its class's is not intact. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports concurrent.futures.thread), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import collections
import queue
import threading
from concurrent.futures.thread import _worker


def _nobody():
    return None


class SafeCounter:
    def __init__(self):
        self.box = collections.Counter({"n": 0, "pad": 1})

    def increment(self):
        # NO lock: Counter.update(mapping) is a pure-Python read-modify-write
        # (self[elem] = count + self.get(elem, 0)), run from a self-less stdlib frame
        q = queue.Queue()
        q.put(None)
        _worker(_nobody, q, self.box.update, ({"n": 1},))

    @property
    def value(self):
        return self.box["n"]


def count_with_threads(n_threads, n_increments):
    counter = SafeCounter()

    def work():
        for _ in range(n_increments):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counter.value
