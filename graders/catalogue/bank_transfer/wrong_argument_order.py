# verdict: fail
# sample: no_deadlock
# message: deadlock
# message: wait-for cycle
# why: locks src then dst: A->B and B->A deadlock (the classic lock-order deadlock)
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    if src is dst:
        with src.lock:
            return src.balance >= amount
    with src.lock:
        with dst.lock:
            if src.balance < amount:
                return False
            src.balance -= amount
            dst.balance += amount
            return True
