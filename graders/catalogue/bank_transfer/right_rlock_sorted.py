# verdict: pass
# why: re-entrant account locks taken in sorted id order (so src is dst needs no special case)
import threading


class Account:
    def __init__(self, account_id, balance=0):
        self.id = account_id
        self.balance = balance
        self.lock = threading.RLock()


def transfer(src, dst, amount):
    a, b = sorted([src, dst], key=lambda acc: acc.id)
    with a.lock, b.lock:
        if src.balance >= amount:
            src.balance -= amount
            dst.balance += amount
            return True
        return False
