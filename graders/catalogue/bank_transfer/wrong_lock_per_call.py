# verdict: fail
# message: money was lost or created
# why: makes fresh locks inside transfer(), which protect nothing
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src, dst, amount):
    with threading.Lock(), threading.Lock():
        if src.balance < amount:
            return False
        src.balance -= amount
        dst.balance += amount
        return True
