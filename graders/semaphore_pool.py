"""Hidden grader of `semaphore_pool` (notebook 01): ConnectionPool.

The contract's sequential behaviour is checked in one thread; mutual exclusion, the bound, liveness
(no thread blocked while a resource is free), admitting `size` holders at once, timeouts and
concurrent releases are checked under ch13lib.sched, the deterministic scheduler, on every schedule
with at most 2 deviations from the default schedule (fewest first) plus seeded random ones.
Time is virtual: a timeout fires
when every thread is waiting, so the verdicts never depend on the machine's speed.
"""

from ch13lib import sync_checks as sc
from ch13lib.lang import Messages
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Grader

grader = Grader("semaphore_pool", timeout_s=120, harness=("kit.harnesses.sync_checks",))
OBJ = "ConnectionPool"

# The hints of this grader's scenarios, in the course's language (ch13lib/lang.py): plain (Chinese,
# English) pairs; the scenarios' own messages are in their code, say("中文", "English").
M = Messages(
    hint_too_serial=(
        "过于串行: 一个线程无法从大小为 2 的池中取第二个资源。池必须允许同时借出 `size` 个资源 (从 acquire() "
        "一直持有到 release() 的锁只允许借出一个)。",
        "Too serial: one thread could not take the second resource of a pool of size 2. The pool must let "
        "`size` resources out at once (a lock held from acquire() to release() lets only one out).",
    ),
    hint_timeout=(
        "acquire(timeout=...) 从不放弃: 把 timeout 传给真正阻塞的那个调用 (到期时 Semaphore.acquire(timeout=...) "
        "返回 False), 然后抛出 TimeoutError。",
        "acquire(timeout=...) never gave up: pass the timeout on to the blocking call "
        "(Semaphore.acquire(timeout=...) returns False when it expires) and raise TimeoutError then.",
    ),
    hint_release=(
        "release() 必须检查该资源此刻确实处于借出状态 (而不只是它来自这个池), 并且只在这之后恰好归还一个许可。",
        "release() must check that the resource is checked out right now (not just that it came from this "
        "pool), and give back exactly one permit, only then.",
    ),
    hint_identity=(
        "按身份记账 (is、id()), 不要用 == 或 in 查找资源: 工厂可以造出彼此相等的资源 (比如 dict), 它们仍是不同的资源。",
        "Keep the books by identity (is, id()), not by == or `in`: a factory may make resources that compare "
        "equal (dicts, say), and they are still different resources.",
    ),
    hint_release_once=(
        "检查和更新借出集合必须在同一个临界区中完成: 跨两个加锁区段的先检查后执行 (check-then-act) 会让两次 "
        "release 都通过检查。",
        "Check and update the checked-out set in ONE critical section: check-then-act across two lock "
        "sections lets both releases pass the check.",
    ),
    hint_wakeup=(
        "资源在超时之前很久就被释放了, acquire() 却还是放弃了: 正在等待的 acquire() 必须被 release() 唤醒。",
        "The resource was released long before the timeout, yet acquire() gave up: a waiting acquire() must "
        "be woken by release().",
    ),
)

# Its scenarios' messages in each language: the English exactly as the scenario code's assert says it,
# each {expression} as in its f-string (sync_checks.feedback fills the Chinese with the same values).
SAYS = Messages(
    equal_second_release=(
        "资源 r 已经归还过一次, 而另一个与它相等 (==) 的资源仍被借出时, 第二次 release(r) 被接受了: 它必须抛出 "
        "ValueError",
        "release(r) a second time was accepted while another resource equal to r (==) was still out: it must "
        "raise ValueError",
    ),
    equal_available=(
        "一个资源被借出、一个被归还后, available={pool.available}, 应为 1",
        "with one resource out and one given back, available={pool.available}, expected 1",
    ),
    equal_same_twice=(
        "池把同一个资源同时借给了两个持有者 ({a!r}): 相等 (==) 不等于同一个 (is)",
        "the pool handed one resource to two holders at once ({a!r}): equal (==) is not the same (is)",
    ),
    connectionpool_must_raise_valueerror=(
        "ConnectionPool({bad}) 必须抛出 ValueError",
        "ConnectionPool({bad}) must raise ValueError",
    ),
    new_pool_size_2=(
        "一个新的大小为 2 的池 available={pool.available!r}, 应为 2",
        "a new pool of size 2 has available={pool.available!r}, expected 2",
    ),
    acquire_returned_resource_made=(
        "acquire() 返回了 {r1!r}, 不是 factory 创建的资源",
        "acquire() returned {r1!r}, not a resource made by the factory",
    ),
    n1_2_resources_out=(
        "2 个资源借出了 1 个时, available={pool.available}, 应为 1",
        "with 1 of 2 resources out, available={pool.available}, expected 1",
    ),
    acquire_gave_out_same=("acquire() 把同一个资源交出了两次", "acquire() gave out the same resource twice"),
    n2_2_resources_out=(
        "2 个资源全部借出时, available={pool.available}, 应为 0",
        "with 2 of 2 resources out, available={pool.available}, expected 0",
    ),
    both_were_released_available=(
        "两个都释放之后, available={pool.available}, 应为 2",
        "after both were released, available={pool.available}, expected 2",
    ),
    factory_was_called_times=(
        "对一个大小为 2 的池, factory 被调用了 {make.made} 次: 最多创建 `size` 个资源, 并重复使用已释放的资源",
        "the factory was called {make.made} times for a pool of size 2: make at most `size` resources and reuse "
        "released ones",
    ),
    acquire_timeout_0_25=(
        "所有资源都已借出时, acquire(timeout=0.25) 返回了 {got!r}: 它必须抛出 TimeoutError",
        "acquire(timeout=0.25) with every resource out returned {got!r}: it must raise TimeoutError",
    ),
    timed_out_acquire_available=(
        "一次超时的 acquire 之后, available={pool.available}, 应为 0",
        "after a timed-out acquire, available={pool.available}, expected 0",
    ),
    pool_connection_as_conn=(
        "`with pool.connection() as conn` 得到了 conn=None: 要 yield 这个资源",
        "`with pool.connection() as conn` gave conn=None: yield the resource",
    ),
    inside_pool_connection_available=(
        "在 `with pool.connection()` 内部, available={pool.available}, 应为 1",
        "inside `with pool.connection()`, available={pool.available}, expected 1",
    ),
    block_available_expected_2=(
        "with 代码块结束之后, available={pool.available}, 应为 2",
        "after the with block, available={pool.available}, expected 2",
    ),
    block_whose_body_raised=(
        "with 代码块抛出异常之后, available={pool.available}, 不是 2: 许可泄漏了。请在 `finally` 中释放 (本章的 "
        "`sem.acquire() ... sem.release()` 在代码块抛出异常时都会泄漏一个许可)",
        "after a with block whose body raised, available={pool.available}, not 2: the permit leaked. Release in a "
        "`finally` (the chapter's `sem.acquire() ... sem.release()` leaks a permit whenever the body raises)",
    ),
    release_object_that_never=(
        "release() 一个从未来自这个池的对象时必须抛出 ValueError",
        "release() of an object that never came from the pool must raise ValueError",
    ),
    refused_release_available_expected=(
        "一次被拒绝的 release 之后, available={pool.available}, 应为 1",
        "after a refused release, available={pool.available}, expected 1",
    ),
    releasing_same_resource_twice=(
        "同一个资源释放两次时, 第二次必须抛出 ValueError",
        "releasing the same resource twice must raise ValueError the second time",
    ),
    refused_double_release_available=(
        "一次被拒绝的重复 release 之后, available={pool.available}, 应为 1",
        "after a refused double release, available={pool.available}, expected 1",
    ),
    pool_size_1_let=(
        "大小为 1 的池借出了第二个资源 ({a!r}, {b!r}): 某次 release (或一次被拒绝的 release) "
        "归还了一个它从未取走的许可",
        "a pool of size 1 let a second resource out ({a!r}, {b!r}): some release (or a refused one) gave back a "
        "permit it never took",
    ),
    at_end_available_expected=(
        "结束时 available={pool.available}, 应为 2",
        "at the end available={pool.available}, expected 2",
    ),
    at_end_available_expected_2=(
        "结束时 available={pool.available}, 应为 1",
        "at the end available={pool.available}, expected 1",
    ),
    two_concurrent_release_r=(
        "对一个已借出资源的两次并发 release(r) 得到了 {sorted(outcomes)}: 必须恰好一次成功, 另一次抛出 ValueError",
        "two concurrent release(r) of one checked-out resource gave {sorted(outcomes)}: exactly one must succeed "
        "and the other raise ValueError",
    ),
    afterwards_available_expected_2=(
        "之后 available={pool.available}, 应为 2",
        "afterwards available={pool.available}, expected 2",
    ),
    double_release_pool_handed=(
        "重复 release 之后, 池把同一个资源交出了两次",
        "after the double release the pool handed out one resource twice",
    ),
    waiter_got_expected_released=(
        "等待者得到了 {got}, 应为被释放的 {r!r}",
        "the waiter got {got}, expected the released {r!r}",
    ),
)

BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=17)
TAKE_TURNS = sc.public_scenario("size 1, two threads take turns")
TWO_HOLDERS = sc.public_scenario("size 2 admits two holders at once")


def explore(answer, scenarios) -> None:
    _sync.explore(answer, scenarios, OBJ, BUDGET, SAYS)


# Its scenarios' names, in each language (sync_checks.named): what the feedback calls them.
NAMES = Messages(
    refused_size=("拒绝小于 1 的 size", "size < 1 is refused"),
    one_thread=("单线程: acquire、release、available", "one thread: acquire, release, available"),
    timeout=(
        "资源全部借出时, acquire(timeout) 抛出 TimeoutError",
        "acquire(timeout) raises TimeoutError when all are out",
    ),
    connection=(
        "connection() 在代码块之后释放资源, 代码块抛出异常时也一样",
        "connection() releases after the body, also when it raises",
    ),
    refused_release=("被拒绝的 release 不改变任何东西", "a refused release changes nothing"),
    equal_resources=("彼此相等 (==) 的资源仍是不同的资源", "resources that compare equal (==) are still different"),
    three_one_use=("大小为 2, 三个线程, 各使用一次", "size 2, three threads, one use each"),
    two_uses=("大小为 1, 两个线程, 各使用两次", "size 1, two threads, two uses each"),
    three_threads=("大小为 1, 三个线程, 各使用一次", "size 1, three threads, one use each"),
    same_resource=("两个线程同时 release 同一个资源", "two threads release the same resource at once"),
    wakes_waiter=("超时之前的一次 release 唤醒了等待者", "a release before the timeout wakes the waiter"),
)


CONTRACT = [
    Scenario(
        sc.named("refused_size", NAMES),
        '''
for bad in (0, -1):
    try:
        m.ConnectionPool(bad)
    except ValueError:
        continue
    raise AssertionError(f"ConnectionPool({bad}) must raise ValueError")
''',
    ),
    Scenario(
        sc.named("one_thread", NAMES),
        '''
make = new_factory()
pool = m.ConnectionPool(2, factory=make)
assert pool.available == 2, f"a new pool of size 2 has available={pool.available!r}, expected 2"
r1 = pool.acquire()
assert isinstance(r1, make), f"acquire() returned {r1!r}, not a resource made by the factory"
assert pool.available == 1, f"with 1 of 2 resources out, available={pool.available}, expected 1"
r2 = pool.acquire()
assert r2 is not r1, "acquire() gave out the same resource twice"
assert pool.available == 0, f"with 2 of 2 resources out, available={pool.available}, expected 0"
pool.release(r1)
pool.release(r2)
assert pool.available == 2, f"after both were released, available={pool.available}, expected 2"
for _ in range(5):
    r = pool.acquire()
    pool.release(r)
assert make.made <= 2, (f"the factory was called {make.made} times for a pool of size 2: make at "
                        f"most `size` resources and reuse released ones")
''',
        hints=(("deadlock", tuple(M.both("hint_too_serial"))),),
    ),
    Scenario(
        sc.named("timeout", NAMES),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
r = pool.acquire()
try:
    got = pool.acquire(timeout=0.25)
except TimeoutError:
    pass
else:
    raise AssertionError(f"acquire(timeout=0.25) with every resource out returned {got!r}: "
                         f"it must raise TimeoutError")
assert pool.available == 0, f"after a timed-out acquire, available={pool.available}, expected 0"
pool.release(r)
r = pool.acquire(timeout=0.25)
pool.release(r)
''',
        hints=(("deadlock", tuple(M.both("hint_timeout"))),),
    ),
    Scenario(
        sc.named("connection", NAMES),
        '''
pool = m.ConnectionPool(2, factory=new_factory())
with pool.connection() as conn:
    assert conn is not None, "`with pool.connection() as conn` gave conn=None: yield the resource"
    assert pool.available == 1, f"inside `with pool.connection()`, available={pool.available}, expected 1"
assert pool.available == 2, f"after the with block, available={pool.available}, expected 2"
for _ in range(3):
    try:
        with pool.connection(timeout=1.0):
            raise KeyError("boom")
    except KeyError:
        pass
    assert pool.available == 2, (f"after a with block whose body raised, available={pool.available}, not 2: "
                                 f"the permit leaked. Release in a `finally` (the chapter's "
                                 f"`sem.acquire() ... sem.release()` leaks a permit whenever the body raises)")
''',
    ),
    Scenario(
        sc.named("refused_release", NAMES),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
try:
    pool.release(object())
except ValueError:
    pass
else:
    raise AssertionError("release() of an object that never came from the pool must raise ValueError")
assert pool.available == 1, f"after a refused release, available={pool.available}, expected 1"
r = pool.acquire()
pool.release(r)
try:
    pool.release(r)
except ValueError:
    pass
else:
    raise AssertionError("releasing the same resource twice must raise ValueError the second time")
assert pool.available == 1, f"after a refused double release, available={pool.available}, expected 1"
a = pool.acquire(timeout=1.0)
try:
    b = pool.acquire(timeout=0.5)
except TimeoutError:
    pass
else:
    raise AssertionError(f"a pool of size 1 let a second resource out ({a!r}, {b!r}): some release "
                         f"(or a refused one) gave back a permit it never took")
pool.release(a)
''',
        hints=(("check", tuple(M.both("hint_release"))),),
    ),
    Scenario(
        sc.named("equal_resources", NAMES),
        '''
class Twin:
    made = 0
    def __init__(self):
        Twin.made += 1
        self.n = Twin.made
    def __repr__(self):
        return f"twin{self.n}"
    def __eq__(self, other):
        return isinstance(other, Twin)
    def __hash__(self):
        return 0
pool = m.ConnectionPool(2, factory=Twin)
r1, r2 = pool.acquire(), pool.acquire()
pool.release(r1)
try:
    pool.release(r1)
except ValueError:
    pass
else:
    raise AssertionError("release(r) a second time was accepted while another resource equal to r (==) "
                         "was still out: it must raise ValueError")
assert pool.available == 1, f"with one resource out and one given back, available={pool.available}, expected 1"
a = pool.acquire(timeout=1.0)
assert a is not r2, f"the pool handed one resource to two holders at once ({a!r}): equal (==) is not the same (is)"
''',
        hints=(("check", tuple(M.both("hint_identity"))),),
    ),
]

RACES = [
    Scenario(
        sc.named("three_one_use", NAMES),
        '''
pool = m.ConnectionPool(2, factory=new_factory())
holders = Holders(2)
def worker():
    with pool.connection() as r:
        holders.got(r)
        holders.giving_back(r)
threads = [threading.Thread(target=worker) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert pool.available == 2, f"at the end available={pool.available}, expected 2"
''',
        hints=TAKE_TURNS.hints,
    ),
    Scenario(
        sc.named("two_uses", NAMES),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
def worker():
    for _ in range(2):
        r = pool.acquire()
        holders.got(r)
        holders.giving_back(r)
        pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert pool.available == 1, f"at the end available={pool.available}, expected 1"
''',
        hints=TAKE_TURNS.hints,
    ),
]

RACES_3 = [
    Scenario(
        sc.named("three_threads", NAMES),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
def worker():
    r = pool.acquire()
    holders.got(r)
    holders.giving_back(r)
    pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert pool.available == 1, f"at the end available={pool.available}, expected 1"
''',
        hints=TAKE_TURNS.hints,
    ),
]

DOUBLE_RELEASE = [
    Scenario(
        sc.named("same_resource", NAMES),
        '''
pool = m.ConnectionPool(2, factory=new_factory())
r = pool.acquire()
outcomes = []
def releaser():
    try:
        pool.release(r)
        outcomes.append("released")
    except ValueError:
        outcomes.append("ValueError")
threads = [threading.Thread(target=releaser) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(outcomes) == ["ValueError", "released"], (f"two concurrent release(r) of one checked-out "
    f"resource gave {sorted(outcomes)}: exactly one must succeed and the other raise ValueError")
assert pool.available == 2, f"afterwards available={pool.available}, expected 2"
a, b = pool.acquire(), pool.acquire()
assert a is not b, "after the double release the pool handed out one resource twice"
''',
        hints=(("check", tuple(M.both("hint_release_once"))),),
    )
]

TIMEOUTS = [
    Scenario(
        sc.named("wakes_waiter", NAMES),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
r = pool.acquire()
got = []
def waiter():
    got.append(pool.acquire(timeout=5.0))
t = threading.Thread(target=waiter)
t.start()
settle()                        # the waiter is blocked in acquire now
pool.release(r)
t.join()
assert got == [r], f"the waiter got {got}, expected the released {r!r}"
''',
        # ordered time: the release comes before the timeout, and the check is that it wakes the waiter
        early_timeouts=False,
        hints=(("exception", tuple(M.both("hint_wakeup"))),),
    )
]


@grader.test(3)
def contract(answer):
    """Sizes, available, release errors, connection() on exceptions, TimeoutError (one thread)."""
    explore(answer, CONTRACT)


@grader.test(4)
def mutual_exclusion(answer):
    """No resource held twice, never more than `size` out, no thread left blocked, races on release."""
    explore(answer, RACES + RACES_3 + DOUBLE_RELEASE)


@grader.test(2)
def admits_size_holders(answer):
    """`size` threads can hold resources at the same time (the pool is not a mutex)."""
    explore(answer, [TWO_HOLDERS])


@grader.test(1)
def timeout_and_wakeup(answer):
    """A waiting acquire is woken by a release that comes before its timeout."""
    explore(answer, TIMEOUTS)
