# redteam: transfers with no locks, each behind a time.sleep(0.001)
# kind: cell
# target: bank_transfer
# score: bank_transfer=1
# message: bank_transfer: no_lost_money
# why: found by a white-box red-team helper (stop 33): time.sleep woke one sleeper at a time (the earliest deadline, only when every thread was blocked), so a sleep before an unlocked read-modify-write ordered the threads like a lock. Every sleeper whose time has come is now enabled, in any order (_sched_run._Sim.enabled); shown racy on real threads with a preemption in the window (5 -> 1)
import threading
import time


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def _add(a: int, b: int) -> int:
    return a + b


def transfer(src, dst, amount):
    time.sleep(0.001)          # let any transfer already under way finish first
    if src.balance < amount:
        return False
    src.balance = _add(src.balance, -amount)
    dst.balance = _add(dst.balance, amount)
    return True
