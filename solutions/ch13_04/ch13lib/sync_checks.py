"""Self-checks for notebook 01 (synchronisation primitives), on the deterministic scheduler.

Each check runs small *scenarios* (a few threads using your class) under ``ch13lib.sched``: your
cell is loaded afresh for every schedule, and the scheduler tries the interleavings with the fewest
deviations from the default schedule first. A failure is told as a story in your own lines, with a
schedule string you can
replay::

    from ch13lib import sync_checks
    sync_checks.check_counter(SafeCounter, count_with_threads)
    sync_checks.replay(SafeCounter, SCENARIO, "0x3 1x2 2x5")

The hidden graders use the same scheduler with a larger budget and more scenarios.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap

from ch13lib import grading, sched
from ch13lib.cell import is_self_check_copy, self_check_filename
from ch13lib.lang import FRAME, say

# What the self-checks in the notebook may spend: every schedule with at most one deviation from the default order
# (capped), then a few seeded random ones. Counted in schedules, never in seconds.
PUBLIC_BUDGET = dict(max_preemptions=1, max_schedules=400, random_schedules=20)

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("explore_cell",)


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str  # what it checks, in a few words
    code: str  # the scenario: runs as the main thread, your module is ``m``
    hints: tuple = ()  # (failure kind, what it usually means) pairs
    # A timed wait (sleep, acquire/wait/join with a timeout) may end at any scheduling point: a
    # running thread can always be slower than any sleep. Ordered time (it passes only when every
    # thread waits) would let staggered sleeps order unlocked sections like a lock;
    # only a scenario that checks a wakeup *before* a timeout turns it off.
    early_timeouts: bool = True

    def hint(self, kind: str) -> str:
        return next((h for k, h in self.hints if k == kind), "")


# --------------------------------------------------------------------------------------------
# Helpers the scenarios use (harness code: the scheduler never switches threads inside them)
# --------------------------------------------------------------------------------------------


class Res:
    """A resource made by a pool's factory: named conn1, conn2, ... in the order they are made.

    Each factory is a fresh subclass (see :func:`new_factory`) with its own ``made`` count, so
    this class itself never changes (the grading subject treats a changed harness as tampering)."""

    made = 0

    def __init__(self) -> None:
        cls = type(self)
        cls.made += 1
        self.n = cls.made

    def __repr__(self) -> str:
        return f"conn{self.n}"

    def __hash__(self) -> int:  # no address-based hashing: same order on every run
        return self.n

    def __eq__(self, other) -> bool:
        return self is other


def new_factory():
    """A fresh factory (a class of ``Res``), counting from conn1 again."""
    return type("Res", (Res,), {"made": 0, "__module__": __name__})


class Holders:
    """Who holds what, checked at every acquire: no resource twice, never more than ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.held: list = []
        self.peak = 0

    def got(self, r) -> None:
        assert not any(r is h for h in self.held), (
            f"{r!r} was handed to two threads at once (it was already checked out)"
        )
        self.held.append(r)
        self.peak = max(self.peak, len(self.held))
        assert len(self.held) <= self.size, (
            f"{len(self.held)} resources were checked out at once, but the pool's size is {self.size}"
        )

    def giving_back(self, r) -> None:
        self.held = [h for h in self.held if h is not r]


# --------------------------------------------------------------------------------------------
# Running scenarios and telling what went wrong
# --------------------------------------------------------------------------------------------

HELPERS = {"new_factory": new_factory, "Holders": Holders}  # names every scenario may use


def run(source: str, scenario: Scenario, *, load=None, filename=None, **budget) -> sched.Report:
    """Explore ``scenario`` on the cell ``source`` (or on ``load``, a fresh-module loader)."""
    if load is None:
        src = sched.Source(source, filename or self_check_filename(scenario.name))
        load, filename = src.load, src.filename
    main = sched.scenario_main(load, scenario.code, HELPERS)
    return sched.explore(main, traced={filename}, early_timeouts=scenario.early_timeouts, **budget)


def explore_cell(cell, scenario: Scenario, obj_name: str, **budget) -> dict:
    """The grading subject's side of a hidden test (kit/subject.py runs it beside the answer cell).

    Explores ``scenario`` (a :class:`Scenario` or its fields) on ``cell`` (loaded afresh for every
    schedule) within ``budget`` (explore()'s keywords: schedules and steps, never seconds) and
    reports plain data: ``ok``, how far the search went (``schedules``, ``exhaustive``,
    ``random_schedules``, and ``threads``, the most threads any schedule started), and for a
    failure its ``kind``, ``schedule`` and the feedback the student reads (``message``,
    ``example``; see :func:`feedback`). The judge decides what that is worth."""
    if isinstance(scenario, dict):
        scenario = Scenario(**scenario)
    rep = run(None, scenario, load=cell.load, filename=cell.filename, **budget)
    out = {
        "ok": rep.ok,
        "schedules": rep.schedules,
        "exhaustive": rep.exhaustive,
        "random_schedules": rep.random_schedules,
        "threads": rep.threads,
    }
    if not rep.ok:
        message, example = feedback(scenario, rep.failure, obj_name)
        out.update(
            kind=str(rep.failure.kind),
            schedule=str(rep.failure.schedule),
            message=str(message),
            example=str(example),
            events=list(rep.failure.events),
            scenario=str(scenario.name),
        )
    return out


def picture(rep: dict) -> bytes:
    """The failing interleaving of an explore_cell report as swimlanes (the judge draws it)."""
    events = rep.get("events")
    if type(events) is not list or not events:
        return b""
    from ch13lib.pictures import swimlanes

    return swimlanes(events, (str(rep.get("message", "")).splitlines() or [""])[0])


def feedback(scenario: Scenario, failure: sched.Failure, obj_name: str) -> tuple[str, str]:
    """(message, example) for a failed scenario: what went wrong and how to replay it."""
    hint = scenario.hint(failure.kind)
    if failure.kind == "exception" and isinstance(failure.exc, NotImplementedError):
        return ("not implemented yet: the stub still raises NotImplementedError", "")
    msg = f"scenario '{scenario.name}': {failure.explain()}"
    if hint:
        msg += "\n" + hint
    code = textwrap.indent(scenario.code.strip("\n"), "    ")
    example = (
        f"scenario '{scenario.name}', schedule \"{failure.schedule}\". Replay it in the notebook "
        f"after running your cell:\n"
        f"from ch13lib import sync_checks\n"
        f"SCENARIO = '''\n{code}\n'''\n"
        f"sync_checks.replay({obj_name}, SCENARIO, \"{failure.schedule}\""
        f"{'' if scenario.early_timeouts else ', early_timeouts=False'})"
    )
    return msg, example


def replay(obj, scenario_code: str, schedule: str, early_timeouts: bool = True) -> None:
    """Run your cell (the one that defines ``obj``) on one scenario and one schedule; print the story."""
    src = sched.Source(sched.cell_source(obj), self_check_filename())
    main = sched.scenario_main(src.load, textwrap.dedent(scenario_code), HELPERS)
    failure = sched.replay(main, schedule, traced={src.filename}, early_timeouts=early_timeouts)
    if failure is not None:
        print(failure.explain())


def _stub_functions(tree: ast.Module, names) -> list[str]:
    """The functions ``names`` of a cell, and the methods of its classes ``names``, whose whole body is
    ``raise NotImplementedError`` (after a docstring or ``pass``): the parts of the exercise still to
    write, in the order they appear."""

    def is_stub(fn) -> bool:
        body = [
            st
            for st in fn.body
            if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)) and not isinstance(st, ast.Pass)
        ]
        if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
            return False
        exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"

    out = []
    for node in tree.body:
        if getattr(node, "name", None) not in names:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_stub(node):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef):
            out += [
                f"{node.name}.{f.name}"
                for f in node.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_stub(f)
            ]
    return out


def _top_level_names(tree: ast.Module) -> set:
    """Every name the cell binds at module level (def, class, import, assignment, also inside a
    top-level if/try/with/for; not inside functions or classes)."""
    names = set()

    def visit(node) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(tree)
    return names


def _names(items) -> str:
    items = [f"`{x}`" for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _left_to_do(source: str, required=()) -> str:
    """What the cell still lacks, in words (empty when nothing): the names of ``required`` it does
    not define, and the functions whose body is still the stub's ``raise NotImplementedError()``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    bound = _top_level_names(tree)
    # a name the cell never even mentions (bound some other way, it would still be mentioned)
    missing = [n for n in required if n not in bound and not re.search(rf"\b{re.escape(n)}\b", source)]
    stubs = _stub_functions(tree, required)
    parts = []
    if missing:
        parts.append(
            f"{_names(missing)} {'is' if len(missing) == 1 else 'are'} not defined in this cell "
            f"(the exercise asks for {_names(required)})"
        )
    if stubs:
        parts.append(f"{_names(stubs)} still raise{'s' if len(stubs) == 1 else ''} NotImplementedError (the stub)")
    if not parts:
        return ""
    return (
        f"{'; '.join(parts)}. Write {'it' if len(missing) + len(stubs) == 1 else 'them'}, run the cell, "
        f"then run this check again."
    )


def _raised_in(failure: sched.Failure) -> str:
    """The function of your cell that raised the failure's exception (its innermost frame there)."""
    tb, where = getattr(failure.exc, "__traceback__", None), ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_self_check_copy(code.co_filename):
            where = getattr(code, "co_qualname", code.co_name)
        tb = tb.tb_next
    return where


def _self_check(title: str, obj, scenarios, obj_name: str, required=()) -> bool:
    if grading():
        print(f"{title}: " + FRAME("skipped"))
        return True
    try:
        source = sched.cell_source(obj)
    except ValueError as e:
        print(f"✘ {title}: {e}")
        return False
    todo = _left_to_do(source, required)
    if todo:
        print(f"✘ {title}: not implemented yet: {todo}")
        return False
    lines, ok, lanes = [], True, []  # printed at the end: no ✔ for a cell that turns out to be a stub
    for sc in scenarios:
        rep = run(source, sc, filename=self_check_filename(), **PUBLIC_BUDGET)
        if rep.ok:
            n = rep.schedules - rep.random_schedules
            lines.append(
                f"✔ {sc.name}  ({n} schedule{'s' if n != 1 else ''}: "
                f"{'all' if rep.exhaustive else 'the first'} with ≤{rep.max_preemptions} "
                f"deviation{'s' if rep.max_preemptions != 1 else ''} from the default order"
                f"{f', + {rep.random_schedules} random' if rep.random_schedules else ''})"
            )
            continue
        ok = False
        msg, example = feedback(sc, rep.failure, obj_name)
        if msg.startswith("not implemented yet"):
            where = _raised_in(rep.failure)
            print(
                f"✘ {title}: not implemented yet (the stub still raises NotImplementedError"
                f"{f' in `{where}`' if where else ''})"
            )
            return False
        lines.append(f"✘ {msg}\n\n{example}\n")
        lanes = rep.failure.events
        break
    print("\n".join(lines))
    if not ok and lanes:
        try:
            from ch13lib.pictures import show, swimlanes

            print(
                say(
                    "同一个交错, 画成泳道图 (每个线程一列):",
                    "The same interleaving as swimlanes (one column per thread):",
                )
            )
            show(swimlanes(lanes, msg.splitlines()[0]))
        except Exception as e:  # noqa: BLE001 - no matplotlib here: the story above says it all
            print(FRAME("no_picture", why=type(e).__name__))
    if ok:
        print(f"{title}: " + FRAME("passed"))
    return ok


# --------------------------------------------------------------------------------------------
# The public scenarios
# --------------------------------------------------------------------------------------------

COUNTER_SCENARIOS = [
    Scenario(
        "two threads, two increments each",
        '''
c = m.SafeCounter()
assert c.value == 0, f"a new SafeCounter has value {c.value!r}, expected 0"
def worker():
    for _ in range(2):
        c.increment()
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert c.value == 4, f"2 threads x 2 increments, but value is {c.value}, not 4: an update was lost"
''',
        hints=(
            (
                "check",
                "Two threads read the same old value and both wrote old+1: the read and the "
                "write of `+= 1` must happen under ONE lock, held by every increment.",
            ),
        ),
    ),
    Scenario(
        "count_with_threads(2, 2)",
        '''
result = m.count_with_threads(2, 2)
assert result == 4, f"count_with_threads(2, 2) returned {result!r}, expected 4"
''',
    ),
]

POOL_SCENARIOS = [
    Scenario(
        "size 1, two threads take turns",
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
def worker():
    r = pool.acquire()
    holders.got(r)
    holders.giving_back(r)
    pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert pool.available == 1, f"after every thread gave its resource back, available is {pool.available}, not 1"
''',
        hints=(
            (
                "blocked_at_exit",
                "A thread stayed blocked in acquire() although a resource had been "
                "given back: release() must wake a waiting acquire().",
            ),
        ),
    ),
    Scenario(
        "size 2 admits two holders at once",
        '''
pool = m.ConnectionPool(2, factory=new_factory())
both = threading.Barrier(2)          # each thread waits here until the other one holds a resource too
def worker():
    r = pool.acquire()
    both.wait()
    pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
''',
        hints=(
            (
                "deadlock",
                "Too serial: with size=2 the second thread could not acquire while the first "
                "held a resource. The pool must let `size` threads hold resources at once "
                "(a lock held from acquire() to release() lets only one in).",
            ),
        ),
    ),
    Scenario(
        "a body that raises still gives the resource back",
        '''
pool = m.ConnectionPool(1, factory=new_factory())
try:
    with pool.connection() as conn:
        raise KeyError("boom")
except KeyError:
    pass
assert pool.available == 1, (f"after `with pool.connection()` whose body raised, available is "
                             f"{pool.available}, not 1: the permit leaked (release in a finally)")
r = pool.acquire(timeout=1.0)
pool.release(r)
''',
    ),
]

_WAKE = (
    "A thread waits for ever: a put() or get() that changes the buffer must notify the threads "
    "waiting for that change (with one condition for both kinds of waiters: notify_all)."
)
BUFFER_SCENARIOS = [
    Scenario(
        "capacity 1, one producer, one consumer",
        '''
buf = m.BoundedBuffer(1)
got = []
def producer():
    for i in range(3):
        buf.put(i)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
def consumer():
    for _ in range(3):
        got.append(buf.get())
threads = [threading.Thread(target=consumer), threading.Thread(target=producer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert got == [0, 1, 2], f"the consumer got {got}, expected [0, 1, 2] (every item once, in order)"
''',
        hints=(("blocked_at_exit", _WAKE), ("deadlock", _WAKE)),
    ),
]

BANK_SCENARIOS = [
    Scenario(
        "A->B and B->A at the same time",
        '''
a, b = m.Account(1, 100), m.Account(2, 100)
def t1():
    assert m.transfer(a, b, 10) is True, "transfer(a, b, 10) with enough money must return True"
def t2():
    assert m.transfer(b, a, 20) is True, "transfer(b, a, 20) with enough money must return True"
threads = [threading.Thread(target=t1), threading.Thread(target=t2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert (a.balance, b.balance) == (110, 90), (f"balances {a.balance}, {b.balance}, expected 110, 90: "
                                            f"money was lost or created")
''',
        hints=(
            (
                "deadlock",
                "Each thread took its first account's lock and waits for the other's: take "
                "the two locks in one global order (for example by account id), whatever "
                "the direction of the transfer.",
            ),
        ),
    ),
]


# More public scenarios: the rules the notebook states, each in a small scenario of its own.
# A self-check runs the one-thread ones first (the contract), then the concurrent ones.

COUNTER_WORKERS = Scenario(
    "count_with_threads(2, 2): worker threads, one counter, all joined",
    '''
seen_threads, seen_counters = [], []
plain_increment = m.SafeCounter.increment
def watched(self):
    seen_threads.append(threading.current_thread())
    if not any(self is c for c in seen_counters):
        seen_counters.append(self)
    plain_increment(self)
m.SafeCounter.increment = watched
result = m.count_with_threads(2, 2)
calls = len(seen_threads)
assert calls >= 4, (f"count_with_threads(2, 2) returned after {calls} of its 4 increment() calls: "
                    f"join every worker (t.join(), not a sleep) before reading the count")
assert result == 4, f"count_with_threads(2, 2) returned {result!r}, expected 4"
assert threading.main_thread() not in seen_threads, ("increment() ran in the calling thread: start "
                                                     "the threads and let the workers do the increments")
assert threads_started() >= 1, "count_with_threads(2, 2) started no thread: the workers must be threads"
assert len(seen_counters) == 1, (f"the 4 increments went to {len(seen_counters)} different SafeCounter "
                                 f"objects: every worker must increment the same, ONE counter")
''',
    hints=(
        (
            "check",
            "Make ONE SafeCounter, start all n_threads threads on it, join all of them, then read counter.value.",
        ),
    ),
)

POOL_CONTRACT = [
    Scenario(
        "one thread: size, available, resources reused",
        '''
for bad in (0, -4):
    try:
        m.ConnectionPool(bad)
    except ValueError:
        continue
    raise AssertionError(f"ConnectionPool({bad}) did not raise ValueError: a size below 1 must be refused")
make = new_factory()
pool = m.ConnectionPool(3, factory=make)
assert pool.available == 3, f"a new pool of size 3 says available={pool.available!r}, expected 3"
x = pool.acquire()
y = pool.acquire()
assert isinstance(x, make) and isinstance(y, make), (f"acquire() gave {x!r} and {y!r}: hand out the "
                                                     f"resources that factory() makes")
assert x is not y, f"two acquire() calls in a row both returned {x!r}"
assert pool.available == 1, f"with 2 of 3 resources out, available={pool.available}, expected 1"
pool.release(y)
pool.release(x)
assert pool.available == 3, f"after both came back, available={pool.available}, expected 3"
for _ in range(4):
    pool.release(pool.acquire())
assert make.made <= 3, (f"a pool of size 3 called its factory {make.made} times: make at most size "
                        f"resources, and hand out released ones again")
''',
        hints=(
            (
                "deadlock",
                "One thread could not take a second resource of a pool of size 3: the pool must "
                "let `size` resources out at once (a lock held from acquire() to release() "
                "lets only one out).",
            ),
        ),
    ),
    Scenario(
        "one thread: acquire(timeout) raises TimeoutError",
        '''
pool = m.ConnectionPool(1, factory=new_factory())
r = pool.acquire()
try:
    got = pool.acquire(timeout=0.1)
except TimeoutError:
    pass
else:
    raise AssertionError(f"acquire(timeout=0.1) while every resource was out returned {got!r}: "
                         f"when the time is up it must raise TimeoutError")
assert pool.available == 0, f"after a timed-out acquire, available={pool.available}, expected 0"
pool.release(r)
''',
        hints=(
            (
                "deadlock",
                "acquire(timeout=0.1) waited for ever: hand the timeout to the call that blocks "
                "(Semaphore.acquire(timeout=...) returns False when time is up) and raise "
                "TimeoutError then.",
            ),
        ),
    ),
    Scenario(
        "one thread: a wrong release raises ValueError and changes nothing",
        '''
pool = m.ConnectionPool(1, factory=new_factory())
try:
    pool.release(object())
except ValueError:
    pass
else:
    raise AssertionError("release() of something the pool never handed out did not raise ValueError")
assert pool.available == 1, f"after a refused release, available={pool.available}, expected 1"
r = pool.acquire()
pool.release(r)
try:
    pool.release(r)
except ValueError:
    pass
else:
    raise AssertionError(f"release({r!r}) a second time, after it was given back, did not raise ValueError")
assert pool.available == 1, f"after a refused second release, available={pool.available}, expected 1"
r = pool.acquire(timeout=2.0)
try:
    other = pool.acquire(timeout=0.5)
except TimeoutError:
    pass
else:
    raise AssertionError(f"a pool of size 1 handed out {other!r} while {r!r} was still out: some release() "
                         f"(maybe a refused one) added a permit that no acquire() had taken")
pool.release(r)
''',
        hints=(
            (
                "check",
                "release() must check that the resource is checked out right now, and then give back "
                "exactly one permit; a refused release changes nothing.",
            ),
        ),
    ),
]

POOL_RACES = [
    Scenario(
        "size 1: a waiter woken while the resource is taken again",
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
mine = pool.acquire()
holders.got(mine)
def waiter():
    r = pool.acquire()
    holders.got(r)
    holders.giving_back(r)
    pool.release(r)
t = threading.Thread(target=waiter)
t.start()
settle()                        # the waiter is blocked in acquire() now
holders.giving_back(mine)
pool.release(mine)              # wakes the waiter ...
mine = pool.acquire()           # ... but this thread takes the resource straight back
holders.got(mine)
holders.giving_back(mine)
pool.release(mine)
t.join()
assert pool.available == 1, f"after every thread gave its resource back, available is {pool.available}, not 1"
''',
        hints=(
            (
                "blocked_at_exit",
                "A thread stayed blocked in acquire() although a resource had been "
                "given back: release() must wake a waiting acquire().",
            ),
            (
                "exception",
                "A thread woke up in acquire() and went on, but another thread had taken the "
                "free resource first: re-check in a `while` loop around wait().",
            ),
        ),
    ),
    Scenario(
        "two threads release one resource at once",
        '''
pool = m.ConnectionPool(2, factory=new_factory())
r = pool.acquire()
said = []
def give_back():
    try:
        pool.release(r)
        said.append("released")
    except ValueError:
        said.append("ValueError")
threads = [threading.Thread(target=give_back) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(said) == ["ValueError", "released"], (f"two threads called release({r!r}) for one resource "
    f"that was out: {sorted(said)}; one must succeed and the other raise ValueError")
assert pool.available == 2, f"afterwards available={pool.available}, expected 2"
''',
        hints=(
            (
                "check",
                "Check that the resource is out AND mark it returned in ONE critical section: with "
                "the check in one and the update in another, both releases pass the check.",
            ),
        ),
    ),
]

_WHILE = (
    "A thread woke up from wait() and went on although the buffer was empty (or full) again: "
    "another thread got there first. Re-check the condition in a `while` loop around wait()."
)
BUFFER_MORE = [
    Scenario(
        "one thread: capacity, first in first out, len",
        '''
for bad in (0, -2):
    try:
        m.BoundedBuffer(bad)
    except ValueError:
        continue
    raise AssertionError(f"BoundedBuffer({bad}) did not raise ValueError: a capacity below 1 must be refused")
buf = m.BoundedBuffer(2)
assert len(buf) == 0, f"a new buffer has len {len(buf)}, expected 0"
buf.put("p")
buf.put("q")
assert len(buf) == 2, f"after 2 puts, len is {len(buf)}, expected 2"
first = buf.get()
assert first == "p", f"put p, put q, then get() returned {first!r}: the first item in comes out first"
buf.put(0)
rest = [buf.get(), buf.get()]
assert rest == ["q", 0], f"the next two get() calls returned {rest}, expected ['q', 0] (first in, first out)"
assert len(buf) == 0, f"after taking everything out, len is {len(buf)}, expected 0"
''',
    ),
    Scenario(
        "capacity 1, two consumers and one producer",
        '''
buf = m.BoundedBuffer(1)
got = []
def consumer():
    got.append(buf.get())
def producer():
    for item in (10, 20):
        buf.put(item)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
threads = [threading.Thread(target=consumer), threading.Thread(target=consumer),
           threading.Thread(target=producer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(got) == [10, 20], f"the two consumers got {got}, expected 10 and 20, once each"
''',
        hints=(("blocked_at_exit", _WAKE), ("deadlock", _WAKE), ("exception", _WHILE)),
    ),
    Scenario(
        "capacity 1, two producers, then this thread takes both items",
        '''
buf = m.BoundedBuffer(1)
def producer(item):
    buf.put(item)
    assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
threads = [threading.Thread(target=producer, args=(item,)) for item in ("u", "v")]
for t in threads:
    t.start()
settle()                        # one producer is done, the other waits for room
assert len(buf) <= 1, f"two producers and no consumer yet: the buffer holds {len(buf)} items, its capacity is 1"
got = [buf.get(), buf.get()]
for t in threads:
    t.join()
assert sorted(got) == ["u", "v"], f"the two get() calls returned {got}, expected u and v, once each"
''',
        hints=(
            ("blocked_at_exit", _WAKE),
            ("deadlock", _WAKE),
            ("exception", _WHILE),
            (
                "check",
                "Check for room and add the item in ONE critical section: if put() lets go of the "
                "lock between the two, another producer fills the free slot first.",
            ),
        ),
    ),
    Scenario(
        "capacity 2, two producers at once, then two gets",
        '''
buf = m.BoundedBuffer(2)
def producer(x):
    buf.put(x)
threads = [threading.Thread(target=producer, args=(x,)) for x in ("a", "b")]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert len(buf) == 2, f"two puts into a buffer of capacity 2 left {len(buf)} items in it"
got = sorted([buf.get(), buf.get()], key=str)
assert got == ["a", "b"], f"after two producers put a and b at once, two gets gave {got}: an item was lost"
''',
        hints=(
            (
                "check",
                "Two producers with room for both must not write the same slot: the index (or the "
                "list) they both change needs the lock, even when semaphores count the free slots.",
            ),
        ),
    ),
]

_BOTH_LOCKS = (
    "The check `src.balance >= amount` and the debit that relies on it must happen in ONE "
    "critical section, holding the locks of both accounts."
)
BANK_MORE = [
    Scenario(
        "one thread: paid, refused, to the same account",
        '''
a, b = m.Account(1, 40), m.Account(2, 5)
ok = m.transfer(a, b, 15)
assert ok is True and (a.balance, b.balance) == (25, 20), (f"transfer(a, b, 15) from a balance of 40 "
    f"returned {ok!r} and left balances {a.balance}, {b.balance}; expected True and 25, 20")
ok = m.transfer(b, a, 21)
assert ok is False and (a.balance, b.balance) == (25, 20), (f"transfer(b, a, 21) with only 20 in b "
    f"returned {ok!r} and left balances {a.balance}, {b.balance}; expected False and no change")
ok = m.transfer(a, a, 10)
assert ok is True and a.balance == 25, (f"transfer(a, a, 10) (from an account to itself) returned "
    f"{ok!r} with balance {a.balance}; expected True and no change")
''',
        hints=(
            (
                "deadlock",
                "transfer(a, a, ...) takes the same account's lock twice, and a Lock is not "
                "re-entrant: handle src is dst on its own (or use an RLock).",
            ),
        ),
    ),
    Scenario(
        "two payments from one account that can afford only one",
        '''
a, b = m.Account(1, 9), m.Account(2, 0)
paid = []
def pay():
    paid.append(m.transfer(a, b, 6))
threads = [threading.Thread(target=pay), threading.Thread(target=pay)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert a.balance >= 0, f"account a went negative ({a.balance}): two payments of 6 out of 9 both went through"
assert sorted(paid) == [False, True], f"two payments of 6 out of 9 returned {paid}; expected one True, one False"
assert (a.balance, b.balance) == (3, 6), f"balances {a.balance}, {b.balance}; expected 3, 6"
''',
        hints=(("check", _BOTH_LOCKS),),
    ),
]


def public_scenario(name: str) -> Scenario:
    """The public scenario called ``name`` (the hidden graders pick them by name, not position)."""
    for s in (
        COUNTER_SCENARIOS
        + [COUNTER_WORKERS]
        + POOL_SCENARIOS
        + POOL_CONTRACT
        + POOL_RACES
        + BUFFER_SCENARIOS
        + BUFFER_MORE
        + BANK_SCENARIOS
        + BANK_MORE
    ):
        if s.name == name:
            return s
    raise KeyError(f"no public scenario is called {name!r}")


def check_counter(SafeCounter, count_with_threads=None) -> bool:
    """Self-check of the `counter` cell (pass the class; the whole cell is re-run)."""
    return _self_check(
        "counter",
        SafeCounter,
        COUNTER_SCENARIOS + [COUNTER_WORKERS],
        "SafeCounter",
        ("SafeCounter", "count_with_threads"),
    )


def check_pool(ConnectionPool) -> bool:
    """Self-check of the `semaphore_pool` cell."""
    return _self_check(
        "semaphore_pool",
        ConnectionPool,
        POOL_CONTRACT + POOL_SCENARIOS + POOL_RACES,
        "ConnectionPool",
        ("ConnectionPool",),
    )


def check_buffer(BoundedBuffer) -> bool:
    """Self-check of the `bounded_buffer` cell."""
    return _self_check(
        "bounded_buffer",
        BoundedBuffer,
        BUFFER_MORE[:1] + BUFFER_SCENARIOS + BUFFER_MORE[1:],
        "BoundedBuffer",
        ("BoundedBuffer",),
    )


def check_bank(transfer) -> bool:
    """Self-check of the `bank_transfer` cell (pass `transfer` or `Account`)."""
    return _self_check(
        "bank_transfer", transfer, BANK_MORE[:1] + BANK_SCENARIOS + BANK_MORE[1:], "transfer", ("Account", "transfer")
    )
