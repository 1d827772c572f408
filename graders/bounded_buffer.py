"""Hidden grader of `bounded_buffer` (notebook 01, extra exercise): BoundedBuffer with a condition variable.

Producers and consumers run under ch13lib.sched, the deterministic scheduler, on every schedule
with at most 2 deviations from the default schedule (fewest first) plus seeded random ones. It catches a buffer that
overflows, an item lost or delivered twice, FIFO order broken, `if` instead of `while` around
wait() (a woken thread finds the condition false again), notify() where notify_all() is needed
(the wrong kind of thread is woken and everyone waits for ever), and lost wakeups.
"""

from ch13lib import sync_checks as sc
from ch13lib.lang import Messages
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Grader

grader = Grader("bounded_buffer", timeout_s=120, harness=("kit.harnesses.sync_checks",))
OBJ = "BoundedBuffer"

# The hints of this grader's scenarios, in the course's language (ch13lib/lang.py): plain (Chinese,
# English) pairs; the scenarios' own messages are in their code, say("中文", "English").
M = Messages(
    hint_wake=(
        "缓冲区已经变了, 线程却永远在等待: 生产者和消费者共用一个条件变量时, notify() 可能唤醒一个类型不对的"
        "线程, 它又回去睡觉了; 请用 notify_all(), 或者两个条件变量 (not_full, not_empty)。每次 put/get 都必须"
        "通知。",
        "Threads wait for ever although the buffer changed: with ONE condition shared by producers and "
        "consumers, notify() may wake a thread of the wrong kind, which goes back to sleep; use notify_all(), "
        "or two conditions (not_full, not_empty). Every put/get must notify.",
    ),
    hint_while=(
        "一个线程醒来后就继续往下走了, 尽管缓冲区又变空 (或变满) 了: 另一个线程抢先一步。要在 wait() 外面套一个 "
        "`while` 循环重新检查。",
        "A thread woke up and went on although the buffer was empty (or full) again: another thread got "
        "there first. Re-check in a `while` loop around wait().",
    ),
)

# Its scenarios' messages in each language: the English exactly as the scenario code's assert says it,
# each {expression} as in its f-string (sync_checks.feedback fills the Chinese with the same values).
SAYS = Messages(
    boundedbuffer_must_raise_valueerror=(
        "BoundedBuffer({bad}) 必须抛出 ValueError",
        "BoundedBuffer({bad}) must raise ValueError",
    ),
    new_buffer_has_len=("新缓冲区的 len 是 {len(buf)}, 应为 0", "a new buffer has len {len(buf)}, expected 0"),
    n3_puts_len_expected=("put 3 次之后, len 是 {len(buf)}, 应为 3", "after 3 puts, len is {len(buf)}, expected 3"),
    put_b_c_then=(
        "put a, b, c 之后 get 两次得到了 {got}, 应为 ['a', 'b'] (先进先出)",
        "put a, b, c then get twice gave {got}, expected ['a', 'b'] (first in, first out)",
    ),
    items_must_come_out=(
        "物品必须按放入的顺序取出 (None 也一样)",
        "items must come out in the order they went in (None too)",
    ),
    taking_everything_out_len=(
        "全部取出之后, len 是 {len(buf)}, 应为 0",
        "after taking everything out, len is {len(buf)}, expected 0",
    ),
    buffer_holds_items_capacity=(
        "缓冲区里有 {len(buf)} 个物品, 但它的容量是 1",
        "the buffer holds {len(buf)} items but its capacity is 1",
    ),
    consumers_got_expected_x=(
        "消费者们得到了 {got}, 应为 x 和 y, 各一次",
        "the consumers got {got}, expected x and y, once each",
    ),
    consumer_got_expected_b=(
        "消费者得到了 {got}, 应为 a、b 和 c, 各一次",
        "the consumer got {got}, expected a, b and c, once each",
    ),
    consumer_got_was_put=(
        "消费者得到了 {got}: a 比 b 先放入, 所以必须先取出",
        "the consumer got {got}: a was put before b, so it must come out first",
    ),
)

BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=19)
ONE_EACH = sc.public_scenario("capacity 1, one producer, one consumer")


def explore(answer, scenarios) -> None:
    _sync.explore(answer, scenarios, OBJ, BUDGET, SAYS)


# Its scenarios' names, in each language (sync_checks.named): what the feedback calls them.
NAMES = Messages(
    one_thread=("单线程: 容量、先进先出顺序、len", "one thread: capacity, FIFO order, len"),
    two_consumers=(
        "容量为 1, 两个消费者, 然后一个放入两个物品的生产者",
        "capacity 1, two consumers, then a producer of two items",
    ),
    two_producers=(
        "容量为 1, 两个生产者 (两个物品和一个物品), 然后一个取三个物品的消费者",
        "capacity 1, two producers (two items and one), then a consumer of three",
    ),
)


SEQUENTIAL = [
    Scenario(
        sc.named("one_thread", NAMES),
        '''
for bad in (0, -3):
    try:
        m.BoundedBuffer(bad)
    except ValueError:
        continue
    raise AssertionError(f"BoundedBuffer({bad}) must raise ValueError")
buf = m.BoundedBuffer(3)
assert len(buf) == 0, f"a new buffer has len {len(buf)}, expected 0"
for x in ("a", "b", "c"):
    buf.put(x)
assert len(buf) == 3, f"after 3 puts, len is {len(buf)}, expected 3"
got = [buf.get(), buf.get()]
assert got == ["a", "b"], f"put a, b, c then get twice gave {got}, expected ['a', 'b'] (first in, first out)"
buf.put(None)
assert [buf.get(), buf.get()] == ["c", None], "items must come out in the order they went in (None too)"
assert len(buf) == 0, f"after taking everything out, len is {len(buf)}, expected 0"
''',
    )
]

WAKE = tuple(M.both("hint_wake"))
HINT_WAKE = ("blocked_at_exit", WAKE)
HINT_WAKE_MAIN = ("deadlock", WAKE)
HINT_WHILE = ("exception", tuple(M.both("hint_while")))

MANY = [
    Scenario(
        sc.named("two_consumers", NAMES),
        '''
buf = m.BoundedBuffer(1)
got = []
def producer():
    for x in ("x", "y"):
        buf.put(x)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
def consumer():
    got.append(buf.get())
threads = [threading.Thread(target=consumer), threading.Thread(target=consumer),
           threading.Thread(target=producer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(got, key=str) == ["x", "y"], f"the consumers got {got}, expected x and y, once each"
''',
        hints=(HINT_WAKE, HINT_WAKE_MAIN, HINT_WHILE),
    ),
    Scenario(
        sc.named("two_producers", NAMES),
        '''
buf = m.BoundedBuffer(1)
got = []
def producer(items):
    for x in items:
        buf.put(x)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
def consumer():
    for _ in range(3):
        got.append(buf.get())
threads = [threading.Thread(target=producer, args=(("a", "b"),)), threading.Thread(target=producer, args=(("c",),)),
           threading.Thread(target=consumer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(got) == ["a", "b", "c"], f"the consumer got {got}, expected a, b and c, once each"
assert got.index("a") < got.index("b"), f"the consumer got {got}: a was put before b, so it must come out first"
''',
        hints=(HINT_WAKE, HINT_WAKE_MAIN, HINT_WHILE),
    ),
    sc.public_scenario("capacity 2, two producers at once, then two gets"),  # what the self-check tells
]


@grader.test(1)
def sequential(answer):
    """Capacity checks, FIFO order and len in one thread."""
    explore(answer, SEQUENTIAL)


@grader.test(2)
def producer_consumer(answer):
    """One producer and one consumer through a buffer of capacity 1: every item, in order."""
    explore(answer, [ONE_EACH])


@grader.test(2)
def many_waiters(answer):
    """Two consumers with one producer, two producers with one consumer, two producers at once into
    room for both: no lost wakeup, no overflow, no item lost or twice, FIFO per producer."""
    explore(answer, MANY)
