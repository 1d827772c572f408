# verdict: fail
# message: locks the same account twice
# why: ordered locks, but transfer(a, a) takes the same (non-re-entrant) lock twice
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    first, second = (src, dst) if src.id <= dst.id else (dst, src)
    with first.lock:
        with second.lock:
            if src.balance < amount:
                return False
            src.balance -= amount
            dst.balance += amount
            return True
