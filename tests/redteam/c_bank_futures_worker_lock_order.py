# redteam: locks taken src then dst (the lock-order deadlock), both acquires run by concurrent.futures.thread._worker
# kind: cell
# target: bank_transfer
# score: bank_transfer=0
# message: bank_transfer: allow-list (ch13lib/allowed.py) does not name
# message: bank_transfer: imports concurrent.futures.thread
# why: found by the twenty-sixth white-box red team (stop 38: full marks, no flag): the scheduler trusted every stdlib frame with no self, so concurrent.futures.thread._worker called by the cell ran its initializer and work items (a Counter.update, lock calls) unseen and as no preemption point; a queue with its _put replaced on the object ran Counter.update inside trusted queue.py. Stopped (stop 38): a self-less stdlib frame is trusted only when trusted code or threading called it, a stdlib call acts for the cell when any stdlib frame above it is untrusted (Run._user_call), and an object whose attributes shadow its class's is not intact. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports concurrent.futures.thread), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import queue
import threading
from concurrent.futures import Future
from concurrent.futures.thread import _WorkItem, _worker


def _nobody():
    return None


def _acquire_both(first, second):
    # both acquires run from concurrent.futures.thread's self-less _worker: no preemption point
    q = queue.Queue()
    q.put(_WorkItem(Future(), second.acquire, (), {}))
    q.put(None)
    _worker(_nobody, q, first.acquire, ())


class Account:
    def __init__(self, account_id, balance=0):
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    if src is dst:
        with src.lock:
            return src.balance >= amount
    _acquire_both(src.lock, dst.lock)  # src first, then dst: the classic lock-order deadlock
    try:
        if src.balance < amount:
            return False
        src.balance -= amount
        dst.balance += amount
        return True
    finally:
        dst.lock.release()
        src.lock.release()
