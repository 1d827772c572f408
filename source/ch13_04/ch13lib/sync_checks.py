"""Self-checks for notebook 01 (synchronisation primitives), on the deterministic scheduler.

Each check runs small *scenarios* (a few threads using your class) under ``ch13lib.sched``: your
cell is loaded afresh for every schedule, and the scheduler tries the interleavings with the fewest
deviations from the default schedule first. A failure is told as a story in your own lines, with a schedule string you can
replay::

    from ch13lib import sync_checks
    sync_checks.check_counter(SafeCounter, count_with_threads)
    sync_checks.replay(SafeCounter, SCENARIO, "0x3 1x2 2x5")

The hidden graders use the same scheduler with a larger budget and more scenarios.
"""
from __future__ import annotations

import dataclasses
import textwrap

from ch13lib import grading, sched

# What the self-checks in the notebook may spend: every schedule with at most one deviation from the default order
# (capped), then a few seeded random ones. Counted in schedules, never in seconds.
PUBLIC_BUDGET = dict(max_preemptions=1, max_schedules=400, random_schedules=20)

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("explore_cell",)


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str                 # what it checks, in a few words
    code: str                 # the scenario: runs as the main thread, your module is ``m``
    hints: tuple = ()         # (failure kind, what it usually means) pairs
    early_timeouts: bool = False

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

    def __hash__(self) -> int:          # no address-based hashing: same order on every run
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
        assert not any(r is h for h in self.held), \
            f"{r!r} was handed to two threads at once (it was already checked out)"
        self.held.append(r)
        self.peak = max(self.peak, len(self.held))
        assert len(self.held) <= self.size, \
            f"{len(self.held)} resources were checked out at once, but the pool's size is {self.size}"

    def giving_back(self, r) -> None:
        self.held = [h for h in self.held if h is not r]


# --------------------------------------------------------------------------------------------
# Running scenarios and telling what went wrong
# --------------------------------------------------------------------------------------------

FILENAME = "<your cell {}>"
HELPERS = {"new_factory": new_factory, "Holders": Holders}     # names every scenario may use


def run(source: str, scenario: Scenario, *, load=None, filename=None, **budget) -> sched.Report:
    """Explore ``scenario`` on the cell ``source`` (or on ``load``, a fresh-module loader)."""
    if load is None:
        src = sched.Source(source, filename or FILENAME.format(scenario.name))
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
    out = {"ok": rep.ok, "schedules": rep.schedules, "exhaustive": rep.exhaustive,
           "random_schedules": rep.random_schedules, "threads": rep.threads}
    if not rep.ok:
        message, example = feedback(scenario, rep.failure, obj_name)
        out.update(kind=str(rep.failure.kind), schedule=str(rep.failure.schedule),
                   message=str(message), example=str(example))
    return out


def feedback(scenario: Scenario, failure: sched.Failure, obj_name: str) -> tuple[str, str]:
    """(message, example) for a failed scenario: what went wrong and how to replay it."""
    hint = scenario.hint(failure.kind)
    if failure.kind == "exception" and isinstance(failure.exc, NotImplementedError):
        return ("not implemented yet: the stub still raises NotImplementedError", "")
    msg = f"scenario '{scenario.name}': {failure.explain()}"
    if hint:
        msg += "\n" + hint
    code = textwrap.indent(scenario.code.strip("\n"), "    ")
    example = (f"scenario '{scenario.name}', schedule \"{failure.schedule}\". Replay it in the notebook "
               f"after running your cell:\n"
               f"from ch13lib import sync_checks\n"
               f"SCENARIO = '''\n{code}\n'''\n"
               f"sync_checks.replay({obj_name}, SCENARIO, \"{failure.schedule}\""
               f"{', early_timeouts=True' if scenario.early_timeouts else ''})")
    return msg, example


def replay(obj, scenario_code: str, schedule: str, early_timeouts: bool = False) -> None:
    """Run your cell (the one that defines ``obj``) on one scenario and one schedule; print the story."""
    src = sched.Source(sched.cell_source(obj), "<your cell>")
    main = sched.scenario_main(src.load, textwrap.dedent(scenario_code), HELPERS)
    failure = sched.replay(main, schedule, traced={src.filename}, early_timeouts=early_timeouts)
    if failure is not None:
        print(failure.explain())


def _self_check(title: str, obj, scenarios, obj_name: str) -> bool:
    if grading():
        print(f"{title}: self-check skipped while grading (the hidden tests decide).")
        return True
    try:
        source = sched.cell_source(obj)
    except ValueError as e:
        print(f"✘ {title}: {e}")
        return False
    ok = True
    for sc in scenarios:
        rep = run(source, sc, filename="<your cell>", **PUBLIC_BUDGET)
        if rep.ok:
            n = rep.schedules - rep.random_schedules
            print(f"✔ {sc.name}  ({n} schedule{'s' if n != 1 else ''}: "
                  f"{'all' if rep.exhaustive else 'the first'} with ≤{rep.max_preemptions} "
                  f"deviation{'s' if rep.max_preemptions != 1 else ''} from the default order"
                  f"{f', + {rep.random_schedules} random' if rep.random_schedules else ''})")
            continue
        ok = False
        msg, example = feedback(sc, rep.failure, obj_name)
        if msg.startswith("not implemented yet"):
            print(f"✘ {title}: not implemented yet (the stub still raises NotImplementedError)")
            return False
        print(f"✘ {msg}\n\n{example}\n")
        break
    if ok:
        print(f"{title}: all self-checks passed. The hidden tests try more scenarios and more schedules.")
    return ok


# --------------------------------------------------------------------------------------------
# The public scenarios
# --------------------------------------------------------------------------------------------

COUNTER_SCENARIOS = [
    Scenario("two threads, two increments each", '''
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
''', hints=(("check", "Two threads read the same old value and both wrote old+1: the read and the "
                      "write of `+= 1` must happen under ONE lock, held by every increment."),)),
    Scenario("count_with_threads(2, 2)", '''
result = m.count_with_threads(2, 2)
assert result == 4, f"count_with_threads(2, 2) returned {result!r}, expected 4"
'''),
]

POOL_SCENARIOS = [
    Scenario("size 1, two threads take turns", '''
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
''', hints=(("blocked_at_exit", "A thread stayed blocked in acquire() although a resource had been "
                                "given back: release() must wake a waiting acquire()."),)),
    Scenario("size 2 admits two holders at once", '''
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
''', hints=(("deadlock", "Too serial: with size=2 the second thread could not acquire while the first "
                         "held a resource. The pool must let `size` threads hold resources at once "
                         "(a lock held from acquire() to release() lets only one in)."),)),
    Scenario("a body that raises still gives the resource back", '''
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
'''),
]

_WAKE = ("A thread waits for ever: a put() or get() that changes the buffer must notify the threads "
         "waiting for that change (with one condition for both kinds of waiters: notify_all).")
BUFFER_SCENARIOS = [
    Scenario("capacity 1, one producer, one consumer", '''
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
''', hints=(("blocked_at_exit", _WAKE), ("deadlock", _WAKE))),
]

BANK_SCENARIOS = [
    Scenario("A->B and B->A at the same time", '''
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
''', hints=(("deadlock", "Each thread took its first account's lock and waits for the other's: take "
                         "the two locks in one global order (for example by account id), whatever "
                         "the direction of the transfer."),)),
]


def public_scenario(name: str) -> Scenario:
    """The public scenario called ``name`` (the hidden graders pick them by name, not position)."""
    for s in COUNTER_SCENARIOS + POOL_SCENARIOS + BUFFER_SCENARIOS + BANK_SCENARIOS:
        if s.name == name:
            return s
    raise KeyError(f"no public scenario is called {name!r}")


def check_counter(SafeCounter, count_with_threads=None) -> None:
    """Self-check of the `counter` cell (pass the class; the whole cell is re-run)."""
    _self_check("counter", SafeCounter, COUNTER_SCENARIOS, "SafeCounter")


def check_pool(ConnectionPool) -> None:
    """Self-check of the `semaphore_pool` cell."""
    _self_check("semaphore_pool", ConnectionPool, POOL_SCENARIOS, "ConnectionPool")


def check_buffer(BoundedBuffer) -> None:
    """Self-check of the `bounded_buffer` cell."""
    _self_check("bounded_buffer", BoundedBuffer, BUFFER_SCENARIOS, "BoundedBuffer")


def check_bank(transfer) -> None:
    """Self-check of the `bank_transfer` cell (pass `transfer` or `Account`)."""
    _self_check("bank_transfer", transfer, BANK_SCENARIOS, "transfer")
