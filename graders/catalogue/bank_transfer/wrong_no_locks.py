# verdict: fail
# message: money was lost or created
# why: no locks at all
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    if src.balance < amount:
        return False
    src.balance -= amount
    dst.balance += amount
    return True
