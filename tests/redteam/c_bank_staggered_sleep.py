# redteam: unlocked transfers behind time.sleep(ticket * 1e-9)
# kind: cell
# target: bank_transfer
# score: bank_transfer=1
# message: bank_transfer: no_lost_money
# why: found by a white-box red-team helper (stop 34): the clock moved only when every thread waited, to the earliest deadline, so sleeps with distinct deadlines (a ticket each) still ran the unlocked sections one at a time. A timed wait may now end at any scheduling point (a running thread can be slower than any sleep; sync_checks.Scenario.early_timeouts, on by default); racy on real threads (5 -> 1)
import threading
import itertools
import time

_turns = itertools.count(1)


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def _add(a: int, b: int) -> int:
    return a + b


def transfer(src, dst, amount):
    time.sleep(next(_turns) * 1e-9)          # let any transfer already under way finish first
    if src.balance < amount:
        return False
    src.balance = _add(src.balance, -amount)
    dst.balance = _add(dst.balance, amount)
    return True
