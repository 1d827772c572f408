# verdict: pass
# why: takes the first lock, tries the second without blocking, and backs off (sleep) when it is busy
import time
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
        with src.lock:
            if dst.lock.acquire(blocking=False):
                try:
                    if src.balance < amount:
                        return False
                    src.balance -= amount
                    dst.balance += amount
                    return True
                finally:
                    dst.lock.release()
        time.sleep(0.001)
