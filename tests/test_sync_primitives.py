"""Direct tests of notebook 01's graders (counter, semaphore_pool, bounded_buffer, bank_transfer).

Every catalogue file is graded in-process with ``graders.load_grader(gid).run(source)``: a
``# verdict: pass`` file must get full marks, a ``# verdict: fail`` file must lose points with
every ``# message:`` in its feedback. Verdicts must not change between runs. The scheduler itself
is tested on tiny programs, including that a plain unlocked ``+=`` is caught with the public
(release) budget and that a failure's schedule replays to the same failure.
"""

from __future__ import annotations

import os
import re

import pytest

import graders  # first: it puts source/ch13_04 on sys.path (ch13lib is not part of the installed kit)
from ch13lib import sched, sync_checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GRADE_IDS = ["counter", "semaphore_pool", "bounded_buffer", "bank_transfer"]
RACE = sync_checks.public_scenario("two threads, two increments each")  # by name: order may change


def grade(gid, source):
    return list(graders.load_grader(gid).run(source))


# The catalogues themselves are graded once, for every grade_id, by tests/test_catalogues.py.


@pytest.mark.parametrize("gid", GRADE_IDS)
def test_points_match_notebook(gid):
    nbformat = pytest.importorskip("nbformat")
    from kit.answers import answer_cells, hidden_test_cells

    nb = nbformat.read(os.path.join(ROOT, "source", "ch13_04", "01_sync_primitives.ipynb"), as_version=4)
    assert gid in answer_cells(nb)
    points = hidden_test_cells(nb)[gid].metadata["nbgrader"]["points"]
    assert points == graders.load_grader(gid).max_points


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here.


ONE_WORKER = """
import threading
class SafeCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._value = 0
    def increment(self):
        with self._lock:
            self._value += 1
    @property
    def value(self):
        with self._lock:
            return self._value
def count_with_threads(n_threads, n_increments):
    counter = SafeCounter()
    def work():
        for _ in range(n_threads * n_increments):
            counter.increment()
    t = threading.Thread(target=work)
    t.start()
    t.join()
    return counter.value
"""


def test_one_worker_for_all_threads_is_caught_by_the_judge():
    """The thread count of count_with_threads(3, 1) in the default schedule comes back from the
    subject as a number; the judge (graders/counter.py) decides that 1 is not 3."""
    results = {r.test: r for r in grade("counter", ONE_WORKER)}
    assert results["no_lost_update"].passed
    assert not results["count_with_threads"].passed
    assert "started 1 thread(s), expected 3" in results["count_with_threads"].message


def test_explore_cell_reports_plain_data():
    """The subject's side of the graders returns what kit.wire can send: the verdict of the search,
    and for a failure the feedback the student reads."""
    from kit import wire
    from kit.harnesses.sync_checks import explore_cell
    from kit.subject import Cell

    race = sync_checks.public_scenario("two threads, two increments each")
    bad = explore_cell(Cell("counter", UNLOCKED), race, "SafeCounter", **sync_checks.PUBLIC_BUDGET)
    wire.encode(bad)
    assert bad["ok"] is False and bad["kind"] == "check" and "an update was lost" in bad["message"]
    assert f'sync_checks.replay(SafeCounter, SCENARIO, "{bad["schedule"]}")' in bad["example"]
    good = explore_cell(Cell("counter", ONE_WORKER), race, "SafeCounter", **sync_checks.PUBLIC_BUDGET)
    wire.encode(good)
    assert good["ok"] is True and "message" not in good and good["threads"] == 2
    with pytest.raises(KeyError):
        sync_checks.public_scenario("no such scenario")


# A wrong answer whose failure is a deadlock told with a trace of reads, writes, waits and wakeups.
SHARED_CONDITION = "wrong_notify_one_shared_condition"
ENGLISH_VERBS = ("wrote", "read", "acquired", "released", "waits on", "woke from", "notified", "blocked:", "line ")


def _failed_message(monkeypatch, language: str, gid: str, name: str) -> str:
    """The first failing test's message for catalogue answer ``name``, graded under ``language``
    (CH13_LANG: the grading subject is told it through the environment)."""
    from graders._catalogue import entries

    monkeypatch.setenv("CH13_LANG", language)
    source = next(e.source for e in entries(gid) if e.name == name)
    return next(r for r in grade(gid, source) if not r.passed).message


def _trace(message: str) -> list[str]:
    """The trace's lines of a message: a thread's name, then its step."""
    return [line for line in message.splitlines() if re.match(r"  (main|T\d+) {2,}\S", line)]


def test_a_failure_is_told_in_chinese_under_zh(monkeypatch):
    message = _failed_message(monkeypatch, "zh", "bounded_buffer", SHARED_CONDITION)
    assert "场景 '容量为 1, 两个消费者, 然后一个放入两个物品的生产者'" in message, message
    assert "scenario '" not in message and "capacity 1" not in message
    trace = _trace(message)
    assert len(trace) > 10, message
    assert "main  第  16 行 self._capacity = capacity" in trace[0] and trace[0].endswith("写入 self._capacity = 1")
    steps = "\n".join(trace)
    for verb in (
        "读取 self._items = deque([])",
        "获得 RLock-1",
        "释放 RLock-1",
        "在 Condition-1 上等待 (释放了 RLock-1)",
    ):
        assert verb in steps, verb
    assert "阻塞: 等待 Condition-1 上的一次 notify" in steps and "通知了 Condition-1 的 1 个等待者" in steps
    for line in trace:
        # the thread, its line (第 N 行) and the code's text, as the student wrote it, then the step
        told = re.fullmatch(r"  \S+ +(?:第 +\d+ 行 .{40}|\s{50})  (.*)", line)
        assert told is not None, line
        assert not any(verb in told.group(1) for verb in ENGLISH_VERBS), line


def test_a_failure_is_told_in_english_under_en(monkeypatch):
    message = _failed_message(monkeypatch, "en", "bounded_buffer", SHARED_CONDITION)
    assert "scenario 'capacity 1, two consumers, then a producer of two items': deadlock" in message, message
    assert not re.search(r"[\u4e00-\u9fff]", message), message
    trace = _trace(message)
    assert trace[0] == ("  main  line 16  self._capacity = capacity                 wrote self._capacity = 1"), trace[0]
    steps = "\n".join(trace)
    for verb in (
        "read self._items = deque([])",
        "acquired RLock-1",
        "released RLock-1",
        "waits on Condition-1 (released RLock-1)",
        "woke from Condition-1 and re-acquired RLock-1",
        "notified 1 waiter of Condition-1",
        "blocked: a notify on Condition-1",
    ):
        assert verb in steps, verb
    assert re.search(r"^  T\d +finished$", steps, re.M), steps


def test_under_both_the_scenario_is_named_in_each_language_and_the_trace_once(monkeypatch):
    message = _failed_message(monkeypatch, "both", "bounded_buffer", SHARED_CONDITION)
    assert "场景 '容量为 1, 两个消费者, 然后一个放入两个物品的生产者': 死锁" in message, message
    assert "scenario 'capacity 1, two consumers, then a producer of two items': deadlock" in message
    trace = _trace(message)
    assert trace[0].endswith("wrote self._capacity = 1") and sum("line 16 " in line for line in trace) == 1
    assert not any(re.search(r"[\u4e00-\u9fff]", line) for line in trace), trace


# ---- the scheduler on its own ---------------------------------------------------------------

UNLOCKED = """
class SafeCounter:
    def __init__(self):
        self.value = 0
    def increment(self):
        self.value += 1
"""


def test_public_budget_catches_plain_unlocked_increment():
    rep = sync_checks.run(UNLOCKED, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check"
    assert rep.schedules <= 10, rep.schedules
    story = rep.failure.story
    # the lost update, told in the student's own line
    assert "T1" in story and "T2" in story and "read self.value = 0" in story
    assert story.count("wrote self.value = 1") >= 2


# The same unlocked read-modify-write, its write (or read) made by a call or behind an operator:
# no STORE opcode in sight, so the scheduler must make the call itself the scheduling point.
HIDDEN_WRITES = {
    "setattr": 'setattr(self, "value", self.value + 1)',
    "object.__setattr__": 'object.__setattr__(self, "value", getattr(self, "value") + 1)',
    "operator.setitem": 'operator.setitem(vars(self), "value", self.value + 1)',
    "lazy map in list()": 'list(map(setattr, [self], ["value"], [self.value + 1]))',
    "method trampoline": "self._set(self.value + 1)",
}


@pytest.mark.parametrize("write", HIDDEN_WRITES.values(), ids=list(HIDDEN_WRITES))
def test_a_write_through_a_call_is_a_scheduling_point(write):
    source = (
        "import functools, operator, threading\n\n\n"
        "class SafeCounter:\n"
        "    _set = functools.partialmethod(setattr, 'value')\n\n"
        "    def __init__(self):\n        self.value = 0\n\n"
        f"    def increment(self):\n        {write}\n"
    )
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check", rep
    assert "T1" in rep.failure.story and "T2" in rep.failure.story


# A dunder method the interpreter calls from C (``box[k] = v`` runs __setitem__, ``if x:`` __bool__,
# ``{x}`` __hash__, ``-x`` __neg__, ``with x:`` __enter__) that is no Python code runs out of any
# trace's sight, so an unlocked update through one goes unseen: such a class is refused where it is made.
HIDDEN_DUNDERS = {
    "operator trampoline": ("__lshift__ = functools.partialmethod(setattr, 'value')", "self << (self.value + 1)"),
    "__setitem__": ("__setitem__ = functools.partial(setattr)", "self[self] = 1"),
    "__bool__": ("__bool__ = functools.partial(operator.truth, 1)", "bool(self)"),
    "__neg__": ("__neg__ = staticmethod(functools.partial(next, iter([1])))", "-self"),
    "set at run time": ("", "type(self).__neg__ = functools.partial(next, iter([1]))"),
    "setattr at run time": ("", "setattr(type(self), '__neg__', functools.partial(next, iter([1])))"),
    "type() with a namespace": ("", "type('Box', (), {'__neg__': functools.partial(next, iter([1]))})"),
}


@pytest.mark.parametrize("body,use", HIDDEN_DUNDERS.values(), ids=list(HIDDEN_DUNDERS))
def test_a_dunder_written_in_c_is_refused(body, use):
    source = (
        "import functools, operator, threading\n\n\n"
        f"class SafeCounter:\n    {body}\n\n"
        "    def __init__(self):\n        self.value = 0\n\n"
        f"    def increment(self):\n        {use}\n        self.value += 1\n"
    )
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind in ("exception", "refused"), rep  # a class statement raises TypeError
    assert "dunder method" in rep.failure.message, rep.failure.message


def test_honest_dunders_are_not_refused():
    """def methods, properties, staticmethods, ``__hash__ = None`` or object's own, ``__slots__``: fine."""
    source = (
        "import threading\n\n\nclass SafeCounter:\n"
        "    __slots__ = ('value', '_lock')\n"
        "    __hash__ = object.__hash__\n\n"
        "    def __init__(self):\n        self.value = 0\n        self._lock = threading.Lock()\n\n"
        "    def __eq__(self, other):\n        return self is other\n\n"
        "    __enter__ = lambda self: self._lock.__enter__()\n\n"
        "    def __exit__(self, *exc):\n        self._lock.release()\n\n"
        "    def increment(self):\n        with self:\n            self.value += 1\n"
    )
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert rep.ok, rep


# The write made by C code that no call reaches: a ``map(setattr, ...)`` built before the read and
# drained after it by an opcode. Every drain is an access to an unknown location.
DRAINS = {
    "for": "for _ in w:\n            pass",
    "for, the name rebound": "for _ in w:\n            w = ()",
    "unpacking": "(_,) = w",
    "starred unpacking": "(*_,) = w",
    "a loop's target": "for (_,) in [w]:\n            pass",
    "[*w]": "_ = [*w]",
    "{*w}": "_ = {*w}",
    "0 in w": "_ = 0 in w",
    "f(*w), f Python": "_noop(*w)",
    "a comprehension": "_ = [x for x in w]",
    "a nested comprehension": "_ = [y for x in [1] for y in w]",
    "a generator expression": "_ = _noop(*(x for x in w))",
    "yield from": "for _ in _gen(w):\n            pass",
    "zip": "for _ in zip(w):\n            pass",
    "enumerate": "for i, _ in enumerate(w):\n            pass",
}


@pytest.mark.parametrize("drain", DRAINS.values(), ids=list(DRAINS))
def test_a_write_drained_by_c_code_is_a_scheduling_point(drain):
    source = (
        "import threading\n\n\ndef _noop(*a):\n    return a\n\n\ndef _gen(w):\n    yield from w\n\n\n"
        "class SafeCounter:\n    def __init__(self):\n        self.value = 0\n\n"
        "    def increment(self):\n        box = [0]\n"
        "        w = map(setattr, (self,), ('value',), box)\n"
        "        box[0] = self.value + 1\n"
        f"        {drain}\n"
    )
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check", rep


LOOPS = """
import threading

_STEPS = (1,)


class SafeCounter:
    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()

    def increment(self):
        for step in _STEPS:
            for _ in range(step):
                pair = (step, {"one": 1})
                a, b = pair
                for k in b:
                    with self._lock:
                        self.value += a + len([*pair, *b, *[x for x in pair]]) - 5
"""


def test_loops_over_plain_values_add_no_points():
    """Iterating, unpacking and splicing builtin values runs no code: no point, and no more schedules."""
    plain = sync_checks.run(LOOPS, RACE, **sync_checks.PUBLIC_BUDGET)
    bare = LOCKED_SETATTR.replace('setattr(self, "value", self.value + 1)', "self.value += 1")
    bare = sync_checks.run(bare, RACE, **sync_checks.PUBLIC_BUDGET)
    assert plain.ok and bare.ok
    assert plain.schedules == bare.schedules, (plain.schedules, bare.schedules)


STAGGERED = """
import itertools
import threading
import time

_turns = itertools.count(1)


class SafeCounter:
    def __init__(self):
        self.value = 0

    def increment(self):
        time.sleep(next(_turns) * 1e-9)  # each caller waits a little longer: no lock
        self.value = self.value + 1
"""


@pytest.mark.parametrize("wait", ["time.sleep", "threading.Event().wait"])
def test_staggered_sleeps_do_not_order_threads(wait):
    """A running thread can be slower than any sleep: a wait may end at any point."""
    source = STAGGERED.replace("time.sleep(", wait + "(")
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check", rep


# The red team's unlocked counters (tests/redteam, graded there through nbgrader): each hides its
# read-modify-write from the scheduler in another way; on the scheduler alone each must lose an update.
HIDDEN_COUNTERS = [
    "c_counter_setattr_write",
    "c_counter_len_list",
    "c_counter_print_sink",
]


@pytest.mark.parametrize("name", HIDDEN_COUNTERS)
def test_the_red_teams_hidden_counters_lose_an_update(name):
    with open(os.path.join(ROOT, "tests", "redteam", name + ".py"), encoding="utf-8") as f:
        source = f.read()
    rep = sync_checks.run(source, sync_checks.COUNTER_WORKERS, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check", rep


def test_library_code_is_no_more_atomic_than_yours():
    """collections.Counter.update is Python (a read, then a write): the scheduler watches it."""
    source = (
        "import collections\n\n\nclass SafeCounter:\n"
        "    def __init__(self):\n        self.counts = collections.Counter()\n\n"
        "    def increment(self):\n        self.counts.update(n=1)\n\n"
        "    @property\n    def value(self):\n        return self.counts['n']\n"
    )
    rep = sync_checks.run(source, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok and rep.failure.kind == "check", rep
    assert "(in Counter.update)" in rep.failure.story  # told at the student's line, naming the library code


LOCKED_SETATTR = """
import threading


class SafeCounter:
    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()

    def increment(self):
        with self._lock:
            setattr(self, "value", self.value + 1)
"""


def test_calls_under_one_lock_add_no_points():
    """The lockset rule holds for calls too: the same setattr under the lock is no scheduling point."""
    locked = sync_checks.run(LOCKED_SETATTR, RACE, **sync_checks.PUBLIC_BUDGET)
    plain = LOCKED_SETATTR.replace('setattr(self, "value", self.value + 1)', "self.value += 1")
    plain = sync_checks.run(plain, RACE, **sync_checks.PUBLIC_BUDGET)
    assert locked.ok and plain.ok
    assert locked.schedules == plain.schedules


def test_the_scheduler_is_one_set_of_files():
    """sched.py and its _sched_*.py parts are the scheduler's own code: a frame or a callee in any of
    them is never the code under test's. A part left out of the one set would add scheduling points
    (its models' calls, its frames) and change every search."""
    import glob
    import sys

    from ch13lib import _sched_code

    files = {sched.__file__, *glob.glob(os.path.join(os.path.dirname(sched.__file__), "_sched_*.py"))}
    assert _sched_code._SCHED_FILES == files
    assert {sys.modules[m].__file__ for m in _sched_code._SCHED_MODULES} == files
    assert _sched_code._SCHED_FILES <= _sched_code._TRUSTED_CODE
    assert _sched_code._SCHED_MODULES <= _sched_code._TRUSTED_MODULES


def test_schedule_replays_to_the_same_failure():
    rep = sync_checks.run(UNLOCKED, RACE, **sync_checks.PUBLIC_BUDGET)
    src = sched.Source(UNLOCKED, "<replayed>")
    main = sched.scenario_main(src.load, RACE.code, sync_checks.HELPERS)
    again = sched.replay(main, rep.failure.schedule, traced={src.filename}, quiet=True)
    assert again is not None and again.message == rep.failure.message


def test_deadlock_reports_the_cycle_with_lines():
    src = """
import threading
a, b = threading.Lock(), threading.Lock()
def one():
    with a:
        with b:
            pass
def two():
    with b:
        with a:
            pass
"""
    code = """
ts = [threading.Thread(target=m.one), threading.Thread(target=m.two)]
for t in ts: t.start()
for t in ts: t.join()
"""
    rep = sync_checks.run(src, sync_checks.Scenario("ab-ba", code), max_preemptions=2)
    assert rep.failure is not None and rep.failure.kind == "deadlock"
    assert "wait-for cycle" in rep.failure.message and "line 6: with b:" in rep.failure.message


def test_busy_wait_is_a_livelock():
    src = """
class Flag:
    def __init__(self):
        self.up = False
    def wait_up(self):
        while not self.up:
            pass
"""
    code = """
f = m.Flag()
t = threading.Thread(target=f.wait_up)
t.start()
t.join()
"""
    rep = sync_checks.run(src, sync_checks.Scenario("spin", code), max_preemptions=1, max_steps=2000)
    assert rep.failure is not None and rep.failure.kind in ("livelock", "deadlock")


def test_virtual_time_timeouts():
    src = """
import threading, time
def slow_wait():
    e = threading.Event()
    t0 = time.monotonic()
    ok = e.wait(timeout=30)
    return ok, time.monotonic() - t0
"""
    holder = {}
    code = "result = m.slow_wait()"
    s = sched.Source(src, "<t>")
    rep = sched.explore(
        sched.scenario_main(s.load, code), traced={s.filename}, check=lambda r: holder.setdefault("r", r) and None
    )
    assert rep.ok and holder["r"] == (False, 30.0)  # 30 virtual seconds, no real waiting


def test_patches_are_undone_exactly():
    """The sandbox fails a test whose run leaves threading/time/queue attributes replaced."""
    import concurrent.futures.thread as cf
    import queue
    import threading
    import time

    mods = [threading, time, queue, cf]
    before = [dict(vars(m)) for m in mods]
    rep = sync_checks.run(UNLOCKED, RACE, **sync_checks.PUBLIC_BUDGET)
    assert not rep.ok
    for m, b in zip(mods, before):
        assert [k for k in b if vars(m).get(k) is not b[k]] == [], m.__name__


def test_timer_runs_on_virtual_time():
    src = """
import threading
fired = []
def later():
    t = threading.Timer(5.0, fired.append, args=("x",))
    t.start()
    t.join()
    return list(fired)
"""
    s = sched.Source(src, "<timer>")
    holder = {}
    rep = sched.explore(
        sched.scenario_main(s.load, "result = m.later()"),
        traced={s.filename},
        check=lambda r: holder.setdefault("r", r) and None,
    )
    assert rep.ok and holder["r"] == ["x"]
