# verdict: fail
# message: money was lost or created
# why: locks only the source account; two transfers into one account race on its balance
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    with src.lock:
        if src.balance < amount:
            return False
        src.balance -= amount
        dst.balance += amount
        return True
