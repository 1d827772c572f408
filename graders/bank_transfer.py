"""Hidden grader of `bank_transfer` (notebook 01, extra exercise): deadlock-free transfers.

Transfers in opposite and in the same directions run under ch13lib.sched, the deterministic
scheduler (every schedule with at most 2 deviations from the default one, fewest first, then
seeded random ones).
It catches the lock-order deadlock (reported as the wait-for cycle with the student's lines), lost
updates, check-then-act overdrafts, a transfer to the same account that locks one lock twice, and
retry loops that never make progress (a step budget).
"""

from ch13lib import sync_checks as sc
from ch13lib.lang import Messages
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Grader

grader = Grader("bank_transfer", timeout_s=120, harness=("kit.harnesses.sync_checks",))
OBJ = "transfer"

# The hints of this grader's scenarios, in the course's language (ch13lib/lang.py): plain (Chinese,
# English) pairs; the scenarios' own messages are in their code, say("中文", "English").
M = Messages(
    hint_same_account=(
        "transfer(x, x, ...) 给同一个账户加了两次锁: Lock 不可重入。要单独处理 src is dst 的情况 (或者使用 RLock)。",
        "transfer(x, x, ...) locks the same account twice: a Lock is not re-entrant. Treat src is dst specially "
        "(or use an RLock).",
    ),
    hint_lost=(
        "对余额的每一次读-改-写, 以及检查 `src.balance >= amount` 和依赖这一检查的扣款, 都必须在同时持有"
        "两个账户的锁时完成。",
        "Every read-modify-write of a balance, and the check `src.balance >= amount` with the debit that "
        "relies on it, must happen while holding the locks of BOTH accounts.",
    ),
)

# Its scenarios' messages in each language: the English exactly as the scenario code's assert says it,
# each {expression} as in its f-string (sync_checks.feedback fills the Chinese with the same values).
SAYS = Messages(
    account_1_50_must=(
        "Account(1, 50) 必须满足 .id == 1 且 .balance == 50",
        "Account(1, 50) must have .id == 1 and .balance == 50",
    ),
    transfer_b_30_from=(
        "从 50 中 transfer(a, b, 30) 返回了 {ok!r}, 余额变为 {a.balance}, {b.balance}; 应为 True 和 20, 30",
        "transfer(a, b, 30) from 50 returned {ok!r} and left balances {a.balance}, {b.balance}; expected True and "
        "20, 30",
    ),
    transfer_b_21_only=(
        "只有 20 时 transfer(a, b, 21) 返回了 {ok!r}, 余额变为 {a.balance}, {b.balance}; 应为 False 且余额不变",
        "transfer(a, b, 21) with only 20 returned {ok!r} and left balances {a.balance}, {b.balance}; expected "
        "False and no change",
    ),
    moving_whole_balance_must=("转出全部余额必须成功", "moving the whole balance must work"),
    transfer_b_b_10=(
        "transfer(b, b, 10) (转给同一个账户) 返回了 {ok!r}, 余额为 {b.balance}; 应为 True 且余额不变",
        "transfer(b, b, 10) (to the same account) returned {ok!r} with balance {b.balance}; expected True and no "
        "change",
    ),
    transfer_10_without_money=(
        "余额不足时 transfer(a, a, 10) 必须返回 False",
        "transfer(a, a, 10) without the money must return False",
    ),
    two_into_one_account=(
        "a->c 转 5、b->c 转 7 之后, 余额为 {a.balance}, {b.balance}, {c.balance}; 应为 5, 3, 12 (钱凭空丢失或多出来了)",
        "after a->c 5 and b->c 7 the balances are {a.balance}, {b.balance}, {c.balance}; expected 5, 3, 12 (money "
        "was lost or created)",
    ),
    account_went_negative_two=(
        "账户 a 的余额变成了负数 ({a.balance}): 从 10 中转出两笔 7, 两笔都付了",
        "account a went negative ({a.balance}): two transfers of 7 from 10 both paid",
    ),
    two_transfers_7_from=(
        "从 10 中转出两笔 7, 返回了 {results}; 应为一个 True, 一个 False",
        "two transfers of 7 from 10 returned {results}; expected one True, one False",
    ),
    balances_expected_3_7=(
        "余额为 {a.balance}, {b.balance}; 应为 3, 7",
        "balances {a.balance}, {b.balance}; expected 3, 7",
    ),
    balances_expected_12_9=(
        "余额为 {a.balance}, {b.balance}, {c.balance}; 应为 12, 9, 9",
        "balances {a.balance}, {b.balance}, {c.balance}; expected 12, 9, 9",
    ),
)

BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=23)


def explore(answer, scenarios) -> None:
    _sync.explore(answer, scenarios, OBJ, BUDGET, SAYS)


# Its scenarios' names, in each language (sync_checks.named): what the feedback calls them.
NAMES = Messages(
    one_thread=("单线程: 余额足够、余额不足、同一个账户", "one thread: enough money, not enough, same account"),
    same_account=("两笔转入同一个账户的转账", "two transfers into the same account"),
    cannot_both=("两笔不能都支付的转账", "two transfers that cannot both be paid"),
    cycle=("三笔转账构成一个环", "a cycle of three transfers"),
)


SEQUENTIAL = [
    Scenario(
        sc.named("one_thread", NAMES),
        '''
a, b = m.Account(1, 50), m.Account(2, 0)
assert (a.id, a.balance) == (1, 50), "Account(1, 50) must have .id == 1 and .balance == 50"
ok = m.transfer(a, b, 30)
assert ok is True and (a.balance, b.balance) == (20, 30), (f"transfer(a, b, 30) from 50 returned {ok!r} "
    f"and left balances {a.balance}, {b.balance}; expected True and 20, 30")
ok = m.transfer(a, b, 21)
assert ok is False and (a.balance, b.balance) == (20, 30), (f"transfer(a, b, 21) with only 20 returned "
    f"{ok!r} and left balances {a.balance}, {b.balance}; expected False and no change")
ok = m.transfer(a, b, 20)
assert ok is True and (a.balance, b.balance) == (0, 50), "moving the whole balance must work"
ok = m.transfer(b, b, 10)
assert ok is True and b.balance == 50, (f"transfer(b, b, 10) (to the same account) returned {ok!r} with "
    f"balance {b.balance}; expected True and no change")
ok = m.transfer(a, a, 10)
assert ok is False and a.balance == 0, "transfer(a, a, 10) without the money must return False"
''',
        hints=(("deadlock", tuple(M.both("hint_same_account"))),),
    )
]

OPPOSITE = sc.public_scenario("A->B and B->A at the same time")
HINT_ORDER = ("deadlock", OPPOSITE.hint("deadlock"))
HINT_LOST = ("check", tuple(M.both("hint_lost")))

# Named by what they test, so reordering a list cannot change what a test below explores.
LOST_MONEY = [
    Scenario(
        sc.named("same_account", NAMES),
        '''
a, b, c = m.Account(1, 10), m.Account(2, 10), m.Account(3, 0)
threads = [threading.Thread(target=m.transfer, args=(a, c, 5)),
           threading.Thread(target=m.transfer, args=(b, c, 7))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert (a.balance, b.balance, c.balance) == (5, 3, 12), (f"after a->c 5 and b->c 7 the balances are "
    f"{a.balance}, {b.balance}, {c.balance}; expected 5, 3, 12 (money was lost or created)")
''',
        hints=(HINT_LOST,),
    ),
    Scenario(
        sc.named("cannot_both", NAMES),
        '''
a, b = m.Account(1, 10), m.Account(2, 0)
results = []
def pay():
    results.append(m.transfer(a, b, 7))
threads = [threading.Thread(target=pay), threading.Thread(target=pay)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert a.balance >= 0, f"account a went negative ({a.balance}): two transfers of 7 from 10 both paid"
assert sorted(results) == [False, True], f"two transfers of 7 from 10 returned {results}; expected one True, one False"
assert (a.balance, b.balance) == (3, 7), f"balances {a.balance}, {b.balance}; expected 3, 7"
''',
        hints=(HINT_LOST,),
    ),
]
CYCLES = [
    Scenario(
        sc.named("cycle", NAMES),
        '''
a, b, c = m.Account(1, 10), m.Account(2, 10), m.Account(3, 10)
threads = [threading.Thread(target=m.transfer, args=(a, b, 1)),
           threading.Thread(target=m.transfer, args=(b, c, 2)),
           threading.Thread(target=m.transfer, args=(c, a, 3))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert (a.balance, b.balance, c.balance) == (12, 9, 9), (f"balances {a.balance}, {b.balance}, {c.balance}; "
    f"expected 12, 9, 9")
''',
        hints=(HINT_ORDER, HINT_LOST),
    ),
]


@grader.test(1)
def sequential(answer):
    """Successful and refused transfers, and transfers to the same account, in one thread."""
    explore(answer, SEQUENTIAL)


@grader.test(2)
def no_deadlock(answer):
    """Transfers in opposite directions (and around a cycle) never deadlock."""
    explore(answer, [OPPOSITE] + CYCLES)


@grader.test(2)
def no_lost_money(answer):
    """Concurrent transfers neither lose nor create money, nor overdraw an account."""
    explore(answer, LOST_MONEY)
