# verdict: pass
# why: the reference solution (locks taken in account-id order; src is dst handled)
import threading


class Account:
    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self.balance = balance
        self.lock = threading.Lock()


def transfer(src: Account, dst: Account, amount: int) -> bool:
    """src 余额足够时把 `amount` 从 src 转到 dst (返回 True), 否则什么都不改 (返回 False)。

    Move `amount` from src to dst if src has enough (True), else change nothing (False).
    """
    if src is dst:                                  # one account: one lock, taken once
        with src.lock:
            return src.balance >= amount
    first, second = (src, dst) if src.id < dst.id else (dst, src)
    with first.lock:                                # every thread locks in the same global order
        with second.lock:
            if src.balance < amount:
                return False
            src.balance -= amount
            dst.balance += amount
            return True
