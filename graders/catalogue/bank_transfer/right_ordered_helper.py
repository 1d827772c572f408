# verdict: pass
# why: a helper that orders the two accounts by id, explicit acquire/release with try/finally
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def _ordered(a, b):
    return (a, b) if a.id <= b.id else (b, a)


def transfer(src, dst, amount):
    if src is dst:
        return src.balance >= amount
    first, second = _ordered(src, dst)
    first.lock.acquire()
    try:
        second.lock.acquire()
        try:
            ok = src.balance >= amount
            if ok:
                src.balance = src.balance - amount
                dst.balance = dst.balance + amount
            return ok
        finally:
            second.lock.release()
    finally:
        first.lock.release()
