# verdict: pass
# why: one module-level lock for every transfer: correct, just less parallel
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


_bank = threading.Lock()


def transfer(src, dst, amount):
    with _bank:
        if src.balance < amount:
            return False
        src.balance -= amount
        dst.balance += amount
        return True
