# redteam: unlocked transfers whose writes are MutableMapping.update on vars(account) (frozen stdlib code)
# kind: cell
# target: bank_transfer
# score: bank_transfer=1
# message: bank_transfer: no_lost_money
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 5 -> 1): see c_counter_frozen_mapping_update
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
