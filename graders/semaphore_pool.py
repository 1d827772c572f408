"""Hidden grader of `semaphore_pool` (notebook 01): ConnectionPool.

The contract's sequential behaviour is checked in one thread; mutual exclusion, the bound, liveness
(no thread blocked while a resource is free), admitting `size` holders at once, timeouts and
concurrent releases are checked under ch13lib.sched, the deterministic scheduler, on every schedule
with at most 2 deviations from the default schedule (fewest first) plus seeded random ones.
Time is virtual: a timeout fires
when every thread is waiting, so the verdicts never depend on the machine's speed.
"""

from ch13lib import sync_checks as sc
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Grader

grader = Grader("semaphore_pool", timeout_s=120, harness=("ch13lib.sync_checks",))
OBJ = "ConnectionPool"

BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=17)
TAKE_TURNS = sc.public_scenario("size 1, two threads take turns")
TWO_HOLDERS = sc.public_scenario("size 2 admits two holders at once")


def explore(answer, scenarios) -> None:
    _sync.explore(answer, scenarios, OBJ, BUDGET)


CONTRACT = [
    Scenario(
        "size < 1 is refused",
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
        "one thread: acquire, release, available",
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
        hints=(
            (
                "deadlock",
                "Too serial: one thread could not take the second resource of a pool of size 2. "
                "The pool must let `size` resources out at once (a lock held from acquire() "
                "to release() lets only one out).",
            ),
        ),
    ),
    Scenario(
        "acquire(timeout) raises TimeoutError when all are out",
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
        hints=(
            (
                "deadlock",
                "acquire(timeout=...) never gave up: pass the timeout on to the blocking "
                "call (Semaphore.acquire(timeout=...) returns False when it expires) and "
                "raise TimeoutError then.",
            ),
        ),
    ),
    Scenario(
        "connection() releases after the body, also when it raises",
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
        "a refused release changes nothing",
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
        hints=(
            (
                "check",
                "release() must check that the resource is checked out right now (not just "
                "that it came from this pool), and give back exactly one permit, only then.",
            ),
        ),
    ),
]

RACES = [
    Scenario(
        "size 2, three threads, one use each",
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
        "size 1, two threads, two uses each",
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
        "size 1, three threads, one use each",
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
        "two threads release the same resource at once",
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
        hints=(
            (
                "check",
                "Check and update the checked-out set in ONE critical section: "
                "check-then-act across two lock sections lets both releases pass the check.",
            ),
        ),
    )
]

TIMEOUTS = [
    Scenario(
        "a release before the timeout wakes the waiter",
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
        hints=(
            (
                "exception",
                "The resource was released long before the timeout, yet acquire() gave up: "
                "a waiting acquire() must be woken by release().",
            ),
        ),
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
