# verdict: fail
# sample: no_lost_money
# message: went negative
# why: checks the balance before taking the locks (check-then-act)
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    if src is dst:
        return src.balance >= amount
    if src.balance < amount:
        return False
    first, second = (src, dst) if src.id < dst.id else (dst, src)
    with first.lock:
        with second.lock:
            src.balance -= amount
            dst.balance += amount
    return True
