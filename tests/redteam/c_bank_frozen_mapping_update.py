# redteam: unlocked transfers whose writes are MutableMapping.update on vars(account) (frozen stdlib code)
# kind: cell
# target: bank_transfer
# score: bank_transfer=0
# message: bank_transfer: allow-list (ch13lib/allowed.py) does not name
# message: bank_transfer: vars(...) is for your own object only (self or cls)
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 5 -> 1): see c_counter_frozen_mapping_update. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (vars(...) is for your own object only (self or cls)), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import threading
from collections.abc import MutableMapping


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    sd, dd = vars(src), vars(dst)
    s = src.balance
    if s < amount:
        return False
    if src is dst:
        return True
    MutableMapping.update(sd, balance=s - amount)
    d = dst.balance
    MutableMapping.update(dd, balance=d + amount)
    return True
