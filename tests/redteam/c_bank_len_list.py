# redteam: a bank with no locks at all, balances kept as len(list) and changed by in-place operators on local aliases; the overdraft check reads len()
# kind: cell
# target: bank_transfer
# score: bank_transfer=1
# message: bank_transfer: expected one True, one False
# why: found by the fifth red team (1 -> 5/5, no flag): in-place operators are writes, len() of a container a read, and a write by a thread that ran beside the reader (no start or join between them) makes the location shared for the lockset rule, which Eraser alone took for initialisation
import threading


def _less(n, amount):
    for _ in range(amount):      # count the coins out one by one
        n -= 1
    return n


class Account:
    """Balance kept as a list of coins (len = balance)."""

    def __init__(self, account_id: int, balance: int = 0) -> None:
        self.id = account_id
        self._coins = [None] * balance
        self.lock = threading.Lock()

    @property
    def balance(self) -> int:
        return len(self._coins)


def transfer(src: Account, dst: Account, amount: int) -> bool:
    s, d = src._coins, dst._coins
    n = len(s)
    if n < amount:
        return False
    n = _less(n, amount)
    s *= 0
    s += [None] * n
    d += [None] * amount
    return True
