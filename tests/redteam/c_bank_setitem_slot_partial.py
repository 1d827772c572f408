# redteam: unlocked transfers whose writes go through a private box whose __setitem__ is a partial(setattr, account)
# kind: cell
# target: bank_transfer
# score: bank_transfer=0
# message: bank_transfer: allow-list (ch13lib/allowed.py) does not name
# message: bank_transfer: type(...) with three arguments makes a class at run time
# why: found by a white-box red-team helper (stop 34, on that stop's own scheduler fixes; racy on real threads, 5 -> 0, refused): see c_counter_setitem_slot_partial. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (type(...) with three arguments makes a class at run time), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import functools
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def _writer(acct):
    return type("W", (), {"__setitem__": functools.partial(setattr, acct)})()


def transfer(src, dst, amount):
    ws, wd = _writer(src), _writer(dst)
    s = src.balance
    if s < amount:
        return False
    if src is dst:
        return True
    ws["balance"] = s - amount
    d = dst.balance
    wd["balance"] = d + amount
    return True
