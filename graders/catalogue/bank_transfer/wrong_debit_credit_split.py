# verdict: fail
# message: went negative
# why: checks under the source lock, but debits in a second critical section
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
        enough = src.balance >= amount
    if not enough:
        return False
    first, second = (src, dst) if src.id < dst.id else (dst, src)
    with first.lock, second.lock:
        src.balance -= amount
        dst.balance += amount
    return True
