# verdict: fail
# message: no progress
# why: retries with non-blocking acquires and no back-off: a livelock when both sides keep yielding
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
    while True:
        if src.lock.acquire(blocking=False):
            if dst.lock.acquire(blocking=False):
                try:
                    if src.balance < amount:
                        return False
                    src.balance -= amount
                    dst.balance += amount
                    return True
                finally:
                    dst.lock.release()
                    src.lock.release()
            src.lock.release()
