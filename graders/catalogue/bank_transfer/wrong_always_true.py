# verdict: fail
# sample: sequential
# message: expected False and no change
# why: refuses an overdraft but still reports success
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    if src is dst:
        return True
    first, second = (src, dst) if src.id < dst.id else (dst, src)
    with first.lock, second.lock:
        if src.balance >= amount:
            src.balance -= amount
            dst.balance += amount
    return True
